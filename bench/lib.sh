# Shared by the benchmark scripts (run.sh, requests.sh, json.sh, bodies.sh, records.sh...); sourced, not run:
#
#   HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
#   BENCH_TAG=bench                     # the log prefix, "[bench] ..."
#   . "$HERE/lib.sh"
#
# Sourcing it sets ROOT (the repository), LIBDIR (BENCH_LIBDIR, default build), PYTHON (python3),
# NGINX (/usr/sbin/nginx) and PYDEPS (BENCH_PYDEPS, default ~/.cache/httpcontent-bench/pydeps),
# unless already set. The functions below use the script's SERVER_CPU, CLIENT_CPU and TMP.

ROOT=${ROOT:-$(dirname "$HERE")}
LIBDIR=${BENCH_LIBDIR:-$ROOT/build}
PYTHON=${PYTHON:-python3}
NGINX=${NGINX:-/usr/sbin/nginx}
PYDEPS=${BENCH_PYDEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/httpcontent-bench/pydeps}
BENCH_SERVER_PID=

# bench_log MESSAGE...: prints "[$BENCH_TAG] MESSAGE" to stderr.
bench_log() { printf '[%s] %s\n' "${BENCH_TAG:-bench}" "$*" >&2; }

# bench_die MESSAGE...: logs "error: MESSAGE" and exits 1.
bench_die() { bench_log "error: $*"; exit 1; }

# bench_need_nginx: points NGINX at an nginx binary, installing nginx-light with apt-get if there is none.
bench_need_nginx() {
    [ -x "$NGINX" ] && return 0
    if command -v nginx >/dev/null 2>&1; then
        NGINX=$(command -v nginx)
        return 0
    fi
    bench_log "nginx not found: installing nginx-light"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light >/dev/null \
        || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light >/dev/null; } \
        || bench_die "could not install nginx-light"
    NGINX=/usr/sbin/nginx
}

# bench_need_tools: dies unless a C compiler (cc) and taskset are installed.
bench_need_tools() {
    command -v cc >/dev/null || bench_die "no C compiler (cc)"
    command -v taskset >/dev/null || bench_die "taskset missing (util-linux)"
}

# bench_need_library: builds $LIBDIR/libhttpcontent.so.0 (CMake + Ninja, Release, in build/) if it is missing.
bench_need_library() {
    if [ ! -f "$LIBDIR/libhttpcontent.so.0" ]; then
        bench_log "building libhttpcontent.so.0"
        (cd "$ROOT" && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build >/dev/null) \
            || bench_die "library build failed"
    fi
    [ -f "$LIBDIR/libhttpcontent.so.0" ] || bench_die "no $LIBDIR/libhttpcontent.so.0"
}

# bench_pin SERVER CLIENT: sets PIN_SERVER / PIN_CLIENT (taskset prefixes to SERVER_CPU / CLIENT_CPU, empty with one CPU) and PINNING, the report's sentence ("SERVER on CPU 0, CLIENT on CPU 1 (taskset)").
bench_pin() {
    if [ "$(nproc)" -ge 2 ]; then
        PIN_SERVER=(taskset -c "$SERVER_CPU")
        PIN_CLIENT=(taskset -c "$CLIENT_CPU")
        PINNING="$1 on CPU $SERVER_CPU, $2 on CPU $CLIENT_CPU (taskset)"
    else
        bench_log "only one CPU: running unpinned"
        PIN_SERVER=()
        PIN_CLIENT=()
        PINNING="unpinned (1 CPU)"
    fi
}

# bench_make_tmp NAME: makes TMP, a world-readable temp dir hc-NAME.XXXXXX, and an exit trap that stops the server (BENCH_SERVER_PID) and removes TMP.
bench_make_tmp() {
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/hc-$1.XXXXXX")
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
    chmod 755 "$TMP"   # nginx workers run as an unprivileged user when started by root
}

