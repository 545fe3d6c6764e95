#!/usr/bin/env bash
# HTTPS (issue 31): bench/suites/https.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" https "$@"
