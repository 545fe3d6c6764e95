#!/usr/bin/env bash
# Swift OpenAPI transport (issue 30): bench/suites/openapi.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" openapi "$@"
