#!/usr/bin/env bash
# JSON benchmark (issue 4): a JSON array of objects (≈ 100 MB; the rich document of json_doc.py by
# default) served by a local nginx,
# parsed by raw yajl in memory, by libcurl + yajl in C, by libhttpcontent's JSON handlers from C
# and from Python, and by Python's own tools (requests/urllib3 + json.loads, ijson's yajl2_c
# backend), interleaved round-robin in one run; also the peak RSS growth of each. Writes the
# medians and ratios into the section "## JSON (issue 4)" of BENCHMARKS.md. See bench/README.md.
#
#   bash bench/json.sh
#
# Knobs (environment): BENCH_JSON_MB (100), BENCH_JSON_DOC (rich, or simple), BENCH_ROUNDS (5), BENCH_COUNT (passes per
# measurement, 1), BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1), BENCH_IJSON (1: install ijson into
# a cache folder if missing; 0: skip it), BENCH_PYDEPS (~/.cache/httpcontent-bench/pydeps),
# BENCH_OUTPUT (BENCHMARKS.md), BENCH_TIMEOUT (seconds per measurement, 300), BENCH_LIBDIR
# (build), BENCH_ONLY (space-separated contestants to run, default all), PYTHON (python3).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_TAG=json-bench
. "$HERE/lib.sh"
SIZE_MB=${BENCH_JSON_MB:-100}
ROUNDS=${BENCH_ROUNDS:-5}
COUNT=${BENCH_COUNT:-1}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
WANT_IJSON=${BENCH_IJSON:-1}
OUTPUT=${BENCH_OUTPUT:-$ROOT/BENCHMARKS.md}
STEP_TIMEOUT=${BENCH_TIMEOUT:-300}
ONLY=${BENCH_ONLY:-}

# --- Prerequisites, temp dir ------------------------------------------------------------------
bench_need_nginx
bench_need_tools
[ -f /usr/include/yajl/yajl_parse.h ] || bench_die "yajl headers missing (apt libyajl-dev; the library needs them to build)"
[ -f /usr/include/x86_64-linux-gnu/curl/curl.h ] || [ -f /usr/include/curl/curl.h ] || bench_die "libcurl headers missing (apt libcurl4-openssl-dev)"
bench_need_library
bench_pin nginx client
bench_make_tmp jsonbench

# --- The file ---------------------------------------------------------------------------------
# BENCH_JSON_DOC=rich (the default, issue 15) or simple, up to SIZE_MB MiB: see json_doc.py.
mkdir -p "$TMP/www"
chmod 755 "$TMP/www"
bench_log "writing a ${SIZE_MB} MiB JSON array"
read -r EXPECTED ITEMS < <("$PYTHON" "$HERE/json_doc.py" "$TMP/www/data.json" "$SIZE_MB" "${BENCH_JSON_DOC:-rich}")
chmod 644 "$TMP/www/data.json"
[ "$(stat -c %s "$TMP/www/data.json")" = "$EXPECTED" ] || bench_die "the JSON file is not $EXPECTED bytes"
bench_log "  $EXPECTED bytes, $ITEMS elements"

# --- nginx ------------------------------------------------------------------------------------
bench_start_nginx http="types { application/json json; }"
URL="http://127.0.0.1:$PORT/data.json"
bench_log "nginx $NGINX_VERSION serving $URL (pid $BENCH_SERVER_PID)"

# --- Programs ---------------------------------------------------------------------------------
bench_snapshot
cc -O2 -Wall -Wextra -I"$TMP/include" -o "$TMP/json_bench" "$HERE/json_bench.c" \
    "$TMP/lib/libhttpcontent.so.0" -Wl,-rpath,"$TMP/lib" -lcurl -lyajl

