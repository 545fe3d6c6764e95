#!/usr/bin/env bash
# Request-body benchmark (issue 5), in one run with interleaved rounds:
#  1. form-encoding throughput on the same 100,000 pairs: libhttpcontent from C (hc_form_* +
#     hc_form_encode) and from Python (hc.form_encode), curl_easy_escape on every key and value
#     (C), and Python's urllib.parse.urlencode(pairs, quote_via=quote); all four outputs are
#     checked to be byte-identical first;
#  2. a streamed upload of a 1 GiB file to a local sink server that reads and discards the body
#     and answers with the byte count it received: raw libcurl (C) against libhttpcontent from C
#     (hc_request_set_file_body) and from Python (data=open(path, "rb")), plus, for context,
#     Python iterables of bytes; throughput ratio and peak RSS growth (VmHWM).
# Writes the section "## Request bodies (issue 5)" of BENCHMARKS.md. See bench/README.md.
#
#   bash bench/bodies.sh
#   BENCH_PARTS=upload bash bench/bodies.sh     # the upload comparison alone (issue 15)
#
# The upload anchor is libcurl tuned (issue 15): raw-tuned-c sets CURLOPT_UPLOAD_BUFFERSIZE to
# RAW_TUNED_UPLOAD_BUFFER, or, if unset, to the size a short sweep before the rounds finds
# cheapest in client CPU per byte (64 KiB, libcurl's default, to 2 MiB); raw-c, untuned, stays for context.
#
# Knobs (environment): BENCH_PARTS ("form upload"), BENCH_ROUNDS (3), BENCH_UPLOAD_MB (1024), BENCH_PAIRS (100000),
# BENCH_FORM_SECONDS (1.0: minimum length of one form measurement), BENCH_ITERABLES (1: also
# measure the Python iterable uploads; 0: skip them), BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1),
# BENCH_OUTPUT (BENCHMARKS.md), BENCH_TIMEOUT (120 s per measurement), BENCH_LIBDIR (build),
# PYTHON (python3).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_TAG=bodies
. "$HERE/lib.sh"
ROUNDS=${BENCH_ROUNDS:-3}
UPLOAD_MB=${BENCH_UPLOAD_MB:-1024}
PAIRS=${BENCH_PAIRS:-100000}
FORM_SECONDS=${BENCH_FORM_SECONDS:-1.0}
ITERABLES=${BENCH_ITERABLES:-1}
PARTS=${BENCH_PARTS:-form upload}
TUNED_UPLOAD=${RAW_TUNED_UPLOAD_BUFFER:-}
SWEEP_SIZES=${BENCH_UPLOAD_SWEEP:-65536 262144 1048576 2097152}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
OUTPUT=${BENCH_OUTPUT:-$ROOT/BENCHMARKS.md}
STEP_TIMEOUT=${BENCH_TIMEOUT:-120}

# --- Prerequisites, temp dir ------------------------------------------------------------------
bench_need_tools
command -v curl-config >/dev/null || bench_die "curl-config missing (libcurl4-openssl-dev)"
bench_need_library
bench_pin "sink server" clients
bench_make_tmp bodies

# --- Snapshot of the library, programs --------------------------------------------------------
bench_snapshot
mkdir -p "$TMP/out"
CFLAGS=(-O2 -Wall -Wextra -I"$TMP/include")
HCLIB=("$TMP/lib/libhttpcontent.so.0" -Wl,-rpath,"$TMP/lib" -lcurl)
cc "${CFLAGS[@]}" -o "$TMP/upload_sink" "$HERE/upload_sink.c"
cc "${CFLAGS[@]}" -o "$TMP/upload_bench" "$HERE/upload_bench.c" "${HCLIB[@]}"
cc "${CFLAGS[@]}" -o "$TMP/form_bench" "$HERE/form_bench.c" "${HCLIB[@]}"
export PYTHONPATH="$TMP/py"

# --- Inputs -----------------------------------------------------------------------------------
if [[ " $PARTS " == *" form "* ]]; then
    bench_log "generating $PAIRS form pairs"
    "$PYTHON" "$HERE/form_bench.py" gen "$TMP/pairs.bin" "$PAIRS"
fi
UPLOAD_BYTES=$((UPLOAD_MB * 1048576))
bench_log "making a sparse ${UPLOAD_MB} MiB file and reading it once (page cache)"
truncate -s "$UPLOAD_BYTES" "$TMP/upload.bin"
cat "$TMP/upload.bin" >/dev/null
head -c 1048576 /dev/urandom >"$TMP/warmup.bin"

