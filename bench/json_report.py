"""Turns bench/json.sh's measurements into the "## JSON (issue 4)" section of BENCHMARKS.md
(replacing only that section) and prints it.

    python3 json_report.py RESULTS.tsv BENCHMARKS.md

RESULTS.tsv has the columns round, contestant, mbps, cpu_s_per_gb (the client's user + system CPU
seconds per 10^9 bytes of JSON) and rss_bytes (peak RSS growth during the measurement). The run's
facts come from BENCH_META_* environment variables set by json.sh.
"""

from __future__ import annotations

import sys

import report_common as rc  # bench/report_common.py, same folder

SECTION = "## JSON (issue 4)"

LABELS = {
    "yajl-raw": "raw `yajl_parse` in C, bytes in memory, no-op callbacks incl. integer/double",
    "yajl-raw-number": "same, no-op number callback instead (no number conversion)",
    "hc-parse": "`hc_json_parse` on the same bytes in memory (the library's tree)",
    "curl-yajl": "libcurl + `yajl_parse` in C over loopback (no-op integer/double callbacks)",
    "hc-c-tree": "C: `hc_handler_json_new` (tree while downloading), `hc_response_json`",
    "hc-c-items": "C: `hc_handler_json_items_new({\"item\"})`, one callback per element",
    "hc-c-batches": "C: `hc_handler_json_batches_new({\"item\"})`, JSON-text batches",
    "hc-py-json": "Python: `client.get(url, handler=hc.JSON()).content`",
    "requests": "Python: `json.loads(requests.Session().get(url).content)`",
    "urllib3": "Python: `json.loads(urllib3.PoolManager().request(...).data)`",
    "hc-py-items": "Python: `hc.JSONItems(\"item\", on_item)` handler",
    "hc-py-iter": "Python: `for v in client.iter_json(url, \"item\")`",
    "ijson": "Python: `ijson.items(requests stream, \"item\", use_float=True)`, yajl2_c backend: **the anchor**",
    "ijson-decimal": "Python: the same with ijson's default `use_float=False` (Decimals)",
    "requests-orjson": "Python: `orjson.loads(requests.Session().get(url).content)`",
    "requests-msgspec": "Python: `msgspec.json.decode(requests.Session().get(url).content)`",
}

# (numerator, denominator, target ("≥ x" or "> x", met by the median CPU ratio) or None for context, what)
RATIOS = [
    ("hc-c-tree", "yajl-raw", "≥ 0.7", "tree while downloading vs raw yajl"),
    ("hc-parse", "yajl-raw", "≥ 0.7", "tree in memory vs raw yajl (no network)"),
    ("hc-parse", "yajl-raw-number", None, "tree in memory vs raw yajl, number callback"),
    ("curl-yajl", "yajl-raw", None, "libcurl + yajl vs raw yajl"),
    ("hc-c-tree", "curl-yajl", None, "tree while downloading vs libcurl + yajl"),
    ("hc-c-items", "yajl-raw", None, "path streaming (trees) vs raw yajl"),
    ("hc-c-batches", "yajl-raw", None, "path streaming (batches) vs raw yajl"),
    ("hc-c-items", "curl-yajl", "≥ 0.9", "C path streaming vs libcurl + yajl with no-op callbacks"),
    ("hc-py-json", "requests-orjson", "≥ 1.25", "Python whole document vs requests + orjson"),
    ("hc-py-json", "requests-msgspec", "≥ 1.25", "Python whole document vs requests + msgspec"),
    ("hc-py-json", "requests", "> 1", "Python whole document vs requests + json.loads"),
    ("hc-py-json", "urllib3", None, "Python whole document vs urllib3 + json.loads"),
    ("hc-py-iter", "ijson", "≥ 1.5", "Python path streaming (iter_json) vs ijson yajl2_c, use_float=True"),
    ("hc-py-items", "ijson", "≥ 1.5", "Python path streaming (JSONItems) vs ijson yajl2_c, use_float=True"),
    ("hc-py-iter", "ijson-decimal", None, "the same vs ijson's default (Decimals)"),
]

# Peak RSS growth targets (MiB): path streaming the array.
RSS_TARGETS = {"hc-c-items": 32, "hc-c-batches": 32, "hc-py-items": 32, "hc-py-iter": 32}


def section(mbps: dict, cpu: dict, rss: dict) -> str:
    meta = rc.meta
    rounds = sorted({r for per in mbps.values() for r in per})
    size = int(meta("SIZE", "0") or 0)

    lines = [SECTION, ""]
    lines.append(f"{rc.measured_by('json.sh')}, "
                 f"yajl {meta('YAJL')} (system), "
                 f"nginx {meta('NGINX')}, Python {meta('PYTHON')} "
                 f"({meta('PYLIBS')}); ijson: {meta('IJSON')}.")
    lines.append("")
    if meta("DOC", "rich") == "simple":
        shape = "small objects (`{\"id\": i, \"name\": \"item i\", \"tags\": [\"a\", \"b\"], \"value\": i*1.5}`)"
    else:   # bench/json_doc.py's rich document (issue 15)
        shape = ("rich objects (escaped and non-ASCII strings, floats, nesting: `{\"id\": i, \"name\": "
                 "\"item \\\"i\\\"\\n\", \"text\": \"café \\\\ path/i ✓\", \"score\": i*0.37, \"geo\": {\"lat\": …, "
                 "\"lon\": …, \"tags\": [\"a\", \"b\", {\"k\": i}]}, \"flags\": [true, false, null]}`)")
    lines.append(f"One JSON array of {int(meta('ITEMS', '0') or 0):,} {shape}, "
                 f"{size:,} bytes ({size / 1048576:.0f} MiB), served as `application/json` by nginx "
                 f"on 127.0.0.1 (`sendfile on`, keep-alive) or read into memory first (raw yajl, "
                 f"`hc_json_parse`); {meta('PINNING')}. Each measurement is "
                 f"{meta('COUNT')} pass(es) in a fresh process; every pass is checked "
                 f"(bytes and element count). {len(rounds)} rounds, contestants interleaved "
                 f"round-robin (the first rotating each round); {meta('ELAPSED')} s of "
                 f"measuring, load average {meta('LOAD')}. MB/s = 10^6 bytes of JSON "
                 f"per second of wall time, in each round. CPU = the client process's user + "
                 f"system CPU seconds (every thread) per 10^9 bytes: on this "
                 f"shared machine wall time swings with other work, CPU per byte far less, so the "
                 f"**CPU ratio** (the baseline's CPU per byte over the contestant's: the speed ratio "
                 f"had both had the CPU to themselves) has a verdict beside the wall-time ratio's. Ratios are taken round by round and given as their median and min–max.")
    lines.append("")
    lines += rc.ratio_table(RATIOS, mbps, cpu)
    lines.append("")
    lines += rc.contestant_table(LABELS, mbps, cpu, rss, RSS_TARGETS)
    lines.append("")
    lines.append("MB/s at that CPU = 1000 / (CPU s/GB): the speed with a whole core. Peak RSS growth = "
                 "the highest over the rounds of VmHWM (reset after setup) minus VmRSS after setup; "
                 "for the in-memory contestants the file itself is loaded before.")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(rc.report_rounds(SECTION, section))
