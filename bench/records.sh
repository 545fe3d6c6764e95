#!/usr/bin/env bash
# Record-stream benchmark (issue 19): an NDJSON body (≈ 100 MB of small records) served by a local
# nginx, read record by record from Python by libhttpcontent (client.iter_json_lines, the
# hc.JSONLines handler) and by requests' iter_lines() + json.loads / orjson.loads per line, and
# as text lines (client.iter_lines vs requests iter_lines); interleaved round-robin in one run,
# with the peak RSS growth of each. Writes the medians and ratios into the section
# "## Record streams (issue 19)" of BENCHMARKS.md. The harness is json.sh's (bench/lib.sh).
#
#   bash bench/records.sh
#
# Knobs (environment): BENCH_RECORDS_MB (100), BENCH_ROUNDS (5), BENCH_COUNT (1),
# BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1), BENCH_OUTPUT (BENCHMARKS.md), BENCH_TIMEOUT (300),
# BENCH_LIBDIR (build), BENCH_ONLY (contestants to run, default all), PYTHON (python3).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_TAG=records-bench
. "$HERE/lib.sh"
SIZE_MB=${BENCH_RECORDS_MB:-100}
ROUNDS=${BENCH_ROUNDS:-5}
COUNT=${BENCH_COUNT:-1}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
OUTPUT=${BENCH_OUTPUT:-$ROOT/BENCHMARKS.md}
STEP_TIMEOUT=${BENCH_TIMEOUT:-300}
ONLY=${BENCH_ONLY:-}

bench_need_nginx
bench_need_tools
bench_need_library
bench_pin nginx client
bench_make_tmp recordsbench

# --- The file ---------------------------------------------------------------------------------
# One record per line: {"id": i, "name": "item i", "tags": ["a", "b"], "value": i*1.5, "ok": true}
mkdir -p "$TMP/www"
chmod 755 "$TMP/www"
bench_log "writing a ${SIZE_MB} MiB NDJSON file"
read -r EXPECTED ITEMS < <("$PYTHON" - "$TMP/www/data.ndjson" "$SIZE_MB" <<'PY'
import sys
path, limit = sys.argv[1], int(sys.argv[2]) * 1048576
size, i, parts = 0, 0, []
with open(path, "w") as f:
    while size < limit:
        s = '{"id": %d, "name": "item %d", "tags": ["a", "b"], "value": %r, "ok": true}\n' % (i, i, i * 1.5)
        parts.append(s)
        size += len(s)
        i += 1
        if len(parts) >= 10000:
            f.write("".join(parts))
            parts = []
    f.write("".join(parts))
print(size, i)
PY
)
chmod 644 "$TMP/www/data.ndjson"
[ "$(stat -c %s "$TMP/www/data.ndjson")" = "$EXPECTED" ] || bench_die "the NDJSON file is not $EXPECTED bytes"
bench_log "  $EXPECTED bytes, $ITEMS records"

bench_start_nginx http="types { application/x-ndjson ndjson; }"
URL="http://127.0.0.1:$PORT/data.ndjson"
bench_log "nginx $NGINX_VERSION serving $URL (pid $BENCH_SERVER_PID)"
bench_snapshot
PYPATH="$TMP/py"

# Contestants: id|command. The command gets URL COUNT EXPECTED_BYTES EXPECTED_RECORDS appended.
CONTESTANTS=(
    "hc-iter|$PYTHON $HERE/records_bench.py hc-iter"
    "hc-handler|$PYTHON $HERE/records_bench.py hc-handler"
    "requests-json|$PYTHON $HERE/records_bench.py requests-json"
    "requests64k-json|$PYTHON $HERE/records_bench.py requests64k-json"
    "requests-orjson|$PYTHON $HERE/records_bench.py requests-orjson"
    "hc-lines|$PYTHON $HERE/records_bench.py hc-lines"
    "requests-lines|$PYTHON $HERE/records_bench.py requests-lines"
)

measure() {
    local id=$1 count=$2 entry cmd="" out
    for entry in "${CONTESTANTS[@]}"; do
        [ "${entry%%|*}" = "$id" ] && cmd=${entry#*|}
    done
    # shellcheck disable=SC2086  # cmd is a word list
    out=$(bench_run_client "$id" $cmd "$URL" "$count" "$EXPECTED" "$ITEMS") || return
    bench_mbps "$id" "$out" rss
}

# --- Warm-up, then the rounds (bench/lib.sh) --------------------------------------------------
bench_warm_up "${CONTESTANTS[@]%%|*}"
bench_rounds

# --- Report -----------------------------------------------------------------------------------
bench_export_meta
BENCH_META_SIZE=$EXPECTED BENCH_META_ITEMS=$ITEMS BENCH_META_ROUNDS=$ROUNDS BENCH_META_COUNT=$COUNT \
BENCH_META_PYLIBS="$(bench_pylibs requests orjson)" \
    "$PYTHON" "$HERE/records_report.py" "$RESULTS" "$OUTPUT"
bench_log "done in ${ELAPSED}s of measurements; section written to $OUTPUT"
