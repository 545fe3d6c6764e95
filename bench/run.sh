#!/usr/bin/env bash
# Download-throughput benchmark (issue 2): a large file from a local nginx, through a raw libcurl C
# program, through libhttpcontent from C and from Python, and through Python HTTP clients for
# context, interleaved round-robin in one run. Writes the medians and ratios into the section
# "## Download throughput (issues 2 and 15)" of BENCHMARKS.md. See bench/README.md.
#
#   bash bench/run.sh
#
# Knobs (environment): BENCH_SIZE_MB (512), BENCH_ROUNDS (5), BENCH_COUNT (downloads per
# measurement; default: enough for BENCH_MIN_SECONDS, 1.0, with the raw discard program),
# BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1), BENCH_FILE_START (cached: each to-file measurement
# starts with the previous version of the file whole and cached; none: with no file), BENCH_PYCURL (1: install pycurl into a cache
# folder if missing; 0: skip it), BENCH_OUTPUT (BENCHMARKS.md), BENCH_TIMEOUT (seconds allowed per
# measurement, 300), BENCH_LIBDIR (build), PYTHON (python3), BENCH_ONLY (space-separated
# contestant ids to run, e.g. the to-file set: "hc-py-file hc-py-file-nofsync hc-c-file
# hc-c-file-nofsync requests-file requests-file-nofsync raw-tuned-file raw-tuned-file-fsync";
# calibration then uses the first of them instead of raw-discard, pycurl is not installed unless
# named, and the report holds only those: point BENCH_OUTPUT elsewhere for such a run).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_TAG=bench
. "$HERE/lib.sh"
SIZE_MB=${BENCH_SIZE_MB:-512}
ROUNDS=${BENCH_ROUNDS:-5}
COUNT=${BENCH_COUNT:-}
MIN_SECONDS=${BENCH_MIN_SECONDS:-1.0}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
WANT_PYCURL=${BENCH_PYCURL:-1}
ONLY=${BENCH_ONLY:-}
if [ -n "$ONLY" ] && [[ " $ONLY " != *" pycurl-"* ]]; then WANT_PYCURL=0; fi
OUTPUT=${BENCH_OUTPUT:-$ROOT/BENCHMARKS.md}
STEP_TIMEOUT=${BENCH_TIMEOUT:-300}

# --- Prerequisites, temp dir ------------------------------------------------------------------
bench_need_nginx
bench_need_tools
bench_need_library
bench_pin nginx client
bench_make_tmp bench

# --- The file ---------------------------------------------------------------------------------
mkdir -p "$TMP/www"
chmod 755 "$TMP/www"
bench_log "writing a ${SIZE_MB} MiB file"
head -c "$((SIZE_MB * 1048576))" /dev/urandom >"$TMP/www/data.bin"
chmod 644 "$TMP/www/data.bin"
EXPECTED=$((SIZE_MB * 1048576))

# --- nginx ------------------------------------------------------------------------------------
bench_start_nginx
URL="http://127.0.0.1:$PORT/data.bin"
bench_log "nginx $NGINX_VERSION serving $URL (pid $BENCH_SERVER_PID)"

# --- Programs ---------------------------------------------------------------------------------
bench_snapshot
cc -O2 -Wall -Wextra -o "$TMP/raw_curl" "$HERE/raw_curl.c" -lcurl
cc -O2 -Wall -Wextra -I"$TMP/include" -o "$TMP/hc_bench" "$HERE/hc_bench.c" \
    "$TMP/lib/libhttpcontent.so.0" -Wl,-rpath,"$TMP/lib"

PYPATH="$TMP/py"
PYCURL_NOTE="not measured (BENCH_PYCURL=0)"
if [ "$WANT_PYCURL" != 0 ]; then
    if "$PYTHON" -c 'import pycurl' 2>/dev/null; then
        PYCURL_NOTE="installed: $("$PYTHON" -c 'import pycurl; print(pycurl.version)')"
    else
        # Built from source against the system libcurl, into a cache folder (not site-packages).
        if ! PYTHONPATH="$PYDEPS" "$PYTHON" -c 'import pycurl' 2>/dev/null; then
            bench_log "pycurl missing: pip install --no-binary pycurl --target $PYDEPS pycurl"
            bench_pip_into_cache --no-binary pycurl --no-deps pycurl || true
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
# The anchor is libcurl tuned as its expert would: CURLOPT_BUFFERSIZE at RAW_TUNED_BUFFER (256 KiB,
# where CPU per byte stops falling here); the untuned programs are kept for context. Files are
# written to $TMP (the same disk for every contestant).
TUNED=${RAW_TUNED_BUFFER:-262144}
export BENCH_FILE="$TMP/out.bin" RAW_FILE="$TMP/out.bin"
CONTESTANTS=(
    "raw-discard|$TMP/raw_curl discard"
    "raw-accumulate|$TMP/raw_curl accumulate"
    "raw-tuned-discard|env RAW_BUFFERSIZE=$TUNED $TMP/raw_curl discard"
    "raw-tuned-accumulate|env RAW_BUFFERSIZE=$TUNED $TMP/raw_curl accumulate"
    "raw-tuned-file|env RAW_BUFFERSIZE=$TUNED $TMP/raw_curl file"
    "raw-tuned-file-fsync|env RAW_BUFFERSIZE=$TUNED RAW_FSYNC=1 $TMP/raw_curl file"
    "hc-py-file|$PYTHON $HERE/hc_bench.py hc-file"
    "hc-py-file-nofsync|$PYTHON $HERE/hc_bench.py hc-file-nofsync"
    "requests-file|$PYTHON $HERE/hc_bench.py requests-file"
    "requests-file-nofsync|$PYTHON $HERE/hc_bench.py requests-file-nofsync"
    "hc-c-file|$TMP/hc_bench file"
    "hc-c-file-nofsync|$TMP/hc_bench file-nofsync"
    "hc-c-discard|$TMP/hc_bench discard"
    "hc-c-bytes|$TMP/hc_bench bytes"
    "hc-py-discard|$PYTHON $HERE/hc_bench.py hc-discard"
    "hc-py-bytes|$PYTHON $HERE/hc_bench.py hc-bytes"
    "urllib3|$PYTHON $HERE/hc_bench.py urllib3"
    "requests|$PYTHON $HERE/hc_bench.py requests"
    "pycurl-discard|$PYTHON $HERE/hc_bench.py pycurl-discard"
    "pycurl-bytes|$PYTHON $HERE/hc_bench.py pycurl-bytes"
)