PYPATH="$TMP/py"
IJSON_NOTE="not measured (BENCH_IJSON=0)"
ijson_backend() { PYTHONPATH="$1" "$PYTHON" -c 'import ijson; print(ijson.__version__, ijson.backend)' 2>/dev/null; }
if [ "$WANT_IJSON" != 0 ]; then
    if [ "$(ijson_backend "" | cut -d' ' -f2)" = yajl2_c ]; then
        IJSON_NOTE="ijson $(ijson_backend "" | cut -d' ' -f1) (installed), backend yajl2_c"
    else
        # The wheel bundles its C extension (yajl2_c); into a cache folder, not site-packages.
        if [ "$(ijson_backend "$PYDEPS" | cut -d' ' -f2)" != yajl2_c ]; then
            bench_log "ijson (yajl2_c) missing: pip install --target $PYDEPS ijson"
            bench_pip_into_cache --no-deps ijson || true
        fi
        if [ "$(ijson_backend "$PYDEPS" | cut -d' ' -f2)" = yajl2_c ]; then
            PYPATH="$PYPATH:$PYDEPS"
            IJSON_NOTE="ijson $(ijson_backend "$PYDEPS" | cut -d' ' -f1) in $PYDEPS, backend yajl2_c"
        else
            IJSON_NOTE="not measured (no ijson with the yajl2_c backend: $(ijson_backend "$PYDEPS" || echo 'install failed'))"
        fi
    fi
fi

# Contestants: id|command|source ("file": the JSON file, in memory; "url": over loopback). The
# command gets SOURCE COUNT EXPECTED_BYTES EXPECTED_ITEMS appended.
FILE="$TMP/www/data.json"
CONTESTANTS=(
    "yajl-raw|$TMP/json_bench yajl-raw|file"
    "yajl-raw-number|$TMP/json_bench yajl-raw-number|file"
    "hc-parse|$TMP/json_bench hc-parse|file"
    "curl-yajl|$TMP/json_bench curl-yajl|url"
    "hc-c-tree|$TMP/json_bench hc-c-tree|url"
    "hc-c-items|$TMP/json_bench hc-c-items|url"
    "hc-c-batches|$TMP/json_bench hc-c-batches|url"
    "hc-py-json|$PYTHON $HERE/json_bench.py hc-json|url"
    "requests|$PYTHON $HERE/json_bench.py requests|url"
    "urllib3|$PYTHON $HERE/json_bench.py urllib3|url"
    "hc-py-items|$PYTHON $HERE/json_bench.py hc-items|url"
    "hc-py-iter|$PYTHON $HERE/json_bench.py hc-iter|url"
    "ijson|$PYTHON $HERE/json_bench.py ijson|url"
    "ijson-decimal|$PYTHON $HERE/json_bench.py ijson-decimal|url"
    "requests-orjson|$PYTHON $HERE/json_bench.py requests-orjson|url"
    "requests-msgspec|$PYTHON $HERE/json_bench.py requests-msgspec|url"
)

# Runs contestant $1 for $2 passes; prints "MB/s CPU-s/GB RSS-growth-bytes". Exit 3: not installed.
measure() {
    local id=$1 count=$2 entry cmd="" src="" out
    for entry in "${CONTESTANTS[@]}"; do
        if [ "${entry%%|*}" = "$id" ]; then
            cmd=${entry#*|}
            src=${cmd##*|}
            cmd=${cmd%|*}
        fi
    done
    [ "$src" = file ] && src=$FILE || src=$URL
    # shellcheck disable=SC2086  # cmd is a word list
    out=$(bench_run_client "$id" $cmd "$src" "$count" "$EXPECTED" "$ITEMS") || return
    bench_mbps "$id" "$out" rss
}

# --- Warm-up, then the rounds (bench/lib.sh) --------------------------------------------------
IDS=()
for entry in "${CONTESTANTS[@]}"; do
    id=${entry%%|*}
    if [ "${id#ijson}" != "$id" ] && [ "${IJSON_NOTE#not measured}" != "$IJSON_NOTE" ]; then continue; fi
    IDS+=("$id")
done
bench_warm_up "${IDS[@]}"
bench_rounds

# --- Report -----------------------------------------------------------------------------------
bench_export_meta
BENCH_META_SIZE=$EXPECTED BENCH_META_ITEMS=$ITEMS BENCH_META_DOC=${BENCH_JSON_DOC:-rich} BENCH_META_ROUNDS=$ROUNDS BENCH_META_COUNT=$COUNT \
BENCH_META_IJSON=$IJSON_NOTE BENCH_META_PYLIBS="$(bench_pylibs urllib3 requests)" \
BENCH_META_YAJL="$(dpkg-query -W -f='${Version}' libyajl2 2>/dev/null || echo '?')" \
    "$PYTHON" "$HERE/json_report.py" "$RESULTS" "$OUTPUT"
bench_log "done in ${ELAPSED}s of measurements; section written to $OUTPUT"
