#!/usr/bin/env bash
# JSON benchmark (issue 4): a JSON array of small objects (≈ 100 MB) served by a local nginx,
# parsed by raw yajl in memory, by libcurl + yajl in C, by libhttpcontent's JSON handlers from C
# and from Python, and by Python's own tools (requests/urllib3 + json.loads, ijson's yajl2_c
# backend), interleaved round-robin in one run; also the peak RSS growth of each. Writes the
# medians and ratios into the section "## JSON (issue 4)" of BENCHMARKS.md. See bench/README.md.
#
#   bash bench/json.sh
#
# Knobs (environment): BENCH_JSON_MB (100), BENCH_ROUNDS (5), BENCH_COUNT (passes per
# measurement, 1), BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1), BENCH_IJSON (1: install ijson into
# a cache folder if missing; 0: skip it), BENCH_PYDEPS (~/.cache/httpcontent-bench/pydeps),
# BENCH_OUTPUT (BENCHMARKS.md), BENCH_TIMEOUT (seconds per measurement, 300), BENCH_LIBDIR
# (build), BENCH_ONLY (space-separated contestants to run, default all), PYTHON (python3).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
SIZE_MB=${BENCH_JSON_MB:-100}
ROUNDS=${BENCH_ROUNDS:-5}
COUNT=${BENCH_COUNT:-1}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
WANT_IJSON=${BENCH_IJSON:-1}
OUTPUT=${BENCH_OUTPUT:-$ROOT/BENCHMARKS.md}
STEP_TIMEOUT=${BENCH_TIMEOUT:-300}
LIBDIR=${BENCH_LIBDIR:-$ROOT/build}
ONLY=${BENCH_ONLY:-}
PYTHON=${PYTHON:-python3}
NGINX=${NGINX:-/usr/sbin/nginx}

log() { printf '[json-bench] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- Prerequisites --------------------------------------------------------------------------
if [ ! -x "$NGINX" ]; then
    if command -v nginx >/dev/null 2>&1; then
        NGINX=$(command -v nginx)
    else
        log "nginx not found: installing nginx-light"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light >/dev/null \
            || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light >/dev/null; } \
            || die "could not install nginx-light"
        NGINX=/usr/sbin/nginx
    fi
fi
command -v cc >/dev/null || die "no C compiler (cc)"
[ -f /usr/include/yajl/yajl_parse.h ] || die "yajl headers missing (apt libyajl-dev; the library needs them to build)"
[ -f /usr/include/x86_64-linux-gnu/curl/curl.h ] || [ -f /usr/include/curl/curl.h ] || die "libcurl headers missing (apt libcurl4-openssl-dev)"
command -v taskset >/dev/null || die "taskset missing (util-linux)"
if [ ! -f "$LIBDIR/libhttpcontent.so.0" ]; then
    log "building libhttpcontent.so.0"
    (cd "$ROOT" && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build >/dev/null) \
        || die "library build failed"
fi
[ -f "$LIBDIR/libhttpcontent.so.0" ] || die "no $LIBDIR/libhttpcontent.so.0"

NCPU=$(nproc)
if [ "$NCPU" -ge 2 ]; then
    PIN_SERVER=(taskset -c "$SERVER_CPU")
    PIN_CLIENT=(taskset -c "$CLIENT_CPU")
    PINNING="nginx on CPU $SERVER_CPU, client on CPU $CLIENT_CPU (taskset)"
else
    log "only one CPU: running unpinned"
    PIN_SERVER=()
    PIN_CLIENT=()
    PINNING="unpinned (1 CPU)"
fi

