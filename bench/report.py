"""Turns bench/run.sh's measurements into the "## Download throughput (issues 2 and 15)" section of
BENCHMARKS.md (replacing only that section) and prints it.

    python3 report.py RESULTS.tsv BENCHMARKS.md

RESULTS.tsv has the columns round, contestant, mbps, cpu_s_per_gb (the client's user + system CPU
seconds per 10^9 bytes). The run's facts come from BENCH_META_* environment variables set by
run.sh.
"""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict

import report_common as rc  # bench/report_common.py, same folder

SECTION = "## Download throughput (issues 2 and 15)"

LABELS = {
    "raw-discard": "raw libcurl (C), discard",
    "raw-accumulate": "raw libcurl (C), accumulate (realloc)",
    "raw-tuned-discard": "raw libcurl (C), `CURLOPT_BUFFERSIZE` 256 KiB, discard: **the anchor**",
    "raw-tuned-accumulate": "raw libcurl (C), `CURLOPT_BUFFERSIZE` 256 KiB, accumulate (realloc, doubling)",
    "raw-tuned-file": "raw libcurl (C), `CURLOPT_BUFFERSIZE` 256 KiB, `write(2)` to a file",
    "raw-tuned-file-fsync": "the same, `fsync` at the end",
    "hc-py-file": "httpcontent from Python, `hc.File(path)` (atomic rename, fsync'd: the default)",
    "hc-py-file-nofsync": "httpcontent from Python, `hc.File(path, fsync=False)`",
    "requests-file": "requests, `iter_content(1 MiB)` + `write`, then `flush` + `os.fsync`",
    "requests-file-nofsync": "requests, `iter_content(1 MiB)` + `write`, no fsync",
    "hc-c-file": "httpcontent from C, `hc_handler_file_new(path, 0)` (atomic rename, fsync'd: the default)",
    "hc-c-file-nofsync": "httpcontent from C, `hc_handler_file_new(path, HC_FILE_NO_FSYNC)`",
    "hc-c-discard": "httpcontent from C, `hc_handler_discard_new()`",
    "hc-c-bytes": "httpcontent from C, `hc_handler_bytes_new(0)`",
    "hc-py-discard": "httpcontent from Python, `hc.Discard()`",
    "hc-py-bytes": "httpcontent from Python, `hc.Bytes()`",
    "urllib3": "urllib3 `PoolManager().request().data`",
    "requests": "requests `Session().get().content`",
    "pycurl-discard": "pycurl, Python write callback keeping nothing",
    "pycurl-bytes": "pycurl, `WRITEDATA` into `BytesIO`",
}

# (numerator, denominator, target or None for context only)
RATIOS = [
    ("hc-c-discard", "raw-tuned-discard", 0.90),
    ("hc-py-discard", "raw-tuned-discard", 0.90),
    ("hc-c-bytes", "raw-tuned-accumulate", 0.90),
    ("hc-py-bytes", "raw-tuned-accumulate", 0.90),
    ("hc-py-file", "requests-file", 1.20),
    ("hc-py-file-nofsync", "requests-file-nofsync", 1.20),
    ("hc-py-file", "raw-tuned-file-fsync", 0.90),
    ("hc-py-file-nofsync", "raw-tuned-file", 0.90),
    ("hc-c-file", "requests-file", 1.20),
    ("hc-c-file-nofsync", "requests-file-nofsync", 1.20),
    ("hc-c-file", "raw-tuned-file-fsync", 0.90),
    ("hc-c-file-nofsync", "raw-tuned-file", 0.90),
    ("raw-tuned-discard", "raw-discard", None),
    ("hc-c-discard", "raw-discard", None),
    ("hc-c-bytes", "raw-accumulate", None),
    ("pycurl-discard", "raw-discard", None),
    ("pycurl-bytes", "raw-accumulate", None),
    ("urllib3", "raw-accumulate", None),
    ("requests", "raw-accumulate", None),
]