# --- The sink server --------------------------------------------------------------------------
"${PIN_SERVER[@]}" "$TMP/upload_sink" 0 >"$TMP/sink.out" 2>"$TMP/sink.err" &
BENCH_SERVER_PID=$!
PORT=
for _ in $(seq 100); do
    PORT=$(sed -n 's/^PORT //p' "$TMP/sink.out" 2>/dev/null || true)
    [ -n "$PORT" ] && break
    kill -0 "$BENCH_SERVER_PID" 2>/dev/null || { cat "$TMP/sink.err" >&2; bench_die "the sink server did not start"; }
    sleep 0.05
done
[ -n "$PORT" ] || bench_die "the sink server did not report its port"
URL="http://127.0.0.1:$PORT/upload"
bench_log "sink server at $URL (pid $BENCH_SERVER_PID)"

# --- Contestants ------------------------------------------------------------------------------
# id|command; form commands get PAIRS_FILE MIN_SECONDS [OUT]; upload commands URL FILE WARMUP.
FORM=(
    "hc-c|$TMP/form_bench hc"
    "curl-escape-c|$TMP/form_bench curl"
    "hc-py|$PYTHON $HERE/form_bench.py hc"
    "urlencode-py|$PYTHON $HERE/form_bench.py urllib"
)
UPLOAD=(
    "raw-c|$TMP/upload_bench raw"
    "raw-tuned-c|env RAW_UPLOAD_BUFFERSIZE=@TUNED@ $TMP/upload_bench raw"
    "hc-c-file|$TMP/upload_bench hc"
    "hc-c-read|$TMP/upload_bench hc-read"
    "hc-py-file|$PYTHON $HERE/upload_bench.py hc-file"
)
if [ "$ITERABLES" != 0 ]; then
    UPLOAD+=("hc-py-iter-64k|$PYTHON $HERE/upload_bench.py hc-iter-64k"
             "hc-py-iter-1m|$PYTHON $HERE/upload_bench.py hc-iter-1m")
fi

# run KIND ID ARGS...: prints the program's result line; fails loudly.
run() {
    local kind=$1 id=$2 entry cmd out
    shift 2
    local -n list=$kind
    for entry in "${list[@]}"; do
        [ "${entry%%|*}" = "$id" ] && cmd=${entry#*|}
    done
    cmd=${cmd//@TUNED@/${TUNED_UPLOAD:-0}}
    # shellcheck disable=SC2086  # cmd is a word list
    out=$(bench_run_client "$id" $cmd "$@") || return 1
    case $out in
        FORM\ *|UPLOAD\ *) printf '%s\n' "$out" ;;
        *) bench_log "$id: unexpected output: $out"; return 1 ;;
    esac
}

field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# --- The tuned upload anchor: CURLOPT_UPLOAD_BUFFERSIZE by measurement -------------------------
SWEEP_NOTE="set by RAW_TUNED_UPLOAD_BUFFER"
if [[ " $PARTS " == *" upload "* ]] && [ -z "$TUNED_UPLOAD" ]; then
    bench_log "upload buffer sweep (raw libcurl, 2 uploads per size: CPU seconds per GB, the lower of the two; MB/s beside it)"
    best=""
    SWEEP_NOTE="picked by a sweep before the rounds, the least client CPU per byte (CPU s/GB, best of 2; MB/s):"
    for size in $SWEEP_SIZES; do
        top=""
        for _ in 1 2; do
            line=$(TUNED_UPLOAD=$size run UPLOAD raw-tuned-c "$URL" "$TMP/upload.bin" "$TMP/warmup.bin") \
                || bench_die "raw upload with a $size-byte buffer failed"
            cost=$("$PYTHON" -c "print(round($(field "$line" cpu) / $(field "$line" bytes) * 1e9, 4))")
            if [ -z "$top" ] || "$PYTHON" -c "import sys; sys.exit(0 if $cost < $top else 1)"; then
                top=$cost
                rate=$(field "$line" mbps)
            fi
        done
        bench_log "  $(printf '%8s' "$size") bytes: $top CPU s/GB, $rate MB/s"
        SWEEP_NOTE="$SWEEP_NOTE $((size / 1024)) KiB $top ($rate MB/s);"
        if [ -z "$best" ] || "$PYTHON" -c "import sys; sys.exit(0 if $top < $best else 1)"; then
            best=$top
            TUNED_UPLOAD=$size
        fi
    done
    bench_log "  tuned anchor: CURLOPT_UPLOAD_BUFFERSIZE $TUNED_UPLOAD"
