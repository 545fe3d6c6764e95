#!/usr/bin/env bash
# Native asyncio (issue 15): bench/suites/async.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" async "$@"