# --- Temp dir, cleanup ------------------------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hc-bench.XXXXXX")
NGINX_PID=
cleanup() {
    if [ -n "$NGINX_PID" ] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -TERM "$NGINX_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$NGINX_PID" 2>/dev/null; then
            pkill -KILL -P "$NGINX_PID" 2>/dev/null || true   # its worker
            kill -KILL "$NGINX_PID" 2>/dev/null || true
        fi
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
chmod 755 "$TMP"   # nginx workers run as an unprivileged user when started by root

# --- Temp dir, cleanup ------------------------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hc-jsonbench.XXXXXX")
NGINX_PID=
cleanup() {
    if [ -n "$NGINX_PID" ] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -TERM "$NGINX_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$NGINX_PID" 2>/dev/null; then
            pkill -KILL -P "$NGINX_PID" 2>/dev/null || true   # its worker
            kill -KILL "$NGINX_PID" 2>/dev/null || true
        fi
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
chmod 755 "$TMP"   # nginx workers run as an unprivileged user when started by root

# --- The file ---------------------------------------------------------------------------------
# [{"id": 0, "name": "item 0", "tags": ["a", "b"], "value": 0.0}, ...] up to SIZE_MB MiB.
mkdir -p "$TMP/www"
chmod 755 "$TMP/www"
log "writing a ${SIZE_MB} MiB JSON array"
read -r EXPECTED ITEMS < <("$PYTHON" - "$TMP/www/data.json" "$SIZE_MB" <<'PY'
import sys
path, limit = sys.argv[1], int(sys.argv[2]) * 1048576
size, i, parts = 1, 0, ["["]
with open(path, "w") as f:
    while size < limit:
        s = ('{"id": %d, "name": "item %d", "tags": ["a", "b"], "value": %r}' % (i, i, i * 1.5))
        if i:
            s = "," + s
        parts.append(s)
        size += len(s)
        i += 1
        if len(parts) >= 10000:
            f.write("".join(parts))
            parts = []
    parts.append("]\n")
    f.write("".join(parts))
print(size + 2, i)
PY
)
chmod 644 "$TMP/www/data.json"
[ "$(stat -c %s "$TMP/www/data.json")" = "$EXPECTED" ] || die "the JSON file is not $EXPECTED bytes"
log "  $EXPECTED bytes, $ITEMS elements"

# --- nginx ------------------------------------------------------------------------------------
PORT=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
mkdir -p "$TMP/nginx"
cat >"$TMP/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    gzip off;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    default_type application/octet-stream;
    types { application/json json; }
    client_body_temp_path $TMP/nginx/body;
    proxy_temp_path $TMP/nginx/proxy;
    fastcgi_temp_path $TMP/nginx/fastcgi;
    uwsgi_temp_path $TMP/nginx/uwsgi;
    scgi_temp_path $TMP/nginx/scgi;
    server {
        listen 127.0.0.1:$PORT;
        root $TMP/www;
    }
}
EOF
"${PIN_SERVER[@]}" "$NGINX" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/error.log" \
    >"$TMP/nginx/stdout.log" 2>&1 &
NGINX_PID=$!
for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
    kill -0 "$NGINX_PID" 2>/dev/null || { cat "$TMP/nginx/error.log" "$TMP/nginx/stdout.log" >&2 || true; die "nginx did not start"; }
    sleep 0.05
done
(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || die "nginx is not listening on port $PORT"
URL="http://127.0.0.1:$PORT/data.json"
log "nginx $("$NGINX" -v 2>&1 | sed 's/.*\///') serving $URL (pid $NGINX_PID)"

# --- Programs ---------------------------------------------------------------------------------
# A snapshot of the library, its header and the Python binding (see bench/run.sh).
log "snapshotting the library and the binding; compiling"
mkdir -p "$TMP/lib" "$TMP/include" "$TMP/py"
cp "$LIBDIR/libhttpcontent.so.0" "$TMP/lib/"
cp "$ROOT/include/httpcontent.h" "$TMP/include/"
cp -R "$ROOT/bindings/python/httpcontent" "$TMP/py/"
LIB_ID="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
git -C "$ROOT" diff --quiet HEAD -- Sources include bindings 2>/dev/null || LIB_ID="$LIB_ID + uncommitted changes"
LIB_ID="libhttpcontent.so.0 built $(date -r "$LIBDIR/libhttpcontent.so.0" '+%Y-%m-%d %H:%M:%S'), tree at $LIB_ID"
cc -O2 -Wall -Wextra -I"$TMP/include" -o "$TMP/json_bench" "$HERE/json_bench.c" \
    "$TMP/lib/libhttpcontent.so.0" -Wl,-rpath,"$TMP/lib" -lcurl -lyajl

PYPATH="$TMP/py"
export HTTPCONTENT_LIBRARY="$TMP/lib/libhttpcontent.so.0"
PYDEPS=${BENCH_PYDEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/httpcontent-bench/pydeps}
IJSON_NOTE="not measured (BENCH_IJSON=0)"
ijson_backend() { PYTHONPATH="$1" "$PYTHON" -c 'import ijson; print(ijson.__version__, ijson.backend)' 2>/dev/null; }
if [ "$WANT_IJSON" != 0 ]; then
    if [ "$(ijson_backend "" | cut -d' ' -f2)" = yajl2_c ]; then
        IJSON_NOTE="ijson $(ijson_backend "" | cut -d' ' -f1) (installed), backend yajl2_c"
    else
        # The wheel bundles its C extension (yajl2_c); into a cache folder, not site-packages.
        if [ "$(ijson_backend "$PYDEPS" | cut -d' ' -f2)" != yajl2_c ]; then
            log "ijson (yajl2_c) missing: pip install --target $PYDEPS ijson"
            timeout 300 "$PYTHON" -m pip install -q --disable-pip-version-check --no-deps \
                --target "$PYDEPS" ijson >"$TMP/pip.log" 2>&1 \
                || log "ijson install failed (skipped): $(tail -n 3 "$TMP/pip.log" | tr '\n' ' ')"
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
)

# Runs contestant $1 for $2 passes; prints "MB/s CPU-s/GB RSS-growth-bytes". Exit 3: not installed.
measure() {
    local id=$1 count=$2 entry cmd="" src="" out rc
    for entry in "${CONTESTANTS[@]}"; do
        if [ "${entry%%|*}" = "$id" ]; then
            cmd=${entry#*|}
            src=${cmd##*|}
            cmd=${cmd%|*}
        fi
    done
    [ "$src" = file ] && src=$FILE || src=$URL
    # shellcheck disable=SC2086  # cmd is a word list
    out=$(PYTHONPATH="$PYPATH" timeout "$STEP_TIMEOUT" "${PIN_CLIENT[@]}" $cmd "$src" "$count" "$EXPECTED" "$ITEMS" 2>"$TMP/err.log") && rc=0 || rc=$?
    if [ "$rc" -ne 0 ]; then
        [ "$rc" -eq 3 ] && return 3
        log "$id failed (exit $rc): $(cat "$TMP/err.log")"
        return 1
    fi
    case $out in
        MBPS\ *) "$PYTHON" -c '
import sys
f = sys.argv[1].split()
kv = dict(x.split("=", 1) for x in f[2:])
print(f[1], "%.3f" % (float(kv["cpu"]) / (int(kv["bytes"]) / 1e9)), kv["rss"])' "$out" ;;
        *) log "$id: unexpected output: $out"; return 1 ;;
    esac
}

# --- Warm-up and availability (one pass each) -------------------------------------------------
log "warm-up: one pass each"
ACTIVE=()
for entry in "${CONTESTANTS[@]}"; do
    id=${entry%%|*}
    if [ -n "$ONLY" ] && [[ " $ONLY " != *" $id "* ]]; then continue; fi
    if [ "$id" = ijson ] && [ "${IJSON_NOTE#not measured}" != "$IJSON_NOTE" ]; then continue; fi
    if m=$(measure "$id" 1); then
        ACTIVE+=("$id")
        read -r mbps cpu rss <<<"$m"
        log "  $(printf '%-16s' "$id") $mbps MB/s  CPU $cpu s/GB  RSS +$((rss / 1048576)) MiB"
    else
        rc=$?
        [ "$rc" -eq 3 ] && { log "  $id: not installed, skipped"; continue; }
        die "warm-up of $id failed"
    fi
done

# --- Rounds, interleaved; the starting contestant rotates each round ---------------------------
RESULTS="$TMP/results.tsv"
printf 'round\tcontestant\tmbps\tcpu_s_per_gb\trss_bytes\n' >"$RESULTS"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date +%s)
n=${#ACTIVE[@]}
for round in $(seq "$ROUNDS"); do
    for k in $(seq 0 $((n - 1))); do
        id=${ACTIVE[$(((k + round - 1) % n))]}
        m=$(measure "$id" "$COUNT") || die "$id failed in round $round"
        read -r mbps cpu rss <<<"$m"
        printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$id" "$mbps" "$cpu" "$rss" >>"$RESULTS"
        log "round $round/$ROUNDS  $(printf '%-16s' "$id") $mbps MB/s  (CPU $cpu s/GB, RSS +$((rss / 1048576)) MiB)"
    done
done
ELAPSED=$(($(date +%s) - START))
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
[ -n "${BENCH_KEEP_RESULTS:-}" ] && cp "$RESULTS" "$BENCH_KEEP_RESULTS"

# --- Report -----------------------------------------------------------------------------------
BENCH_META_SIZE=$EXPECTED BENCH_META_ITEMS=$ITEMS BENCH_META_ROUNDS=$ROUNDS BENCH_META_COUNT=$COUNT \
BENCH_META_PINNING=$PINNING BENCH_META_ELAPSED=$ELAPSED BENCH_META_LIB=$LIB_ID \
BENCH_META_LOAD="$LOAD_BEFORE → $LOAD_AFTER" BENCH_META_IJSON=$IJSON_NOTE \
BENCH_META_NGINX="$("$NGINX" -v 2>&1 | sed 's/.*\///')" \
BENCH_META_CURL="$(curl-config --version 2>/dev/null || echo '?')" \
BENCH_META_YAJL="$(dpkg-query -W -f='${Version}' libyajl2 2>/dev/null || echo '?')" \
BENCH_META_PYTHON="$("$PYTHON" -c 'import platform; print(platform.python_version())')" \
BENCH_META_PYLIBS="$(PYTHONPATH="$PYPATH" "$PYTHON" -c '
out = []
for m in ("urllib3", "requests"):
    try:
        out.append(m + " " + __import__(m).__version__)
    except ImportError:
        out.append(m + " (not installed)")
print(", ".join(out))')" \
    "$PYTHON" "$HERE/json_report.py" "$RESULTS" "$OUTPUT"
log "done in ${ELAPSED}s of measurements; section written to $OUTPUT"
