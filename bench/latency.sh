#!/usr/bin/env bash
# Streaming latency (issue 27): bench/suites/latency.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" latency "$@"