# bench_cleanup: the exit trap: TERM to BENCH_SERVER_PID, KILL (it and its children) after 5 s, then removes TMP.
bench_cleanup() {
    local pid=$BENCH_SERVER_PID
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            pkill -KILL -P "$pid" 2>/dev/null || true   # nginx's worker
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    fi
    if [ -n "${TMP:-}" ]; then rm -rf "$TMP"; fi
}

# bench_free_port: prints a TCP port on 127.0.0.1 that is free now.
bench_free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# bench_start_nginx [connections=N] [keepalive_requests=N] [keepalive_timeout=T] [main=TEXT] [http=TEXT] [listen=OPTS] [server=TEXT]: writes $TMP/nginx/nginx.conf (one worker, access_log off, sendfile, root $TMP/www, a free port; TEXT goes into that block) and starts nginx on PIN_SERVER in the foreground; sets PORT, BENCH_SERVER_PID and NGINX_VERSION once it listens.
bench_start_nginx() {
    local connections=64 keepalive_requests=1000000 keepalive_timeout=120s main="" http="" listen="" server="" arg
    for arg in "$@"; do
        case $arg in
            connections=*|keepalive_requests=*|keepalive_timeout=*|main=*|http=*|listen=*|server=*) local "$arg" ;;
            *) bench_die "bench_start_nginx: unknown argument $arg" ;;
        esac
    done
    PORT=$(bench_free_port)
    mkdir -p "$TMP/nginx"
    {
        echo "worker_processes 1;"
        [ -n "$main" ] && echo "$main"
        cat <<EOF
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections $connections; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    gzip off;
    keepalive_requests $keepalive_requests;
    keepalive_timeout $keepalive_timeout;
    default_type application/octet-stream;
EOF
        [ -n "$http" ] && echo "    $http"
        cat <<EOF
    client_body_temp_path $TMP/nginx/body;
    proxy_temp_path $TMP/nginx/proxy;
    fastcgi_temp_path $TMP/nginx/fastcgi;
    uwsgi_temp_path $TMP/nginx/uwsgi;
    scgi_temp_path $TMP/nginx/scgi;
    server {
        listen 127.0.0.1:$PORT${listen:+ $listen};
        root $TMP/www;
EOF
        [ -n "$server" ] && echo "        $server"
        echo "    }"
        echo "}"
    } >"$TMP/nginx/nginx.conf"
    "${PIN_SERVER[@]}" "$NGINX" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/error.log" \
        >"$TMP/nginx/stdout.log" 2>&1 &
    BENCH_SERVER_PID=$!
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
        kill -0 "$BENCH_SERVER_PID" 2>/dev/null || { cat "$TMP/nginx/error.log" "$TMP/nginx/stdout.log" >&2 || true; bench_die "nginx did not start"; }
        sleep 0.05
    done
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || bench_die "nginx is not listening on port $PORT"
    NGINX_VERSION=$("$NGINX" -v 2>&1 | sed 's/.*\///')
}

