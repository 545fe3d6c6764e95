#!/usr/bin/env bash
# Request-rate and memory benchmark (issue 6): many small GETs from a local nginx, concurrently
# (raw libcurl multi vs hc_batch vs `curl --parallel`, and from Python client.map vs httpx
# AsyncClient vs requests + threads) and sequentially on one reused connection (raw libcurl vs
# hc_client_send, and from Python hc vs pycurl, urllib3, httpx, requests), interleaved
# round-robin; then peak RSS per in-flight transfer at 1,000 slow transfers. Writes the medians
# and ratios into the section "## Request rates (issue 6)" of BENCHMARKS.md. See bench/README.md.
#
#   bash bench/requests.sh
#
# Knobs (environment): BENCH_ROUNDS (3), BENCH_REQUESTS (10000: requests per concurrent
# measurement, raised if the fastest contestant of a group would take < BENCH_MIN_SECONDS),
# BENCH_CONCURRENCY ("1 16 64"), BENCH_MIN_SECONDS (1.0), BENCH_SEQ_SECONDS (1.5: target length
# of a sequential measurement), BENCH_MAX_SECONDS (4: a slow concurrent contestant gets fewer
# requests than BENCH_REQUESTS, enough for this long), BENCH_MEM_INFLIGHT (1000), BENCH_MEM (1: measure memory),
# BENCH_BUDGET (360: seconds of rounds after which no new round starts), BENCH_DEADLINE (720:
# seconds from the start after which the callgrind part is not started or is cut short),
# BENCH_PAIR_ROUNDS (100: rounds of the paired runs, 0: none), BENCH_PAIR_SECONDS (0.05: length
# of one block of a paired run), BENCH_PROFILE (1: callgrind instructions per request for BENCH_PROFILE_MODES, if valgrind is
# installed), BENCH_SERVER_CPU (0),
# BENCH_CLIENT_CPU (1), BENCH_PYDEPS, BENCH_OUTPUT (BENCHMARKS.md), BENCH_TIMEOUT (90: seconds per
# measurement), BENCH_LIBDIR (build), PYTHON (python3), NGINX (/usr/sbin/nginx).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_TAG=requests
. "$HERE/lib.sh"
ROUNDS=${BENCH_ROUNDS:-3}
REQUESTS=${BENCH_REQUESTS:-10000}
CONCURRENCY=${BENCH_CONCURRENCY:-1 16 64}
MIN_SECONDS=${BENCH_MIN_SECONDS:-1.0}
SEQ_SECONDS=${BENCH_SEQ_SECONDS:-1.5}
MAX_SECONDS=${BENCH_MAX_SECONDS:-4}
MEM_INFLIGHT=${BENCH_MEM_INFLIGHT:-1000}
WANT_MEM=${BENCH_MEM:-1}
WANT_PROFILE=${BENCH_PROFILE:-1}
PROFILE_MODES=${BENCH_PROFILE_MODES:-raw-seq hc-seq raw-multi@16 hc-batch@16 py:pycurl py:hc-seq py:hc-get py:hc-floor}
BUDGET=${BENCH_BUDGET:-360}
DEADLINE=${BENCH_DEADLINE:-720}
PAIR_ROUNDS=${BENCH_PAIR_ROUNDS:-100}
PAIR_SECONDS=${BENCH_PAIR_SECONDS:-0.05}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
OUTPUT=${BENCH_OUTPUT:-$ROOT/BENCHMARKS.md}
STEP_TIMEOUT=${BENCH_TIMEOUT:-90}
BODY=1024            # the small file
SLOW_BODY=20480      # the rate-limited file (memory measurement), sent at 1 KB/s

SCRIPT_START=$(date +%s)

# --- Prerequisites ----------------------------------------------------------------------------
bench_need_nginx
bench_need_tools
bench_need_library
bench_pin nginx client

