#!/usr/bin/env bash
# Download-throughput benchmark (issue 2): a large file from a local nginx, through a raw libcurl C
# program, through libhttpcontent from C and from Python, and through Python HTTP clients for
# context, interleaved round-robin in one run. Writes the medians and ratios into the section
# "## Download throughput (issue 2)" of BENCHMARKS.md. See bench/README.md.
#
#   bash bench/run.sh
#
# Knobs (environment): BENCH_SIZE_MB (512), BENCH_ROUNDS (5), BENCH_COUNT (downloads per
# measurement; default: enough for BENCH_MIN_SECONDS, 1.0, with the raw discard program),
# BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1), BENCH_PYCURL (1: install pycurl into a cache
# folder if missing; 0: skip it), BENCH_OUTPUT (BENCHMARKS.md), BENCH_TIMEOUT (seconds allowed per
# measurement, 300), BENCH_LIBDIR (build), PYTHON (python3).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
SIZE_MB=${BENCH_SIZE_MB:-512}
ROUNDS=${BENCH_ROUNDS:-5}
COUNT=${BENCH_COUNT:-}
MIN_SECONDS=${BENCH_MIN_SECONDS:-1.0}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
WANT_PYCURL=${BENCH_PYCURL:-1}
OUTPUT=${BENCH_OUTPUT:-$ROOT/BENCHMARKS.md}
STEP_TIMEOUT=${BENCH_TIMEOUT:-300}
LIBDIR=${BENCH_LIBDIR:-$ROOT/build}
PYTHON=${PYTHON:-python3}
NGINX=${NGINX:-/usr/sbin/nginx}

log() { printf '[bench] %s\n' "$*" >&2; }
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

# --- The file ---------------------------------------------------------------------------------
mkdir -p "$TMP/www"
chmod 755 "$TMP/www"
log "writing a ${SIZE_MB} MiB file"
head -c "$((SIZE_MB * 1048576))" /dev/urandom >"$TMP/www/data.bin"
chmod 644 "$TMP/www/data.bin"
EXPECTED=$((SIZE_MB * 1048576))

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
URL="http://127.0.0.1:$PORT/data.bin"
log "nginx $("$NGINX" -v 2>&1 | sed 's/.*\///') serving $URL (pid $NGINX_PID)"

# --- Programs ---------------------------------------------------------------------------------
# A snapshot of the library, its header and the Python binding, taken together, so that a rebuild
# in the working tree during the run (other people work here) cannot change what is measured.
log "snapshotting the library and the binding; compiling"
mkdir -p "$TMP/lib" "$TMP/include" "$TMP/py"
cp "$LIBDIR/libhttpcontent.so.0" "$TMP/lib/"
cp "$ROOT/include/httpcontent.h" "$TMP/include/"
cp -R "$ROOT/bindings/python/httpcontent" "$TMP/py/"
LIB_ID="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
git -C "$ROOT" diff --quiet HEAD -- Sources include bindings 2>/dev/null || LIB_ID="$LIB_ID + uncommitted changes"
LIB_ID="libhttpcontent.so.0 built $(date -r "$LIBDIR/libhttpcontent.so.0" '+%Y-%m-%d %H:%M:%S'), tree at $LIB_ID"
cc -O2 -Wall -Wextra -o "$TMP/raw_curl" "$HERE/raw_curl.c" -lcurl
cc -O2 -Wall -Wextra -I"$TMP/include" -o "$TMP/hc_bench" "$HERE/hc_bench.c" \
    "$TMP/lib/libhttpcontent.so.0" -Wl,-rpath,"$TMP/lib"

PYPATH="$TMP/py"
export HTTPCONTENT_LIBRARY="$TMP/lib/libhttpcontent.so.0"
PYCURL_NOTE="not measured (BENCH_PYCURL=0)"
if [ "$WANT_PYCURL" != 0 ]; then
    if "$PYTHON" -c 'import pycurl' 2>/dev/null; then
        PYCURL_NOTE="installed: $("$PYTHON" -c 'import pycurl; print(pycurl.version)')"
    else
        # Built from source against the system libcurl, into a cache folder (not site-packages).
        PYDEPS=${BENCH_PYDEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/httpcontent-bench/pydeps}
        if ! PYTHONPATH="$PYDEPS" "$PYTHON" -c 'import pycurl' 2>/dev/null; then
            log "pycurl missing: pip install --no-binary pycurl --target $PYDEPS pycurl"
            timeout 300 "$PYTHON" -m pip install -q --disable-pip-version-check --no-binary pycurl \
                --no-deps --target "$PYDEPS" pycurl >"$TMP/pip.log" 2>&1 \
                || log "pycurl install failed (skipped): $(tail -n 3 "$TMP/pip.log" | tr '\n' ' ')"
        fi
        if PYTHONPATH="$PYDEPS" "$PYTHON" -c 'import pycurl' 2>/dev/null; then
            PYPATH="$PYPATH:$PYDEPS"
            PYCURL_NOTE="built from source into $PYDEPS: $(PYTHONPATH="$PYDEPS" "$PYTHON" -c 'import pycurl; print(pycurl.version)')"
        else
            PYCURL_NOTE="not measured (pip install pycurl failed)"
        fi
    fi
fi

