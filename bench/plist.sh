#!/usr/bin/env bash
# Property lists (issue 16): bench/suites/plist.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" plist "$@"
