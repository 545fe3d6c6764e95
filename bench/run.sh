#!/usr/bin/env bash
# Download throughput (issues 2 and 15): bench/suites/download.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" download "$@"