# 1,000 sockets in one client process, and as many in nginx.
NOFILE_NEEDED=$((MEM_INFLIGHT * 2 + 256))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$NOFILE_NEEDED" ]; then
    ulimit -n "$NOFILE_NEEDED" 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$NOFILE_NEEDED" ]; then
        bench_log "open-file limit $(ulimit -n) < $NOFILE_NEEDED: memory measurement skipped"
        WANT_MEM=0
    fi
fi

# --- Temp dir, files -------------------------------------------------------------------------
bench_make_tmp requests
mkdir -p "$TMP/www/slow"
chmod 755 "$TMP/www" "$TMP/www/slow"
head -c "$BODY" /dev/urandom >"$TMP/www/1k.bin"
head -c "$SLOW_BODY" /dev/urandom >"$TMP/www/slow/20k.bin"
chmod 644 "$TMP/www/1k.bin" "$TMP/www/slow/20k.bin"

# --- nginx ------------------------------------------------------------------------------------
bench_start_nginx main="worker_rlimit_nofile $((MEM_INFLIGHT * 4 + 1024));" \
    connections=$((MEM_INFLIGHT * 2 + 512)) keepalive_requests=100000000 keepalive_timeout=300s \
    listen="backlog=4096" server="location /slow/ { limit_rate 1k; }"
URL="http://127.0.0.1:$PORT/1k.bin"
SLOW_URL="http://127.0.0.1:$PORT/slow/20k.bin"
bench_log "nginx $NGINX_VERSION serving $URL (pid $BENCH_SERVER_PID)"

# --- Programs ---------------------------------------------------------------------------------
bench_snapshot
cc -O2 -Wall -Wextra -I"$TMP/include" -o "$TMP/requests" "$HERE/requests.c" \
    "$TMP/lib/libhttpcontent.so.0" -lcurl -Wl,-rpath,"$TMP/lib"

PYPATH="$TMP/py:$PYDEPS"
pyimport() { PYTHONPATH="$PYPATH" "$PYTHON" -c "import $1" 2>/dev/null; }
NOTES=()
[ -n "$SNAPSHOT_NOTE" ] && NOTES+=("$SNAPSHOT_NOTE")
if ! pyimport pycurl; then
    bench_log "pycurl missing: building it from source into $PYDEPS"
    bench_pip_into_cache --no-binary pycurl --no-deps pycurl || true
    pyimport pycurl || NOTES+=("pycurl not measured: pip install pycurl failed")
fi
if ! pyimport httpx; then
    bench_log "httpx missing: installing it into $PYDEPS"
    bench_pip_into_cache httpx || true
    pyimport httpx || NOTES+=("httpx not measured: pip install httpx failed")
fi

# Contestants: id|group|concurrency|command. The command gets URL COUNT CONCURRENCY EXPECTED.
CONTESTANTS=()
for n in $CONCURRENCY; do
    CONTESTANTS+=(
        "raw-multi|c-conc|$n|$TMP/requests raw-multi"
        "hc-batch|c-conc|$n|$TMP/requests hc-batch"
        "curl-parallel|c-conc|$n|$PYTHON $HERE/request_rates.py curl-parallel"
        "hc-map|py-conc|$n|$PYTHON $HERE/request_rates.py hc-map"
        "httpx-async|py-conc|$n|$PYTHON $HERE/request_rates.py httpx-async"
        "requests-threads|py-conc|$n|$PYTHON $HERE/request_rates.py requests-threads"
    )
