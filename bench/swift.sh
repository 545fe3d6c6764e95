#!/usr/bin/env bash
# Swift clients (issue 31): bench/suites/swift.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" swift "$@"