# Every to-file measurement starts from the same target, whoever ran before: with
# BENCH_FILE_START=cached (the default) a previous version of the file, whole, fsync'd and in the
# page cache (a copy of the served file); with =none no file. Otherwise each contestant inherits
# the state the previous one left (truncated and rewritten, or renamed over and released from the
# cache), and that decides whether its new bytes go to pages the old file frees first
# (bench/README.md, "Downloads to a file"). Untimed.
FILE_START=${BENCH_FILE_START:-cached}
case $FILE_START in cached|none) ;; *) bench_die "BENCH_FILE_START must be cached or none" ;; esac
reset_target() {
    if [ "$FILE_START" = none ]; then
        rm -f "$BENCH_FILE"
        sync -f "$TMP"
    else
        dd if="$TMP/www/data.bin" of="$BENCH_FILE" bs=1M conv=fsync status=none
    fi
}

# Runs contestant $1 for $2 downloads; prints "MB/s CPU-s/GB". Exit 3: not installed.
measure() {
    local id=$1 count=$2 entry cmd out
    for entry in "${CONTESTANTS[@]}"; do
        [ "${entry%%|*}" = "$id" ] && cmd=${entry#*|}
    done
    case $id in *-file*) reset_target ;; esac
    # shellcheck disable=SC2086  # cmd is a word list
    out=$(bench_run_client "$id" $cmd "$URL" "$count" "$EXPECTED") || return
    bench_mbps "$id" "$out"
}

# --- Warm-up, availability, calibration --------------------------------------------------------
bench_log "warm-up: one download each"
ACTIVE=()
for entry in "${CONTESTANTS[@]}"; do
    id=${entry%%|*}
    if [ -n "$ONLY" ] && [[ " $ONLY " != *" $id "* ]]; then continue; fi
    if [ "${id#pycurl}" != "$id" ] && [ "${PYCURL_NOTE#not measured}" != "$PYCURL_NOTE" ]; then continue; fi
    if m=$(measure "$id" 1); then
        ACTIVE+=("$id")
        bench_log "  $id: ${m% *} MB/s"
    else
        rc=$?
        [ "$rc" -eq 3 ] && { bench_log "  $id: not installed, skipped"; continue; }
        bench_die "warm-up of $id failed"
    fi
done

if [ -z "$COUNT" ]; then
    [ ${#ACTIVE[@]} -gt 0 ] || bench_die "no contestant left (BENCH_ONLY=$ONLY)"
    CALIBRATE=raw-discard
    [[ -z "$ONLY" || " $ONLY " == *" raw-discard "* ]] || CALIBRATE=${ACTIVE[0]}
    m=$(measure "$CALIBRATE" 3) || bench_die "calibration failed"
    mbps=${m% *}
    COUNT=$("$PYTHON" -c "import math, sys; s = $EXPECTED / ($mbps * 1e6); print(max(1, math.ceil(1.2 * $MIN_SECONDS / s)))")
    bench_log "calibration: $CALIBRATE at $mbps MB/s; $COUNT downloads per measurement"
fi

# --- Rounds, interleaved; the starting contestant rotates each round ---------------------------
RESULTS="$TMP/results.tsv"
printf 'round\tcontestant\tmbps\tcpu_s_per_gb\n' >"$RESULTS"
LOAD_BEFORE=$(bench_loadavg)
START=$(date +%s)
n=${#ACTIVE[@]}
for round in $(seq "$ROUNDS"); do
    for k in $(seq 0 $((n - 1))); do
        id=${ACTIVE[$(((k + round - 1) % n))]}
        m=$(measure "$id" "$COUNT") || bench_die "$id failed in round $round"
        printf '%s\t%s\t%s\t%s\n' "$round" "$id" "${m% *}" "${m#* }" >>"$RESULTS"
        bench_log "round $round/$ROUNDS  $(printf '%-15s' "$id") ${m% *} MB/s  (client CPU ${m#* } s/GB)"
    done
done
ELAPSED=$(($(date +%s) - START))
LOAD_AFTER=$(bench_loadavg)

# --- Report -----------------------------------------------------------------------------------
bench_export_meta
BENCH_META_FILE_START=$FILE_START BENCH_META_SIZE_MB=$SIZE_MB BENCH_META_ROUNDS=$ROUNDS BENCH_META_COUNT=$COUNT \
BENCH_META_PYCURL=$PYCURL_NOTE BENCH_META_PYLIBS="$(bench_pylibs urllib3 requests)" \
    "$PYTHON" "$HERE/report.py" "$RESULTS" "$OUTPUT"
bench_log "done in ${ELAPSED}s of measurements; section written to $OUTPUT"
