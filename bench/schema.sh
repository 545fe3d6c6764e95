#!/usr/bin/env bash
# Schema benchmark (issue 18): what JSON Schema validation costs, on the rich document json.sh
# serves, with a realistic schema (types, required, bounds, a pattern, additionalProperties,
# prefixItems, nested objects; bench/schema.sh writes it to $TMP/schema.json).
#
#   (a) from Python, the validation rate of hc.Schema(schema).validate(doc) against the
#       jsonschema package's Draft202012Validator(schema).validate(doc), the document already
#       loaded as Python objects (BENCH_SCHEMA_PY_MB, default 10 MiB). Target: >= 10x.
#   (b) from C, parse + validate time over parse time alone on the BENCH_SCHEMA_MB (100 MiB)
#       document: in memory (hc_json_parse, then hc_schema_validate_json), streaming the whole
#       tree (hc_handler_json_new over loopback from nginx, with hc_handler_json_set_schema), and
#       path streaming (hc_handler_json_items_new, each item validated before its callback).
#       Target: <= 1.3x.
#
# Contestants run round-robin (the first rotates each round), client pinned to CPU 1 and nginx
# to CPU 0. Prints, for each pair, the per-round ratios with their median and min-max; writes
# nothing else (BENCHMARKS.md is left alone).
#
#   bash bench/schema.sh                                            # ~4 minutes on a quiet machine
#   BENCH_SCHEMA_MB=8 BENCH_SCHEMA_PY_MB=1 BENCH_ROUNDS=2 bash bench/schema.sh   # smoke run
#
# Knobs (environment): BENCH_SCHEMA_MB (100), BENCH_SCHEMA_PY_MB (10), BENCH_ROUNDS (5),
# BENCH_COUNT (passes per measurement, 1), BENCH_SERVER_CPU (0), BENCH_CLIENT_CPU (1),
# BENCH_TIMEOUT (seconds per measurement, 300), BENCH_LIBDIR (build), BENCH_ONLY (contestants,
# default all), BENCH_KEEP_RESULTS (a path to copy the per-round TSV to), PYTHON (python3).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_TAG=schema-bench
. "$HERE/lib.sh"
SIZE_MB=${BENCH_SCHEMA_MB:-100}
PY_MB=${BENCH_SCHEMA_PY_MB:-10}
ROUNDS=${BENCH_ROUNDS:-5}
COUNT=${BENCH_COUNT:-1}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
CLIENT_CPU=${BENCH_CLIENT_CPU:-1}
STEP_TIMEOUT=${BENCH_TIMEOUT:-300}
ONLY=${BENCH_ONLY:-}

bench_need_nginx
bench_need_tools
bench_need_library
bench_pin nginx client
bench_make_tmp schemabench

# --- The documents and the schema -------------------------------------------------------------
# The rich document of json.sh (objects with escaped and non-ASCII strings, floats, nesting), at
# SIZE_MB for C and PY_MB for Python.
mkdir -p "$TMP/www"
chmod 755 "$TMP/www"
write_doc() {  # PATH MIB -> prints "BYTES ITEMS"
    "$PYTHON" - "$1" "$2" <<'PY'
import json, sys
path, limit = sys.argv[1], int(float(sys.argv[2]) * 1048576)
size, i, parts = 1, 0, ["["]
with open(path, "w", encoding="utf-8") as f:
    while size < limit:
        s = json.dumps({"id": i, "name": 'item "%d"\n' % i, "text": "caf\u00e9 \\ path/%d \u2713" % i,
                        "score": i * 0.37, "geo": {"lat": 45.1234567 + i * 1e-7, "lon": -73.7654321,
                                                   "tags": ["a", "b", {"k": i}]},
                        "flags": [True, False, None]}, ensure_ascii=False)
        s = ("," if i else "") + s
        parts.append(s)
        size += len(s.encode("utf-8"))
        i += 1
        if len(parts) >= 10000:
            f.write("".join(parts))
            parts = []
    parts.append("]")
    f.write("".join(parts))
print(size + 1, i)
PY
}
bench_log "writing the rich JSON documents (${SIZE_MB} MiB for C, ${PY_MB} MiB for Python)"
read -r EXPECTED ITEMS < <(write_doc "$TMP/www/data.json" "$SIZE_MB")
read -r PY_BYTES PY_ITEMS < <(write_doc "$TMP/py.json" "$PY_MB")
chmod 644 "$TMP/www/data.json"
[ "$(stat -c %s "$TMP/www/data.json")" = "$EXPECTED" ] || bench_die "the JSON file is not $EXPECTED bytes"
bench_log "  C: $EXPECTED bytes, $ITEMS items; Python: $PY_BYTES bytes, $PY_ITEMS items"

