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
#       The contestants are json.sh's (json_bench.c hc-parse, hc-c-tree, hc-c-items), with the
#       schema file as their last argument for the "-schema" ones. Target: <= 1.3x.
#
# The document is json.sh's rich one (json_doc.py). Contestants run round-robin (bench/lib.sh's
# bench_warm_up and bench_rounds: the first rotates each round), client pinned to CPU 1 and
# nginx to CPU 0. Prints, for each pair, the per-round ratios with their median and min-max;
# writes nothing else (BENCHMARKS.md is left alone).
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
# The rich document of json.sh, at SIZE_MB for C and PY_MB for Python.
mkdir -p "$TMP/www"
chmod 755 "$TMP/www"
bench_log "writing the rich JSON documents (${SIZE_MB} MiB for C, ${PY_MB} MiB for Python)"
read -r EXPECTED ITEMS < <("$PYTHON" "$HERE/json_doc.py" "$TMP/www/data.json" "$SIZE_MB" rich)
read -r PY_BYTES PY_ITEMS < <("$PYTHON" "$HERE/json_doc.py" "$TMP/py.json" "$PY_MB" rich)
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
cc -O2 -Wall -Wextra -I"$TMP/include" -o "$TMP/json_bench" "$HERE/json_bench.c" \
    "$TMP/lib/libhttpcontent.so.0" -lcurl -lyajl -Wl,-rpath,"$TMP/lib"
PYPATH="$TMP/py"
JSONSCHEMA_NOTE=$(PYTHONPATH="$PYPATH" "$PYTHON" -c 'import jsonschema, importlib.metadata as m; print("jsonschema", m.version("jsonschema"))' 2>/dev/null \
    || echo "jsonschema not installed (pip install jsonschema): contestant skipped")

# Contestants: id|command. C: COUNT EXPECTED_BYTES EXPECTED_ITEMS are appended, then the schema
# file for the "-schema" ones; Python: SCHEMA COUNT.
CONTESTANTS=(
    "parse|c $TMP/json_bench hc-parse $TMP/www/data.json"
    "parse-schema|c $TMP/json_bench hc-parse $TMP/www/data.json"
    "tree|c $TMP/json_bench hc-c-tree $URL"
    "tree-schema|c $TMP/json_bench hc-c-tree $URL"
    "items|c $TMP/json_bench hc-c-items $URL"
    "items-schema|c $TMP/json_bench hc-c-items $URL"
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

measure() {  # ID COUNT -> "MB/s CPU-s/GB [RSS]"
    local id=$1 count=$2 entry cmd="" kind out extra=()
    [ "${id%-schema}" = "$id" ] || extra=("$SCHEMA")
    for entry in "${CONTESTANTS[@]}"; do
        [ "${entry%%|*}" = "$id" ] && cmd=${entry#*|}
    done
    kind=${cmd%% *}
    cmd=${cmd#* }
    # shellcheck disable=SC2086  # cmd is a word list
    if [ "$kind" = c ]; then
        out=$(bench_run_client "$id" $cmd "$count" "$EXPECTED" "$ITEMS" "${extra[@]}") || return
        bench_mbps "$id" "$out" rss
    else
        out=$(bench_run_client "$id" $cmd "$SCHEMA" "$count") || return
        bench_mbps "$id" "$out"
    fi
}

# --- Warm-up, then the rounds (bench/lib.sh) --------------------------------------------------
bench_warm_up "${CONTESTANTS[@]%%|*}"
bench_rounds

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