def section(results: dict[str, dict[int, float]], cpu: dict[str, dict[int, float]]) -> str:
    meta = rc.meta
    rounds = sorted({r for per in results.values() for r in per})
    med = {c: statistics.median(per.values()) for c, per in results.items()}
    cpu_med = {c: statistics.median(per.values()) for c, per in cpu.items()}
    order = [c for c in LABELS if c in results]

    lines = [SECTION, ""]
    lines.append(f"{rc.measured_by('run.sh')}, "
                 f"nginx {meta('NGINX')}, Python {meta('PYTHON')} "
                 f"({meta('PYLIBS')}); pycurl: {meta('PYCURL')}.")
    lines.append("")
    lines.append(f"A {meta('SIZE_MB')} MiB file of random bytes from nginx on 127.0.0.1 "
                 f"(`sendfile on`, plain HTTP/1.1, keep-alive); {meta('PINNING')}. "
                 f"Each measurement is {meta('COUNT')} downloads over one reused "
                 f"handle/client; {len(rounds)} rounds, contestants interleaved round-robin (the "
                 f"first one rotating each round); {meta('ELAPSED')} s of measuring, "
                 f"load average {meta('LOAD')}. MB/s = 10^6 bytes/s, median of the "
                 f"rounds. Client CPU = the client process's user + system CPU seconds per 10^9 "
                 f"bytes, median of the rounds; it varies far less than MB/s when other work shares "
                 f"the machine (±10 % against ±40 % in trial runs). CPU ratio = the baseline's CPU per byte over the contestant's "
                 f"(≥ 1: no more CPU per byte than raw libcurl). "
                 + ("Every to-file measurement starts with no target file (`BENCH_FILE_START=none`). "
                    if meta('FILE_START') == "none" else
                    "Every to-file measurement starts from the same target (`BENCH_FILE_START=cached`): "
                    "the previous version of the file, whole, fsync'd and cached (untimed); the "
                    "anchors truncate it (`O_TRUNC`), httpcontent renames a new file over it. ")
                 + "Later downloads of a measurement overwrite the one before (bench/README.md).")
    lines.append("")
    lines.append("**Ratios are the figure; absolute MB/s on this shared 2-core machine are noise.**")
    lines.append("")
    lines.append("| Ratio | Throughput ratio (of medians) | Per-round: median (min–max) | CPU ratio | Target | |")
    lines.append("|---|---:|---:|---:|---:|---|")
    for num, den, target in RATIOS:
        if num not in results or den not in results:
            continue
        ratio, spread, cpu_ratio = rc.ratio_figures(med, results, cpu_med, num, den, rounds, ".3f")
        verdict = ("met" if ratio >= target else "**missed**") if target else "context"
        tgt = f"≥ {target:.2f}" if target else "–"
        lines.append(f"| {num} / {den} | {ratio:.3f} | {spread} | {cpu_ratio:.3f} | {tgt} | {verdict} |")
    lines.append("")
    lines.append("| Contestant | | Median MB/s | " + rc.round_headers(rounds)
                 + " | Client CPU s/GB |")
    lines.append("|---|---|---:|" + "---:|" * len(rounds) + "---:|")
    for c in order:
        cells = rc.round_cells(results[c], rounds, ".0f")
        lines.append(f"| {c} | {LABELS[c]} | {med[c]:.0f} | {cells} | {cpu_med[c]:.3f} |")
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    results_path, output = sys.argv[1], sys.argv[2]
    results: dict[str, dict[int, float]] = defaultdict(dict)
    cpu: dict[str, dict[int, float]] = defaultdict(dict)
    with open(results_path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            results[row["contestant"]][int(row["round"])] = float(row["mbps"])
            cpu[row["contestant"]][int(row["round"])] = float(row["cpu_s_per_gb"])
    return rc.publish(SECTION, output, bool(results), lambda: section(results, cpu))


if __name__ == "__main__":
    sys.exit(main())