SCHEMA="$TMP/schema.json"
cat >"$SCHEMA" <<'JSON'
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "array",
  "items": {
    "type": "object",
    "required": ["id", "name", "text", "score", "geo", "flags"],
    "additionalProperties": false,
    "properties": {
      "id": {"type": "integer", "minimum": 0},
      "name": {"type": "string", "minLength": 1, "maxLength": 64},
      "text": {"type": "string", "pattern": "^caf"},
      "score": {"type": "number", "minimum": 0},
      "geo": {
        "type": "object",
        "required": ["lat", "lon"],
        "properties": {
          "lat": {"type": "number", "minimum": -90, "maximum": 90},
          "lon": {"type": "number", "minimum": -180, "maximum": 180},
          "tags": {
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "string"}],
            "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "integer"}}}
          }
        }
      },
      "flags": {"type": "array", "maxItems": 3, "items": {"type": ["boolean", "null"]}}
    }
  }
}
JSON

# --- nginx, the programs ----------------------------------------------------------------------
bench_start_nginx http="types { application/json json; }"
URL="http://127.0.0.1:$PORT/data.json"
bench_log "nginx $NGINX_VERSION serving $URL (pid $BENCH_SERVER_PID)"
bench_snapshot
cc -O2 -Wall -Wextra -I"$TMP/include" -o "$TMP/schema_bench" "$HERE/schema_bench.c" \
    "$TMP/lib/libhttpcontent.so.0" -Wl,-rpath,"$TMP/lib"
PYPATH="$TMP/py"
JSONSCHEMA_NOTE=$(PYTHONPATH="$PYPATH" "$PYTHON" -c 'import jsonschema, importlib.metadata as m; print("jsonschema", m.version("jsonschema"))' 2>/dev/null \
    || echo "jsonschema not installed (pip install jsonschema): contestant skipped")

# Contestants: id|command (SOURCE SCHEMA COUNT EXPECTED_BYTES EXPECTED_ITEMS appended for C;
# JSON_FILE SCHEMA COUNT for Python).
CONTESTANTS=(
    "parse|c $TMP/schema_bench parse $TMP/www/data.json"
    "parse-schema|c $TMP/schema_bench parse-schema $TMP/www/data.json"
    "tree|c $TMP/schema_bench tree $URL"
    "tree-schema|c $TMP/schema_bench tree-schema $URL"
    "items|c $TMP/schema_bench items $URL"
    "items-schema|c $TMP/schema_bench items-schema $URL"
    "py-hc|py $PYTHON $HERE/schema_bench.py hc $TMP/py.json"
    "py-jsonschema|py $PYTHON $HERE/schema_bench.py jsonschema $TMP/py.json"
)
# Pairs for the report: label|numerator|denominator|how ("time": ratio of times, the second
# contestant's MB/s over the first's; "rate": ratio of rates)|target.
PAIRS=(
    "in memory: (parse + validate) / parse|parse|parse-schema|time|<= 1.3"
    "streaming tree: (parse + validate) / parse|tree|tree-schema|time|<= 1.3"
    "path streaming: (parse + validate) / parse|items|items-schema|time|<= 1.3"
    "Python: hc.Schema / jsonschema validation rate|py-hc|py-jsonschema|rate|>= 10"
)