done
CONTESTANTS+=(
    "raw-seq|c-seq|1|$TMP/requests raw-seq"
    "hc-seq|c-seq|1|$TMP/requests hc-seq"
    "hc-py-seq|py-seq|1|$PYTHON $HERE/request_rates.py hc-seq"
    "pycurl|py-seq|1|$PYTHON $HERE/request_rates.py pycurl"
    "urllib3|py-seq|1|$PYTHON $HERE/request_rates.py urllib3"
    "httpx|py-seq|1|$PYTHON $HERE/request_rates.py httpx"
    "requests|py-seq|1|$PYTHON $HERE/request_rates.py requests"
)
key_of() { local e=$1; local id=${e%%|*}; e=${e#*|}; e=${e#*|}; echo "$id@${e%%|*}"; }

# Runs contestant entry $1 with $2 requests; prints "<seconds> <req/s> <cpu> <hwm_kib>".
# Exit 3: not installed.
run_entry() {
    local entry=$1 count=$2 rest conc cmd out
    rest=${entry#*|}; rest=${rest#*|}
    conc=${rest%%|*}; cmd=${rest#*|}
    # shellcheck disable=SC2086  # cmd is a word list
    out=$(bench_run_client "$(key_of "$entry")" $cmd "$URL" "$count" "$conc" "$BODY") || return
    # "<mode> <count> <seconds> <req/s> cpu=<c> [hwm_kib=<k>]"
    set -- $out
    local cpu=${5#cpu=} hwm=${6:-}; hwm=${hwm#hwm_kib=}
    echo "$3 $4 $cpu ${hwm:--}"
}

# --- Warm-up, availability, calibration --------------------------------------------------------
bench_log "warm-up: 300 requests each"
ACTIVE=()
declare -A RATE
for entry in "${CONTESTANTS[@]}"; do
    key=$(key_of "$entry")
    if m=$(run_entry "$entry" 300); then
        ACTIVE+=("$entry")
        set -- $m
        RATE[$key]=$2
        bench_log "  $(printf '%-22s' "$key") $2 req/s"
    else
        rc=$?
        [ "$rc" -eq 3 ] && { bench_log "  $key: not installed, skipped"; NOTES+=("${key%@*} not measured: not installed"); continue; }
        bench_die "warm-up of $key failed"
    fi
done

# Requests per measurement: a concurrent group (one concurrency) shares one count, at least
# BENCH_REQUESTS and enough for its fastest member to take BENCH_MIN_SECONDS; httpx-async and
# requests-threads (context, a few hundred to ~1,000 req/s here) get fewer if they would take
# longer than BENCH_MAX_SECONDS with it: enough for BENCH_MAX_SECONDS, at least 1,000, to keep the
# run bounded. A sequential contestant gets its own count, enough for about BENCH_SEQ_SECONDS (at
# least 1,000). A measurement that still takes less than BENCH_MIN_SECONDS (rates swing several
# times over on a shared machine) is repeated at once with a count sized from its own rate, and
# that count is kept for the following rounds.
declare -A COUNT
REDUCED=()
for entry in "${ACTIVE[@]}"; do
    key=$(key_of "$entry")
    rest=${entry#*|}; group=${rest%%|*}
    case $group in
        *-conc)
            fastest=0
            for other in "${ACTIVE[@]}"; do
                o_rest=${other#*|}
                [ "${o_rest%%|*}" = "$group" ] || continue
                [ "${key#*@}" = "$(key_of "$other" | sed 's/.*@//')" ] || continue
                fastest=$("$PYTHON" -c "print(max($fastest, ${RATE[$(key_of "$other")]}))")
            done
            COUNT[$key]=$("$PYTHON" -c "
import math
n = max($REQUESTS, math.ceil(1.3 * $MIN_SECONDS * $fastest / 1000) * 1000)
own = ${RATE[$key]}
if '${key%@*}' in ('httpx-async', 'requests-threads') and n / own > $MAX_SECONDS:
    n = max(1000, math.ceil($MAX_SECONDS * own / 500) * 500)
print(n)")
            [ "${COUNT[$key]}" -lt "$REQUESTS" ] && REDUCED+=("$key: ${COUNT[$key]}")
            ;;
        *)
            COUNT[$key]=$("$PYTHON" -c "import math; print(max(1000, math.ceil($SEQ_SECONDS * ${RATE[$key]} / 500) * 500))")
            ;;
    esac
done

if [ ${#REDUCED[@]} -gt 0 ]; then
    NOTES+=("fewer than $REQUESTS requests per measurement for the context contestants that would have taken more than $MAX_SECONDS s each (BENCH_MAX_SECONDS), to keep the run bounded: $(printf '%s, ' "${REDUCED[@]}" | sed 's/, $//')")
fi

# --- Rounds, interleaved; the starting contestant rotates each round ---------------------------
RESULTS="$TMP/results.tsv"
printf 'round\tcontestant\tgroup\tconcurrency\tcount\tseconds\trate\tcpu\n' >"$RESULTS"
LOAD_BEFORE=$(bench_loadavg)
START=$(date +%s)
n=${#ACTIVE[@]}
ROUNDS_DONE=0
LAST_ROUND=0
for round in $(seq "$ROUNDS"); do
    elapsed=$(($(date +%s) - START))
    if [ "$round" -gt 1 ] && [ $((elapsed + LAST_ROUND)) -gt "$BUDGET" ]; then
        bench_log "time budget (${BUDGET}s) reached: stopping after $ROUNDS_DONE rounds"
        NOTES+=("stopped after $ROUNDS_DONE of $ROUNDS rounds: another round would have passed the ${BUDGET} s budget (BENCH_BUDGET)")
        break
    fi
    round_start=$(date +%s)
    for k in $(seq 0 $((n - 1))); do
        entry=${ACTIVE[$(((k + (round - 1) * n / ROUNDS) % n))]}
        key=$(key_of "$entry")
        rest=${entry#*|}; group=${rest%%|*}
        m=$(run_entry "$entry" "${COUNT[$key]}") || bench_die "$key failed in round $round"
        set -- $m
        if "$PYTHON" -c "import sys; sys.exit(0 if $1 < $MIN_SECONDS else 1)"; then
            more=$("$PYTHON" -c "import math; print(max(${COUNT[$key]} * 2, math.ceil(1.5 * $MIN_SECONDS * $2 / 500) * 500))")
            bench_log "round $round/$ROUNDS  $key took $1 s with ${COUNT[$key]} requests: again with $more"
            COUNT[$key]=$more
            m=$(run_entry "$entry" "${COUNT[$key]}") || bench_die "$key failed in round $round"
            set -- $m
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "${key%@*}" "$group" "${key#*@}" \
            "${COUNT[$key]}" "$1" "$2" "$3" >>"$RESULTS"
        bench_log "round $round/$ROUNDS  $(printf '%-22s' "$key") $(printf '%6s' "${COUNT[$key]}") req  $(printf '%9s' "$2") req/s  ($1 s, cpu $3 s)"
    done
    ROUNDS_DONE=$round
    LAST_ROUND=$(($(date +%s) - round_start))
    printf '%s\t%s\n' "$round" "$(cut -d' ' -f1 /proc/loadavg)" >>"$TMP/load.tsv"
done
ELAPSED=$(($(date +%s) - START))

# --- Paired runs: the targets' figures ---------------------------------------------------------
# hc and its baseline in one process, alternating blocks of about BENCH_PAIR_SECONDS, for
# BENCH_PAIR_ROUNDS rounds (requests.c pair-seq / pair-batch, request_rates.py pair-seq): both
# see the same moments of the machine, whose swings move the separate runs above by ±20%.
PAIRS="$TMP/pairs.tsv"
printf 'comparison\tconcurrency\trounds\tblock\tbase_rate\thc_rate\tratio\tratio_min\tratio_max\tcpu_ratio\tcpu_min\tcpu_max\n' >"$PAIRS"
PAIR_START=$(date +%s)
# pair NAME CONCURRENCY BASE_KEY CMD...: one paired run, its summary line appended to PAIRS.
pair() {
    local name=$1 conc=$2 base=$3 block out
    shift 3
    [ -n "${RATE[$base]:-}" ] || return 0
    block=$("$PYTHON" -c "import math; print(max(300, math.ceil($PAIR_SECONDS * ${RATE[$base]} / 100) * 100))")
    bench_log "paired: $name at concurrency $conc, $PAIR_ROUNDS rounds of $block requests each"
    # shellcheck disable=SC2068  # the command is a word list
    out=$(bench_run_client "$name@$conc" $@ "$URL" "$block" "$PAIR_ROUNDS" "$conc" "$BODY" | tail -n1) \
        || bench_die "paired run $name@$conc failed"
    "$PYTHON" - "$name" "$conc" "$out" >>"$PAIRS" <<'PY'
import re, sys
name, conc, line = sys.argv[1], sys.argv[2], sys.argv[3]
m = re.search(r"rounds=(\d+) block=(\d+) raw=([\d.]+) hc=([\d.]+) ratio=([\d.]+) \[([\d.]+)-([\d.]+)\] "
              r"cpu_ratio=([\d.]+) \[([\d.]+)-([\d.]+)\]", line)
if not m:
    sys.exit(f"unexpected paired output: {line}")
print("\t".join([name, conc, *m.groups()]))
PY
    bench_log "  $out"
}
if [ "$PAIR_ROUNDS" -gt 0 ]; then
    pair "hc-seq/raw-seq" 1 raw-seq@1 "$TMP/requests" pair-seq
    for n in $CONCURRENCY; do pair "hc-batch/raw-multi" "$n" "raw-multi@$n" "$TMP/requests" pair-batch; done
    pair "hc-py-seq/pycurl" 1 pycurl@1 "$PYTHON" "$HERE/request_rates.py" pair-seq
    pair "hc-py-floor/pycurl" 1 pycurl@1 "$PYTHON" "$HERE/request_rates.py" pair-floor
fi
PAIR_ELAPSED=$(($(date +%s) - PAIR_START))
LOAD_AFTER=$(bench_loadavg)

# --- Memory per in-flight transfer -------------------------------------------------------------
# Slow transfers (20 KB at 1 KB/s: ~20 s each) so that all of them are in flight at once; peak
# RSS (VmHWM) of the C program with MEM_INFLIGHT in flight and with 1. The four runs go at once:
# they mostly wait, and peak RSS does not depend on CPU speed.
MEMORY="$TMP/memory.tsv"
printf 'mode\tinflight\tseconds\thwm_kib\n' >"$MEMORY"
printf 'mode\tcompleted\thwm_kib\n' >"$TMP/retained.tsv"
if [ "$WANT_MEM" != 0 ]; then
    bench_log "memory: $MEM_INFLIGHT and 1 slow transfers in flight, raw-multi-rss and hc-batch-rss (~$((SLOW_BODY / 1024)) s)"
    pids=()
    for mode in raw-multi-rss hc-batch-rss; do
        for inflight in "$MEM_INFLIGHT" 1; do
            ( timeout 120 "${PIN_CLIENT[@]}" "$TMP/requests" "$mode" "$SLOW_URL" "$inflight" "$inflight" "$SLOW_BODY" \
                >"$TMP/mem-$mode-$inflight.out" 2>"$TMP/mem-$mode-$inflight.err" ) &
            pids+=($!)
        done
    done
    mem_ok=1
    for p in "${pids[@]}"; do wait "$p" || mem_ok=0; done
    for mode in raw-multi-rss hc-batch-rss; do
        for inflight in "$MEM_INFLIGHT" 1; do
            out=$(cat "$TMP/mem-$mode-$inflight.out")
            if [ -z "$out" ]; then
                bench_log "memory run $mode x$inflight failed: $(head -c 400 "$TMP/mem-$mode-$inflight.err")"
                mem_ok=0
                continue
            fi
            set -- $out
            printf '%s\t%s\t%s\t%s\n' "$mode" "$inflight" "$3" "${6#hwm_kib=}" >>"$MEMORY"
            bench_log "  $mode x$inflight: $3 s, peak RSS ${6#hwm_kib=} KiB"
        done
    done
    # Memory that outlives transfers: peak RSS after 10 and after 2,000 quick 1 KiB transfers
    # made one at a time (concurrency 1) in one multi handle / one batch (bytes handler).
    for mode in raw-multi hc-batch; do
        for done_n in 10 2000; do
            if out=$(timeout 60 "${PIN_CLIENT[@]}" "$TMP/requests" "$mode" "$URL" "$done_n" 1 "$BODY" 2>"$TMP/err.log"); then
                set -- $out
                printf '%s\t%s\t%s\n' "$mode" "$done_n" "${6#hwm_kib=}" >>"$TMP/retained.tsv"
                bench_log "  $mode, $done_n transfers one after another: peak RSS ${6#hwm_kib=} KiB"
            else
                bench_log "memory run $mode x$done_n failed: $(head -c 400 "$TMP/err.log")"
                mem_ok=0
            fi
        done
    done
    [ "$mem_ok" = 1 ] || NOTES+=("a memory run failed; see the log")
else
    NOTES+=("memory not measured (BENCH_MEM=0 or open-file limit too low)")
fi

# --- Instructions per request (callgrind) -------------------------------------------------------
PROFILE="$TMP/profile.tsv"
PROFILE_TIME=$((DEADLINE - ($(date +%s) - SCRIPT_START)))
if [ "$WANT_PROFILE" != 0 ] && [ "$PROFILE_TIME" -lt 60 ]; then
    NOTES+=("no callgrind profile: less than 60 s left before the ${DEADLINE} s deadline (BENCH_DEADLINE)")
elif [ "$WANT_PROFILE" != 0 ] && command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
    # shellcheck disable=SC2086  # PROFILE_MODES is a word list
    bench_log "callgrind: instructions per request for $PROFILE_MODES (at most $PROFILE_TIME s)"
    PYTHONPATH="$PYPATH" timeout "$PROFILE_TIME" "${PIN_CLIENT[@]}" "$PYTHON" "$HERE/requests_profile.py" \
        "$TMP/requests" "$URL" $PROFILE_MODES --out "$PROFILE" >"$TMP/profile.log" 2>&1 \
        || { bench_log "profile failed or cut short: $(tail -n 3 "$TMP/profile.log" | tr '\n' ' ')"
             NOTES+=("the callgrind part failed or was cut short by the deadline; rows shown are the modes it finished"); }
    [ -f "$PROFILE" ] && sed 's/^/[requests]   /' "$TMP/profile.log" | grep -v '^\[requests\]  \{6,\}' >&2 || true
elif [ "$WANT_PROFILE" != 0 ]; then
    NOTES+=("no callgrind profile: valgrind is not installed")
fi

# --- Report -----------------------------------------------------------------------------------
NOTES_TEXT=$(printf '%s\n' "${NOTES[@]+"${NOTES[@]}"}")
bench_export_meta
BENCH_META_ROUNDS=$ROUNDS_DONE BENCH_META_TOTAL=$(($(date +%s) - SCRIPT_START)) \
BENCH_META_NOTES=$NOTES_TEXT BENCH_META_INFLIGHT=$MEM_INFLIGHT BENCH_META_SEQ_SECONDS=$SEQ_SECONDS \
BENCH_META_ROUNDLOAD="$(cut -f2 "$TMP/load.tsv" 2>/dev/null | paste -sd' ' -)" \
BENCH_META_CURLTOOL="$(curl --version 2>/dev/null | head -n1 | cut -d' ' -f1-2)" \
BENCH_META_PYLIBS="$(bench_pylibs pycurl urllib3 httpx requests)" \
BENCH_META_RETAINED="$TMP/retained.tsv" BENCH_META_PAIRS="$PAIRS" BENCH_META_PAIR_ELAPSED=$PAIR_ELAPSED BENCH_META_PAIR_SECONDS=$PAIR_SECONDS \
    "$PYTHON" "$HERE/requests_report.py" "$RESULTS" "$MEMORY" "$OUTPUT" "$PROFILE"
bench_log "done in $(($(date +%s) - SCRIPT_START)) s ($ELAPSED s of rounds); section written to $OUTPUT"
