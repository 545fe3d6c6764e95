"""Turns bench/bodies.sh's measurements into the "## Request bodies (issue 5)" section of
BENCHMARKS.md (replacing only that section) and prints it.

    python3 bodies_report.py RESULTS.tsv BENCHMARKS.md

RESULTS.tsv has the columns round, kind (FORM or UPLOAD), contestant, line (the program's result
line: "FORM mbps=... cpu=..." or "UPLOAD mbps=... hwm_growth_kib=..."). The run's facts come from
BENCH_META_* environment variables set by bodies.sh.
"""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict

import report_common as rc  # bench/report_common.py, same folder

SECTION = "## Request bodies (issue 5)"

FORM_LABELS = {
    "hc-c": "httpcontent from C: `hc_form_new`, `hc_form_add_bytes` × pairs, `hc_form_encode`, free",
    "curl-escape-c": "C: `curl_easy_escape` on every key and value, joined with `=` and `&`",
    "hc-py": "httpcontent from Python: `hc.form_encode(pairs)`",
    "urlencode-py": "Python: `urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)`",
}
UPLOAD_LABELS = {
    "raw-c": "raw libcurl (C): POST, `POSTFIELDSIZE_LARGE`, `READFUNCTION` = `fread`; libcurl's default upload buffer (64 KiB)",
    "raw-tuned-c": "the anchor: the same with `CURLOPT_UPLOAD_BUFFERSIZE` tuned (see above)",
    "hc-c-file": "httpcontent from C: `hc_request_set_file_body(path)`",
    "hc-c-read": "httpcontent from C, streamed: `hc_request_set_read_body` with a callback that `fread`s the file (as raw's `READFUNCTION`), its size as length",
    "hc-py-file": "httpcontent from Python: `client.post(url, data=open(path, \"rb\"))`",
    "hc-py-iter-64k": "httpcontent from Python: `data=` a generator of 64 KiB `bytes` (chunked)",
    "hc-py-iter-1m": "httpcontent from Python: `data=` a generator of 1 MiB `bytes` (chunked)",
}
# (numerator, denominator, target or None for context)
FORM_RATIOS = [
    ("hc-c", "curl-escape-c", None),
    ("hc-py", "urlencode-py", None),
    ("hc-py", "curl-escape-c", None),
    ("urlencode-py", "curl-escape-c", None),
]
UPLOAD_RATIOS = [
    ("hc-c-file", "raw-tuned-c", 0.90),
    ("hc-c-read", "raw-tuned-c", 0.90),
    ("hc-py-file", "raw-tuned-c", 0.90),
    ("hc-c-file", "raw-c", None),
    ("hc-py-file", "raw-c", None),
    ("raw-c", "raw-tuned-c", None),
    ("hc-py-iter-64k", "raw-tuned-c", None),
    ("hc-py-iter-1m", "raw-tuned-c", None),
]
RSS_TARGET_KIB = 16 * 1024


def parse(line: str) -> dict[str, float]:
    return {k: float(v) for k, v in (x.split("=", 1) for x in line.split()[1:])}


def ratio_rows(ratios, med, cpu_med, per_round, rounds):
    rows = []
    for num, den, target in ratios:
        if num not in med or den not in med:
            continue
        ratio, spread, cpu_ratio = rc.ratio_figures(med, per_round, cpu_med, num, den, rounds, ".3f")
        if target is None:
            tgt, verdict = "–", "context"
        else:
            tgt = f"≥ {target:.2f}"
            verdict = "met" if ratio >= target else "**missed**"
            if ratio < target <= cpu_ratio:
                verdict += " (CPU ratio met)"
        rows.append(f"| {num} / {den} | {ratio:.3f} | {spread} | {cpu_ratio:.3f} | {tgt} | {verdict} |")
    return rows


