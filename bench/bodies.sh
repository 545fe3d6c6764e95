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
#
# Knobs (environment): BENCH_ROUNDS (3), BENCH_UPLOAD_MB (1024), BENCH_PAIRS (100000),
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
bench_log "generating $PAIRS form pairs"
"$PYTHON" "$HERE/form_bench.py" gen "$TMP/pairs.bin" "$PAIRS"
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
    "hc-c-file|$TMP/upload_bench hc"
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
    # shellcheck disable=SC2086  # cmd is a word list
    out=$(bench_run_client "$id" $cmd "$@") || return 1
    case $out in
        FORM\ *|UPLOAD\ *) printf '%s\n' "$out" ;;
        *) bench_log "$id: unexpected output: $out"; return 1 ;;
    esac
}

field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# --- Identity check: every encoder's output, byte for byte ------------------------------------
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

# --- Rounds, interleaved; the first contestant of each group rotates every round --------------
RESULTS="$TMP/results.tsv"
printf 'round\tkind\tcontestant\tline\n' >"$RESULTS"
LOAD_BEFORE=$(bench_loadavg)
START=$(date +%s)
for round in $(seq "$ROUNDS"); do
    for kind in FORM UPLOAD; do
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
    "$PYTHON" "$HERE/bodies_report.py" "$RESULTS" "$OUTPUT"
bench_log "done in ${ELAPSED}s of measurements; section written to $OUTPUT"