# bench_snapshot: copies the library, its header and the Python binding into $TMP/lib, $TMP/include and $TMP/py, so that a rebuild in the working tree during the run (other people work here) cannot change what is measured; if the header or binding holds conflict markers (the shared tree is mid-merge) they come from HEAD and SNAPSHOT_NOTE says so (else it is empty). Sets LIB_ID, the report's description of the library.
bench_snapshot() {
    bench_log "snapshotting the library and the binding; compiling"
    mkdir -p "$TMP/lib" "$TMP/include" "$TMP/py"
    cp "$LIBDIR/libhttpcontent.so.0" "$TMP/lib/"
    cp "$ROOT/include/httpcontent.h" "$TMP/include/"
    cp -R "$ROOT/bindings/python/httpcontent" "$TMP/py/"
    SNAPSHOT_NOTE=
    if grep -qE '^(<<<<<<<|>>>>>>>) ' "$TMP/include/httpcontent.h" 2>/dev/null \
        || grep -rqE '^(<<<<<<<|>>>>>>>) ' "$TMP/py/httpcontent" 2>/dev/null; then
        bench_log "conflict markers in the working tree's header or binding: taking them from HEAD"
        rm -rf "$TMP/include/httpcontent.h" "$TMP/py/httpcontent"
        git -C "$ROOT" show HEAD:include/httpcontent.h >"$TMP/include/httpcontent.h" || bench_die "no header at HEAD"
        git -C "$ROOT" archive HEAD bindings/python/httpcontent | tar -x -C "$TMP/py" --strip-components=2 \
            || bench_die "no Python binding at HEAD"
        SNAPSHOT_NOTE="the working tree was mid-merge (conflict markers), so the header and the Python binding were taken from HEAD"
    fi
    LIB_ID="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
    git -C "$ROOT" diff --quiet HEAD -- Sources include bindings 2>/dev/null || LIB_ID="$LIB_ID + uncommitted changes"
    LIB_ID="libhttpcontent.so.0 built $(date -r "$LIBDIR/libhttpcontent.so.0" '+%Y-%m-%d %H:%M:%S'), tree at $LIB_ID"
    export HTTPCONTENT_LIBRARY="$TMP/lib/libhttpcontent.so.0"
}

# bench_pip_into_cache ARGS...: pip install ARGS into PYDEPS (not site-packages), at most 300 s; logs pip's last lines and returns 1 if it fails.
bench_pip_into_cache() {
    timeout 300 "$PYTHON" -m pip install -q --disable-pip-version-check --target "$PYDEPS" "$@" \
        >"$TMP/pip.log" 2>&1 && return 0
    bench_log "pip install $* failed: $(tail -n 3 "$TMP/pip.log" | tr '\n' ' ')"
    return 1
}

# bench_run_client ID CMD...: runs the client command CMD (word-split by the caller) on PIN_CLIENT within STEP_TIMEOUT seconds, with PYTHONPATH=$PYPATH if PYPATH is set, and prints its output; on failure logs the command's stderr and returns 1, or 3 (quietly) if the command exited 3 ("not installed").
bench_run_client() {
    local id=$1 out rc
    shift
    if [ -n "${PYPATH:-}" ]; then
        out=$(PYTHONPATH="$PYPATH" timeout "$STEP_TIMEOUT" "${PIN_CLIENT[@]}" "$@" 2>"$TMP/err.log") && rc=0 || rc=$?
    else
        out=$(timeout "$STEP_TIMEOUT" "${PIN_CLIENT[@]}" "$@" 2>"$TMP/err.log") && rc=0 || rc=$?
    fi
    if [ "$rc" -ne 0 ]; then
        [ "$rc" -eq 3 ] && return 3
        bench_log "$id failed (exit $rc): $(cat "$TMP/err.log")"
        return 1
    fi
    printf '%s\n' "$out"
}

# bench_mbps ID LINE [KEY...]: turns a client's "MBPS <v> bytes=<n> seconds=<s> cpu=<c> ..." line into "<v> <client CPU seconds per 10^9 bytes> [<value of KEY>...]"; logs and returns 1 on any other line.
bench_mbps() {
    case $2 in
        MBPS\ *) ;;
        *) bench_log "$1: unexpected output: $2"; return 1 ;;
    esac
    "$PYTHON" -c '
import sys
f = sys.argv[1].split()
kv = dict(x.split("=", 1) for x in f[2:])
print(f[1], "%.3f" % (float(kv["cpu"]) / (int(kv["bytes"]) / 1e9)), *(kv[k] for k in sys.argv[2:]))' "${@:2}"
}

