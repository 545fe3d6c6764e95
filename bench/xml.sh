#!/usr/bin/env bash
# XML (issue 16): bench/suites/xml.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" xml "$@"
