"""Turns bench/records.sh's measurements into the "## Record streams (issue 19)" section of
BENCHMARKS.md (replacing only that section) and prints it.

    python3 records_report.py RESULTS.tsv BENCHMARKS.md

Columns as json_report.py's: round, contestant, mbps, cpu_s_per_gb, rss_bytes.
"""

from __future__ import annotations

import sys

import report_common as rc  # bench/report_common.py, same folder

SECTION = "## Record streams (issue 19)"

LABELS = {
    "hc-iter": "Python: `for v in client.iter_json_lines(url)` (marshal batches, worker thread)",
    "hc-handler": "Python: `client.get(url, handler=hc.JSONLines(on_item))`",
    "requests-json": "Python: requests `iter_lines()` (default chunk_size=512) + `json.loads` per line",
    "requests64k-json": "Python: requests `iter_lines(chunk_size=65536)` + `json.loads` per line",
    "requests-orjson": "Python: requests `iter_lines(chunk_size=65536)` + `orjson.loads` per line",
    "hc-lines": "Python: `for line in client.iter_lines(url)` (str lines)",
    "requests-lines": "Python: requests `iter_lines(chunk_size=65536, decode_unicode=True)` (bytes lines: the "
                      "Content-Type names no charset, so requests does not decode)",
}

# (numerator, denominator, target or None for context, what it measures)
RATIOS = [
    ("hc-iter", "requests-json", "≥ 1.5", "iter_json_lines vs requests iter_lines() + json.loads"),
    ("hc-iter", "requests64k-json", None, "iter_json_lines vs requests iter_lines(64 KiB) + json.loads"),
    ("hc-iter", "requests-orjson", "≥ 1.0", "iter_json_lines vs requests iter_lines(64 KiB) + orjson.loads"),
    ("hc-handler", "requests-orjson", None, "JSONLines handler vs requests + orjson.loads"),
    ("hc-lines", "requests-lines", "≥ 1.0", "iter_lines (str) vs requests iter_lines (bytes, no charset named)"),
]

RSS_TARGETS = {"hc-iter": 32, "hc-handler": 32, "hc-lines": 32}


def section(mbps: dict, cpu: dict, rss: dict) -> str:
    meta = rc.meta
    rounds = sorted({r for per in mbps.values() for r in per})
    size = int(meta("SIZE", "0") or 0)
    lines = [SECTION, ""]
    lines.append(f"{rc.measured_by('records.sh')}, nginx {meta('NGINX')}, Python {meta('PYTHON')} "
                 f"({meta('PYLIBS')}).")
    lines.append("")
    lines.append(f"One NDJSON body of {int(meta('ITEMS', '0') or 0):,} records "
                 f"(`{{\"id\": i, \"name\": \"item i\", \"tags\": [\"a\", \"b\"], \"value\": i*1.5, \"ok\": true}}` "
                 f"and LF), {size:,} bytes ({size / 1048576:.0f} MiB), served as `application/x-ndjson` by "
                 f"nginx on 127.0.0.1; {meta('PINNING')}. Each measurement is {meta('COUNT')} pass(es) in a "
                 f"fresh process, every pass checked (record or line count). {len(rounds)} rounds, "
                 f"contestants interleaved round-robin (the first rotating each round); {meta('ELAPSED')} s "
                 f"of measuring, load average {meta('LOAD')}. MB/s = 10^6 body bytes per second of wall "
                 f"time; CPU = the client process's user + system CPU seconds per 10^9 bytes. Ratios are "
                 f"taken round by round (the two contestants measured minutes apart at most) and given as "
                 f"their median and min–max, with a verdict for each: the **CPU ratio** (the baseline's CPU "
                 f"per byte over the contestant's) holds steady on a shared machine; the wall-time ratio is "
                 f"what a user sees (hc's iterators parse in the transfer's thread while Python consumes) "
                 f"and is to be read on a quiet machine.")
    lines.append("")
    lines += rc.ratio_table(RATIOS, mbps, cpu)
    lines.append("")
    lines += rc.contestant_table(LABELS, mbps, cpu, rss, RSS_TARGETS)
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(rc.report_rounds(SECTION, section))