# bench_loadavg: prints the 1, 5 and 15-minute load averages.
bench_loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# bench_pylibs MODULE...: prints "m1 1.2, m2 (not installed), ..." for the Python modules, importable from PYPATH.
bench_pylibs() {
    PYTHONPATH="${PYPATH:-}" "$PYTHON" -c '
import sys
out = []
for m in sys.argv[1:]:
    try:
        mod = __import__(m)
        v = getattr(mod, "__version__", None) or mod.version.split()[0].split("/")[1]
        out.append(m + " " + v)
    except Exception:
        out.append(m + " (not installed)")
print(", ".join(out))' "$@"
}

# bench_export_meta: exports the facts every report states: BENCH_META_LIB, _PINNING, _ELAPSED, _LOAD (from LOAD_BEFORE and LOAD_AFTER), _CURL, _PYTHON, and _NGINX when nginx ran.
bench_export_meta() {
    export BENCH_META_LIB=$LIB_ID BENCH_META_PINNING=$PINNING BENCH_META_ELAPSED=$ELAPSED
    export BENCH_META_LOAD="$LOAD_BEFORE → $LOAD_AFTER"
    BENCH_META_CURL="$(curl-config --version 2>/dev/null || echo '?')"
    BENCH_META_PYTHON="$("$PYTHON" -c 'import platform; print(platform.python_version())')"
    export BENCH_META_CURL BENCH_META_PYTHON
    if [ -n "${NGINX_VERSION:-}" ]; then export BENCH_META_NGINX=$NGINX_VERSION; fi
}

# bench_warm_up ID...: one pass of each contestant (the script's `measure ID 1`), logged; those
# not installed (exit 3) are skipped, BENCH_ONLY (the script's ONLY) keeps only those it names.
# Sets ACTIVE to the contestants that ran. A failure ends the run.
bench_warm_up() {
    local id m rc mbps cpu rss
    bench_log "warm-up: one pass each"
    ACTIVE=()
    for id in "$@"; do
        if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $id "* ]]; then continue; fi
        if m=$(measure "$id" 1); then
            ACTIVE+=("$id")
            read -r mbps cpu rss <<<"$m"
            bench_log "  $(printf '%-16s' "$id") $mbps MB/s  CPU $cpu s/GB  RSS +$((rss / 1048576)) MiB"
        else
            rc=$?
            [ "$rc" -eq 3 ] && { bench_log "  $id: not installed, skipped"; continue; }
            bench_die "warm-up of $id failed"
        fi
    done
}

# bench_rounds: ROUNDS rounds of the ACTIVE contestants, `measure ID COUNT` each, interleaved
# round-robin with the first rotating each round. Writes RESULTS ($TMP/results.tsv: round,
# contestant, mbps, cpu_s_per_gb, rss_bytes; copied to BENCH_KEEP_RESULTS if set) and sets
# ELAPSED, LOAD_BEFORE and LOAD_AFTER.
bench_rounds() {
    local round k id m mbps cpu rss start n=${#ACTIVE[@]}
    RESULTS="$TMP/results.tsv"
    printf 'round\tcontestant\tmbps\tcpu_s_per_gb\trss_bytes\n' >"$RESULTS"
    LOAD_BEFORE=$(bench_loadavg)
    start=$(date +%s)
    for round in $(seq "$ROUNDS"); do
        for k in $(seq 0 $((n - 1))); do
            id=${ACTIVE[$(((k + round - 1) % n))]}
            m=$(measure "$id" "$COUNT") || bench_die "$id failed in round $round"
            read -r mbps cpu rss <<<"$m"
            printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$id" "$mbps" "$cpu" "$rss" >>"$RESULTS"
            bench_log "round $round/$ROUNDS  $(printf '%-16s' "$id") $mbps MB/s  (CPU $cpu s/GB, RSS +$((rss / 1048576)) MiB)"
        done
    done
    ELAPSED=$(($(date +%s) - start))
    LOAD_AFTER=$(bench_loadavg)
    [ -z "${BENCH_KEEP_RESULTS:-}" ] || cp "$RESULTS" "$BENCH_KEEP_RESULTS"
}
