"""Turns bench/records.sh's measurements into the "## Record streams (issue 19)" section of
BENCHMARKS.md (replacing only that section) and prints it.

    python3 records_report.py RESULTS.tsv BENCHMARKS.md

Columns as json_report.py's: round, contestant, mbps, cpu_s_per_gb, rss_bytes.
"""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict

import report_common as rc  # bench/report_common.py, same folder

SECTION = "## Record streams (issue 19)"

LABELS = {
    "hc-iter": "Python: `for v in client.iter_json_lines(url)` (marshal batches, worker thread)",
    "hc-handler": "Python: `client.get(url, handler=hc.JSONLines(on_item))`",
    "requests-json": "Python: requests `iter_lines()` (default chunk_size=512) + `json.loads` per line",
    "requests64k-json": "Python: requests `iter_lines(chunk_size=65536)` + `json.loads` per line",
    "requests-orjson": "Python: requests `iter_lines(chunk_size=65536)` + `orjson.loads` per line",
    "hc-lines": "Python: `for line in client.iter_lines(url)` (str lines)",
    "requests-lines": "Python: requests `iter_lines(chunk_size=65536, decode_unicode=True)` (str lines)",
}

# (numerator, denominator, target or None for context, what it measures)
RATIOS = [
    ("hc-iter", "requests-json", 1.5, "iter_json_lines vs requests iter_lines() + json.loads"),
    ("hc-iter", "requests64k-json", None, "iter_json_lines vs requests iter_lines(64 KiB) + json.loads"),
    ("hc-iter", "requests-orjson", 1.0, "iter_json_lines vs requests iter_lines(64 KiB) + orjson.loads"),
    ("hc-handler", "requests-orjson", None, "JSONLines handler vs requests + orjson.loads"),
    ("hc-lines", "requests-lines", 1.0, "iter_lines vs requests iter_lines (str)"),
]

RSS_TARGETS = {"hc-iter": 32, "hc-handler": 32, "hc-lines": 32}


def section(mbps: dict, cpu: dict, rss: dict) -> str:
    meta = rc.meta
    rounds = sorted({r for per in mbps.values() for r in per})
    med = {c: statistics.median(per.values()) for c, per in mbps.items()}
    cpu_med = {c: statistics.median(per.values()) for c, per in cpu.items()}
    rss_max = {c: max(per.values()) for c, per in rss.items()}
    order = [c for c in LABELS if c in mbps]
    size = int(meta("SIZE", "0") or 0)
    lines = [SECTION, ""]
    lines.append("**Provisional**: measured while the machine was shared with other engineers' builds "
                 "and tests (see the load average); the CPU ratios are the figures to read, and the run "
                 "should be repeated on a quiet machine.")
    lines.append("")
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
                 f"time, median of the rounds; CPU = the client process's user + system CPU seconds per "
                 f"10^9 bytes, median; the **CPU ratio** (baseline CPU per byte over the contestant's) is "
                 f"the verdict's figure, the wall-time ratio beside it.")
    lines.append("")
    lines.append("| Ratio | What | CPU ratio | Wall-time ratio (of medians) | Wall per-round (min–max) | Target | |")
    lines.append("|---|---|---:|---:|---:|---:|---|")
    for num, den, target, what in RATIOS:
        if num not in mbps or den not in mbps:
            continue
        ratio, spread, cpu_ratio = rc.ratio_figures(med, mbps, cpu_med, num, den, rounds, ".2f")
        if target is None:
            verdict, tgt = "context", "–"
        else:
            verdict, tgt = ("met" if cpu_ratio >= target else "**missed**"), f"≥ {target:.1f}"
        lines.append(f"| {num} / {den} | {what} | {cpu_ratio:.2f} | {ratio:.2f} | {spread} | {tgt} | {verdict} |")
    lines.append("")
    lines.append("| Contestant | | CPU s/GB | MB/s at that CPU | Median MB/s (wall) | "
                 + rc.round_headers(rounds) + " | Peak RSS growth | RSS target |")
    lines.append("|---|---|---:|---:|---:|" + "---:|" * len(rounds) + "---:|---|")
    for c in order:
        cells = rc.round_cells(mbps[c], rounds, ".0f")
        mib = rss_max[c] / 1048576
        tgt = ""
        if c in RSS_TARGETS:
            tgt = f"≤ {RSS_TARGETS[c]} MiB: " + ("met" if mib <= RSS_TARGETS[c] else "**missed**")
        lines.append(f"| {c} | {LABELS[c]} | {cpu_med[c]:.2f} | {1000 / cpu_med[c]:.0f} | {med[c]:.0f} | "
                     f"{cells} | {mib:.1f} MiB | {tgt} |")
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    results_path, output = sys.argv[1], sys.argv[2]
    mbps: dict = defaultdict(dict)
    cpu: dict = defaultdict(dict)
    rss: dict = defaultdict(dict)
    with open(results_path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            c, r = row["contestant"], int(row["round"])
            mbps[c][r] = float(row["mbps"])
            cpu[c][r] = float(row["cpu_s_per_gb"])
            rss[c][r] = int(row["rss_bytes"])
    return rc.publish(SECTION, output, bool(mbps), lambda: section(mbps, cpu, rss))


if __name__ == "__main__":
    sys.exit(main())
