#!/usr/bin/env bash
# JSON (issue 4): bench/suites/json.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" json "$@"
