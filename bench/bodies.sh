#!/usr/bin/env bash
# Request bodies (issue 5): bench/suites/bodies.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" bodies "$@"
