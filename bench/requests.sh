#!/usr/bin/env bash
# Request rates and memory per transfer (issue 6): bench/suites/requests.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" requests "$@"