fi
SWEEP_NOTE="${SWEEP_NOTE%;}"

# --- Identity check: every encoder's output, byte for byte ------------------------------------
if [[ " $PARTS " == *" form "* ]]; then
bench_log "identity check: encoding the pairs once with each encoder"
for entry in "${FORM[@]}"; do
    id=${entry%%|*}
    run FORM "$id" "$TMP/pairs.bin" 0 "$TMP/out/$id.txt" >/dev/null || bench_die "$id failed"
done
REF="$TMP/out/urlencode-py.txt"
IDENTITY="all four outputs byte-identical ($(wc -c <"$REF") bytes, sha256 $(sha256sum "$REF" | cut -c1-16)…)"
for entry in "${FORM[@]}"; do
    id=${entry%%|*}
    cmp -s "$REF" "$TMP/out/$id.txt" || bench_die "$id's output differs from urlencode's: $(cmp "$REF" "$TMP/out/$id.txt" 2>&1 | head -1)"
done
bench_log "  $IDENTITY"
# The + mode, for the record (not timed): hc with space="+" against quote_plus.
PLUS_CHECK=$("$PYTHON" - "$TMP/pairs.bin" "$HERE" <<'EOF'
import sys, urllib.parse
sys.path.insert(0, sys.argv[2])
import form_bench, httpcontent as hc
pairs = form_bench.load(sys.argv[1])
same = hc.form_encode(pairs, space="+") == urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote_plus)
print("identical" if same else "DIFFERENT")
EOF
)
bench_log "  + mode (hc space=\"+\" against urlencode's default quote_plus): $PLUS_CHECK"
else
    IDENTITY="not run" PLUS_CHECK="not run"
fi

# --- Rounds, interleaved; the first contestant of each group rotates every round --------------
RESULTS="$TMP/results.tsv"
printf 'round\tkind\tcontestant\tline\n' >"$RESULTS"
LOAD_BEFORE=$(bench_loadavg)
START=$(date +%s)
for round in $(seq "$ROUNDS"); do
    for kind in FORM UPLOAD; do
        [[ " ${PARTS^^} " == *" $kind "* ]] || continue
        declare -n group=$kind
        n=${#group[@]}
        for k in $(seq 0 $((n - 1))); do
            entry=${group[$(((k + round - 1) % n))]}
            id=${entry%%|*}
            if [ "$kind" = FORM ]; then
                line=$(run FORM "$id" "$TMP/pairs.bin" "$FORM_SECONDS") || bench_die "$id failed in round $round"
                bench_log "round $round/$ROUNDS  form    $(printf '%-15s' "$id") $(field "$line" mbps) MB/s  (cpu $(field "$line" cpu) s for $(field "$line" iters) encodes)"
            else
                line=$(run UPLOAD "$id" "$URL" "$TMP/upload.bin" "$TMP/warmup.bin") || bench_die "$id failed in round $round"
                bench_log "round $round/$ROUNDS  upload  $(printf '%-15s' "$id") $(field "$line" mbps) MB/s  (cpu $(field "$line" cpu) s, peak RSS +$(field "$line" hwm_growth_kib) KiB)"
            fi
            printf '%s\t%s\t%s\t%s\n' "$round" "$kind" "$id" "$line" >>"$RESULTS"
        done
        unset -n group
    done
done
ELAPSED=$(($(date +%s) - START))
LOAD_AFTER=$(bench_loadavg)

# --- Report -----------------------------------------------------------------------------------
bench_export_meta
BENCH_META_ROUNDS=$ROUNDS BENCH_META_PAIRS=$PAIRS BENCH_META_UPLOAD_MB=$UPLOAD_MB \
BENCH_META_FORM_SECONDS=$FORM_SECONDS BENCH_META_IDENTITY=$IDENTITY BENCH_META_PLUS=$PLUS_CHECK \
BENCH_META_TUNED_UPLOAD=${TUNED_UPLOAD:-0} BENCH_META_UPLOAD_SWEEP=$SWEEP_NOTE \
    "$PYTHON" "$HERE/bodies_report.py" "$RESULTS" "$OUTPUT"
bench_log "done in ${ELAPSED}s of measurements; section written to $OUTPUT"