# Contestants: id|command (the command gets COUNT and EXPECTED appended after the URL).
CONTESTANTS=(
    "raw-discard|$TMP/raw_curl discard"
    "raw-accumulate|$TMP/raw_curl accumulate"
    "hc-c-discard|$TMP/hc_bench discard"
    "hc-c-bytes|$TMP/hc_bench bytes"
    "hc-py-discard|$PYTHON $HERE/hc_bench.py hc-discard"
    "hc-py-bytes|$PYTHON $HERE/hc_bench.py hc-bytes"
    "urllib3|$PYTHON $HERE/hc_bench.py urllib3"
    "requests|$PYTHON $HERE/hc_bench.py requests"
    "pycurl-discard|$PYTHON $HERE/hc_bench.py pycurl-discard"
    "pycurl-bytes|$PYTHON $HERE/hc_bench.py pycurl-bytes"
)

# Runs contestant $1 for $2 downloads; prints "MB/s CPU-s/GB". Exit 3: not installed.
measure() {
    local id=$1 count=$2 entry cmd out rc
    for entry in "${CONTESTANTS[@]}"; do
        [ "${entry%%|*}" = "$id" ] && cmd=${entry#*|}
    done
    # shellcheck disable=SC2086  # cmd is a word list
    out=$(PYTHONPATH="$PYPATH" timeout "$STEP_TIMEOUT" "${PIN_CLIENT[@]}" $cmd "$URL" "$count" "$EXPECTED" 2>"$TMP/err.log") && rc=0 || rc=$?
    if [ "$rc" -ne 0 ]; then
        [ "$rc" -eq 3 ] && return 3
        log "$id failed (exit $rc): $(cat "$TMP/err.log")"
        return 1
    fi
    # "MBPS <v> bytes=<n> seconds=<s> cpu=<c>" -> "<v> <client CPU seconds per GB>"
    case $out in
        MBPS\ *) "$PYTHON" -c '
import sys
f = sys.argv[1].split()
kv = dict(x.split("=", 1) for x in f[2:])
print(f[1], "%.3f" % (float(kv["cpu"]) / (int(kv["bytes"]) / 1e9)))' "$out" ;;
        *) log "$id: unexpected output: $out"; return 1 ;;
    esac
}

# --- Warm-up, availability, calibration --------------------------------------------------------
log "warm-up: one download each"
ACTIVE=()
for entry in "${CONTESTANTS[@]}"; do
    id=${entry%%|*}
    if [ "${id#pycurl}" != "$id" ] && [ "${PYCURL_NOTE#not measured}" != "$PYCURL_NOTE" ]; then continue; fi
    if m=$(measure "$id" 1); then
        ACTIVE+=("$id")
        log "  $id: ${m% *} MB/s"
    else
        rc=$?
        [ "$rc" -eq 3 ] && { log "  $id: not installed, skipped"; continue; }
        die "warm-up of $id failed"
    fi
done

if [ -z "$COUNT" ]; then
    m=$(measure raw-discard 3) || die "calibration failed"
    mbps=${m% *}
    COUNT=$("$PYTHON" -c "import math, sys; s = $EXPECTED / ($mbps * 1e6); print(max(1, math.ceil(1.2 * $MIN_SECONDS / s)))")
    log "calibration: raw discard at $mbps MB/s; $COUNT downloads per measurement"
fi

# --- Rounds, interleaved; the starting contestant rotates each round ---------------------------
RESULTS="$TMP/results.tsv"
printf 'round\tcontestant\tmbps\tcpu_s_per_gb\n' >"$RESULTS"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date +%s)
n=${#ACTIVE[@]}
for round in $(seq "$ROUNDS"); do
    for k in $(seq 0 $((n - 1))); do
        id=${ACTIVE[$(((k + round - 1) % n))]}
        m=$(measure "$id" "$COUNT") || die "$id failed in round $round"
        printf '%s\t%s\t%s\t%s\n' "$round" "$id" "${m% *}" "${m#* }" >>"$RESULTS"
        log "round $round/$ROUNDS  $(printf '%-15s' "$id") ${m% *} MB/s  (client CPU ${m#* } s/GB)"
    done
done
ELAPSED=$(($(date +%s) - START))
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# --- Report -----------------------------------------------------------------------------------
BENCH_META_SIZE_MB=$SIZE_MB BENCH_META_ROUNDS=$ROUNDS BENCH_META_COUNT=$COUNT \
BENCH_META_PINNING=$PINNING BENCH_META_ELAPSED=$ELAPSED BENCH_META_LIB=$LIB_ID \
BENCH_META_LOAD="$LOAD_BEFORE → $LOAD_AFTER" BENCH_META_PYCURL=$PYCURL_NOTE \
BENCH_META_NGINX="$("$NGINX" -v 2>&1 | sed 's/.*\///')" \
BENCH_META_CURL="$(curl-config --version 2>/dev/null || echo '?')" \
BENCH_META_PYTHON="$("$PYTHON" -c 'import platform; print(platform.python_version())')" \
BENCH_META_PYLIBS="$(PYTHONPATH="$PYPATH" "$PYTHON" -c '
out = []
for m in ("urllib3", "requests"):
    try:
        out.append(m + " " + __import__(m).__version__)
    except ImportError:
        out.append(m + " (not installed)")
print(", ".join(out))')" \
    "$PYTHON" "$HERE/report.py" "$RESULTS" "$OUTPUT"
log "done in ${ELAPSED}s of measurements; section written to $OUTPUT"