measure() {  # ID COUNT -> "MB/s CPU-s/GB"
    local id=$1 count=$2 entry cmd="" kind out
    for entry in "${CONTESTANTS[@]}"; do
        [ "${entry%%|*}" = "$id" ] && cmd=${entry#*|}
    done
    kind=${cmd%% *}
    cmd=${cmd#* }
    # shellcheck disable=SC2086  # cmd is a word list
    if [ "$kind" = c ]; then
        out=$(bench_run_client "$id" $cmd "$SCHEMA" "$count" "$EXPECTED" "$ITEMS") || return
    else
        out=$(bench_run_client "$id" $cmd "$SCHEMA" "$count") || return
    fi
    bench_mbps "$id" "$out"
}

bench_log "warm-up: one pass each"
ACTIVE=()
for entry in "${CONTESTANTS[@]}"; do
    id=${entry%%|*}
    if [ -n "$ONLY" ] && [[ " $ONLY " != *" $id "* ]]; then continue; fi
    if m=$(measure "$id" 1); then
        ACTIVE+=("$id")
        bench_log "  $(printf '%-14s' "$id") ${m%% *} MB/s"
    else
        rc=$?
        [ "$rc" -eq 3 ] && { bench_log "  $id: not installed, skipped"; continue; }
        bench_die "warm-up of $id failed"
    fi
done

RESULTS="$TMP/results.tsv"
printf 'round\tcontestant\tmbps\tcpu_s_per_gb\n' >"$RESULTS"
LOAD_BEFORE=$(bench_loadavg)
START=$(date +%s)
n=${#ACTIVE[@]}
for round in $(seq "$ROUNDS"); do
    for k in $(seq 0 $((n - 1))); do
        id=${ACTIVE[$(((k + round - 1) % n))]}
        m=$(measure "$id" "$COUNT") || bench_die "$id failed in round $round"
        read -r mbps cpu <<<"$m"
        printf '%s\t%s\t%s\t%s\n' "$round" "$id" "$mbps" "$cpu" >>"$RESULTS"
        bench_log "round $round/$ROUNDS  $(printf '%-14s' "$id") $mbps MB/s  (CPU $cpu s/GB)"
    done
done
ELAPSED=$(($(date +%s) - START))
LOAD_AFTER=$(bench_loadavg)
[ -n "${BENCH_KEEP_RESULTS:-}" ] && cp "$RESULTS" "$BENCH_KEEP_RESULTS"

# --- Report: per-round ratios, median and min-max ------------------------------------------------
printf '%s\n' "${PAIRS[@]}" >"$TMP/pairs"
"$PYTHON" - "$RESULTS" "$TMP/pairs" <<PY
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
rate = {(r["round"], r["contestant"]): float(r["mbps"]) for r in rows}
rounds = sorted({r["round"] for r in rows}, key=int)
print("## JSON Schema validation (issue 18)\n")
print("C document: $EXPECTED bytes, $ITEMS items; Python document: $PY_BYTES bytes, $PY_ITEMS items.")
print("Library: $LIB_ID. $JSONSCHEMA_NOTE. $PINNING. $ROUNDS rounds x $COUNT pass(es), ${ELAPSED} s of")
print("measurements; load average $LOAD_BEFORE -> $LOAD_AFTER.\n")
print("| Measure | Per round | Median | Min-max | Target |")
print("|---|---|---|---|---|")
for line in open(sys.argv[2]).read().splitlines():
    label, a, b, how, target = line.split("|")
    ratios = []
    for r in rounds:
        if (r, a) in rate and (r, b) in rate:
            ratios.append(rate[(r, a)] / rate[(r, b)])   # time ratio b/a = rate a / rate b
    if not ratios:
        print(f"| {label} | not measured | | | {target} |")
        continue
    cells = ", ".join(f"{x:.2f}" for x in ratios)
    print(f"| {label} | {cells} | {statistics.median(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} | {target} |")
print()
print("| Contestant | Median MB/s | Median CPU s/GB |")
print("|---|---|---|")
for c in dict.fromkeys(r["contestant"] for r in rows):
    m = [float(r["mbps"]) for r in rows if r["contestant"] == c]
    cpu = [float(r["cpu_s_per_gb"]) for r in rows if r["contestant"] == c]
    print(f"| {c} | {statistics.median(m):.1f} | {statistics.median(cpu):.2f} |")
PY
bench_log "done in ${ELAPSED}s of measurements"
