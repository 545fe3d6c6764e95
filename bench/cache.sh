#!/usr/bin/env bash
# HTTP cache (issue 32): bench/suites/cache.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" cache "$@"
