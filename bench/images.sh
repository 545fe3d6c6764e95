#!/usr/bin/env bash
# Decoded images (issue 17): bench/suites/images.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" images "$@"
