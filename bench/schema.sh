#!/usr/bin/env bash
# JSON Schema validation (issue 18): bench/suites/schema.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" schema "$@"
