#!/usr/bin/env bash
# Record streams (issue 19): bench/suites/records.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" records "$@"
