#!/usr/bin/env bash
# HTTP/2 multiplexing (issue 31): bench/suites/h2mux.py on the harness (bench/harness). Knobs: bench/README.md.
exec "${PYTHON:-python3}" "$(dirname "$0")/bench.py" h2mux "$@"
