#!/usr/bin/env bash
# Adapters (issue 30): bench/suites/adapters.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" adapters "$@"