def section(data: dict[str, dict[str, dict[int, dict[str, float]]]]) -> str:
    meta = rc.meta
    form, upload = data.get("FORM", {}), data.get("UPLOAD", {})
    rounds = sorted({r for kind in data.values() for per in kind.values() for r in per})

    def med_of(group, key):
        return {c: statistics.median(v[key] for v in per.values()) for c, per in group.items()}

    def rounds_of(group, key):
        return {c: {r: v[key] for r, v in per.items()} for c, per in group.items()}

    def cpu_per_gb(group, bytes_key):
        # CPU seconds per 10^9 bytes (of output for forms, of body for uploads).
        return {c: statistics.median(v["cpu"] / (v[bytes_key] * v.get("iters", 1) / 1e9)
                                     for v in per.values()) for c, per in group.items()}

    lines = [SECTION, ""]
    lines.append(f"{rc.measured_by('bodies.sh')}, Python "
                 f"{meta('PYTHON')}. {meta('PINNING')}. "
                 f"{len(rounds)} round{'s' if len(rounds) != 1 else ''}; in each, every contestant runs once, interleaved "
                 f"round-robin (the first one rotating each round); medians of the rounds. "
                 f"{meta('ELAPSED')} s of measuring, load average "
                 f"{meta('LOAD')}. MB = 10^6 bytes. CPU = the client process's "
                 f"user + system seconds per 10^9 bytes; CPU ratio = the baseline's CPU per byte "
                 f"over the contestant's (≥ 1: no more CPU per byte), steadier than MB/s when "
                 f"other work shares the machine.")
    lines.append("")
    lines.append("**Ratios are the figure; absolute rates on this shared 2-core machine are noise.**")
    lines.append("")

    if form:
        med = med_of(form, "mbps")
        cpu = cpu_per_gb(form, "out_bytes")
        per_round = rounds_of(form, "mbps")
        out_bytes = int(next(iter(next(iter(form.values())).values()))["out_bytes"])
        lines.append("### Form encoding")
        lines.append("")
        lines.append(f"{meta('PAIRS')} (key, value) pairs generated with a fixed seed "
                     f"by `form_bench.py gen`: keys of 1–24 and values of 0–64 characters mixing "
                     f"ASCII letters and digits, `-._~`, spaces, reserved and other punctuation, "
                     f"Latin-1 letters, CJK and 4-byte UTF-8 (emoji); {out_bytes:,} bytes of output. "
                     f"Each measurement repeats the whole encode (building the form included, for "
                     f"the library) for at least {meta('FORM_SECONDS')} s after one "
                     f"untimed encode. MB/s = output bytes per second. Identity (%20 mode): "
                     f"{meta('IDENTITY')}; in + mode, `hc.form_encode(pairs, "
                     f"space=\"+\")` and `urlencode(pairs)` (quote_plus) are "
                     f"{meta('PLUS')}.")
        lines.append("")
        lines.append("| Ratio | Throughput ratio (of medians) | Per-round: median (min–max) | CPU ratio | Target | |")
        lines.append("|---|---:|---:|---:|---:|---|")
        lines += ratio_rows(FORM_RATIOS, med, cpu, per_round, rounds)
        lines.append("")
        lines.append("| Contestant | | Median MB/s | " + rc.round_headers(rounds)
                     + " | CPU s/GB | Encodes per second |")
        lines.append("|---|---|---:|" + "---:|" * len(rounds) + "---:|---:|")
        for c in FORM_LABELS:
            if c not in form:
                continue
            cells = rc.round_cells(per_round[c], rounds, ".1f")
            eps = med[c] * 1e6 / out_bytes
            lines.append(f"| {c} | {FORM_LABELS[c]} | {med[c]:.1f} | {cells} | {cpu[c]:.2f} | {eps:.1f} |")
        if "hc-c" in form:
            share = statistics.median(v["encode_share"] for v in form["hc-c"].values())
            lines.append("")
            lines.append(f"Of hc-c's time, {share:.0%} is `hc_form_encode` itself and "
                         f"{1 - share:.0%} building the form (`hc_form_new`, `hc_form_add_bytes` "
                         f"copying every key and value, `hc_form_free`); median of the rounds.")
        lines.append("")

    if upload:
        med = med_of(upload, "mbps")
        cpu = cpu_per_gb(upload, "bytes")
        per_round = rounds_of(upload, "mbps")
        lines.append("### Streamed upload")
        lines.append("")
        lines.append(f"One POST of a {meta('UPLOAD_MB')} MiB file (sparse, read "
                     f"once beforehand so it is in the page cache) per measurement, to a sink "
                     f"server of our own (`upload_sink.c`, 127.0.0.1, HTTP/1.1 keep-alive) that "
                     f"reads the body into one 256 KiB buffer, discards it, and answers with the "
                     f"number of bytes received: each client checks that number equals the file "
                     f"size, so every byte went through. Each process first uploads a 1 MiB file "
                     f"(untimed) on the same handle/client; then the peak-RSS mark is reset "
                     f"(`/proc/self/clear_refs` ← 5) and **peak RSS growth** = VmHWM after the "
                     f"upload − VmRSS before it. The raw program sets what httpcontent sets that "
                     f"could matter: no `Expect: 100-continue`, no Content-Type, "
                     f"`ACCEPT_ENCODING \"\"`, `NOSIGNAL`.")
        lines.append("")
        lines.append(f"The anchor `raw-tuned-c` sets `CURLOPT_UPLOAD_BUFFERSIZE` {int(float(meta('TUNED_UPLOAD') or 0)):,} "
                     f"bytes, {meta('UPLOAD_SWEEP')}. httpcontent sets its own upload buffer "
                     f"(`CURLOPT_UPLOAD_BUFFERSIZE`, 256 KiB for a request sent alone).")
        lines.append("")
        lines.append("| Ratio | Throughput ratio (of medians) | Per-round: median (min–max) | CPU ratio | Target | |")
        lines.append("|---|---:|---:|---:|---:|---|")
        lines += ratio_rows(UPLOAD_RATIOS, med, cpu, per_round, rounds)
        lines.append("")
        lines.append("| Contestant | | Median MB/s | " + rc.round_headers(rounds)
                     + " | CPU s/GB | RSS before (MiB) | Peak RSS growth, max of rounds (KiB) | ≤ 16 MiB |")
        lines.append("|---|---|---:|" + "---:|" * len(rounds) + "---:|---:|---:|---|")
        for c in UPLOAD_LABELS:
            if c not in upload:
                continue
            per = upload[c]
            cells = rc.round_cells(per_round[c], rounds, ".0f")
            base = statistics.median(v["rss_base_kib"] for v in per.values()) / 1024
            growth = max(v["hwm_growth_kib"] for v in per.values())
            exact = all(v.get("hwm_reset", 0) == 1 for v in per.values())
            verdict = ("met" if growth <= RSS_TARGET_KIB else "**missed**") + ("" if exact else " (upper bound)")
            lines.append(f"| {c} | {UPLOAD_LABELS[c]} | {med[c]:.0f} | {cells} | {cpu[c]:.3f} | "
                         f"{base:.1f} | {growth:.0f} | {verdict} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    results_path, output = sys.argv[1], sys.argv[2]
    data: dict[str, dict[str, dict[int, dict[str, float]]]] = defaultdict(lambda: defaultdict(dict))
    with open(results_path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            data[row["kind"]][row["contestant"]][int(row["round"])] = parse(row["line"])
    return rc.publish(SECTION, output, bool(data), lambda: section(data))


if __name__ == "__main__":
    sys.exit(main())
