"""What the report writers (report.py, requests_report.py, json_report.py, bodies_report.py,
records_report.py) share: the run's facts from the BENCH_META_* environment variables, the
machine's facts, the per-round table cells, and replacing one "## " section of BENCHMARKS.md.
"""

from __future__ import annotations

import csv
import datetime
import os
import platform
import re
import statistics
import sys
from typing import Callable, Iterable

# The top of BENCHMARKS.md when the file does not exist yet.
HEADER = """# Benchmarks

Figures measured by the scripts under `bench/`. Each `##` section is written by the script that
names it and is replaced, alone, when that script runs again.
"""


def meta(name: str, default: str = "?") -> str:
    """The run's fact BENCH_META_<name>, set by the bench script, or default."""
    return os.environ.get("BENCH_META_" + name, default)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mem_total() -> str:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return f"{int(line.split()[1]) / 1048576:.0f} GiB RAM"
    except OSError:
        pass
    return "? RAM"


def libcurl_version() -> str:
    return meta("CURL").replace("libcurl ", "")


def measured_by(script: str, memory: bool = False) -> str:
    """The opening of every section: "Measured by `bash bench/<script>` on <date> (<library>):
    <n> CPUs (<model>), [<RAM>, ]Linux <release>, libcurl <version>"."""
    ram = f"{mem_total()}, " if memory else ""
    return (f"Measured by `bash bench/{script}` on {datetime.date.today().isoformat()} "
            f"({meta('LIB')}): {os.cpu_count()} CPUs ({cpu_model()}), {ram}"
            f"Linux {platform.release()}, libcurl {libcurl_version()}")


def round_headers(rounds: Iterable[int]) -> str:
    """"R1 | R2 | ..." for a per-round table's heading."""
    return " | ".join(f"R{r}" for r in rounds)


def round_cells(per: dict[int, float], rounds: Iterable[int], fmt: str) -> str:
    """One table cell a round, per[r] formatted with fmt, "–" for a round without a figure."""
    return " | ".join(format(per[r], fmt) if r in per else "–" for r in rounds)


def round_ratios(num: dict[int, float], den: dict[int, float], rounds: Iterable[int]) -> list[float]:
    """The same-round ratios num[r] / den[r] of the rounds both have."""
    return [num[r] / den[r] for r in rounds if r in num and r in den]


def spread(ratios: list[float], fmt: str) -> str:
    """"min–max" of the ratios formatted with fmt, "–" when there are none."""
    return f"{min(ratios):{fmt}}–{max(ratios):{fmt}}" if ratios else "–"


def ratio_figures(med: dict, per_round: dict, cpu_med: dict, num: str, den: str,
                  rounds: Iterable[int], fmt: str) -> tuple[float, str, float]:
    """num against den: the ratio of the medians med[num] / med[den], the median and min–max
    of the same-round ratios of per_round formatted with fmt ("m (lo–hi)"), and the CPU ratio cpu_med[den] /
    cpu_med[num] (the baseline's CPU per byte over the contestant's; nan without a figure)."""
    ratio = med[num] / med[den]
    same_round = round_ratios(per_round[num], per_round[den], rounds)
    per = f"{statistics.median(same_round):{fmt}} ({spread(same_round, fmt)})" if same_round else "–"
    cpu_ratio = cpu_med[den] / cpu_med[num] if cpu_med.get(num) else float("nan")
    return ratio, per, cpu_ratio


def read_tsv(path: str | None) -> list[dict]:
    """The rows of a tab-separated file with a heading line; [] when there is no such file."""
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def replace_section(path: str, section: str, text: str) -> None:
    """Writes text in place of the section headed `section` in the file at path (from its
    heading to the next level-2 heading or the end), or appends it; creates the file with HEADER."""
    try:
        with open(path) as f:
            doc = f.read()
    except FileNotFoundError:
        doc = HEADER
    pattern = re.compile(r"^" + re.escape(section) + r"[ \t]*\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(doc):
        doc = pattern.sub(lambda _: text + "\n", doc, count=1)
    else:
        doc = doc.rstrip("\n") + "\n\n" + text + "\n"
    doc = doc.rstrip("\n") + "\n"
    with open(path, "w") as f:
        f.write(doc)


def publish(section: str, output: str, have_results: bool, make_text: Callable[[], str]) -> int:
    """A report writer's end: "no results" and exit status 1 without results; otherwise the
    section's text replaces that section of output and is printed. Returns the exit status."""
    if not have_results:
        print("no results", file=sys.stderr)
        return 1
    text = make_text()
    replace_section(output, section, text)
    print(text)
    return 0


# -- Contestant benchmarks (json.sh, records.sh): MB/s, CPU per byte and RSS per round ----------

def read_rounds(path: str) -> tuple[dict, dict, dict]:
    """bench_rounds' results (bench/lib.sh): per contestant, per round, the MB/s, the CPU
    seconds per 10^9 bytes and the peak RSS growth in bytes."""
    mbps: dict = {}
    cpu: dict = {}
    rss: dict = {}
    for row in read_tsv(path):
        c, r = row["contestant"], int(row["round"])
        mbps.setdefault(c, {})[r] = float(row["mbps"])
        cpu.setdefault(c, {})[r] = float(row["cpu_s_per_gb"])
        rss.setdefault(c, {})[r] = int(row["rss_bytes"])
    return mbps, cpu, rss


def _median_and_spread(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.2f} ({spread(ratios, '.2f')})" if ratios else "–"


def _verdict(target: str, ratios: list[float]) -> str:
    op, value = target.split()
    m = statistics.median(ratios) if ratios else float("nan")
    return "met" if (m > float(value) if op == ">" else m >= float(value)) else "**missed**"


def ratio_table(ratios: list[tuple[str, str, str | None, str]], mbps: dict, cpu: dict) -> list[str]:
    """The ratios table: for each (numerator, denominator, target, what), the same-round
    ratios of CPU per byte (the baseline's over the contestant's: the speed ratio had each had
    the CPU to itself, steady on a shared machine) and of wall-time speed (what a user sees,
    with any parallelism; trustworthy on a quiet machine), each as the median of the rounds
    and their min–max. A target is "≥ 1.5" or "> 1", met by the median, None for context."""
    lines = ["| Ratio | What | CPU ratio per round: median (min–max) | Wall-time ratio per round: median "
             "(min–max) | Target | CPU verdict | Wall verdict |", "|---|---|---:|---:|---:|---|---|"]
    rounds = sorted({r for per in mbps.values() for r in per})
    for num, den, target, what in ratios:
        if num not in mbps or den not in mbps:
            continue
        cpu_ratios = round_ratios(cpu[den], cpu[num], rounds)   # CPU per byte: less is faster
        wall = round_ratios(mbps[num], mbps[den], rounds)
        verdicts = "context | context" if target is None else f"{_verdict(target, cpu_ratios)} | {_verdict(target, wall)}"
        lines.append(f"| {num} / {den} | {what} | {_median_and_spread(cpu_ratios)} | {_median_and_spread(wall)} | "
                     f"{target or '–'} | {verdicts} |")
    return lines


def contestant_table(labels: dict[str, str], mbps: dict, cpu: dict, rss: dict,
                     rss_targets: dict[str, int]) -> list[str]:
    """The contestants table: CPU s/GB (median), MB/s at that CPU, median and per-round MB/s,
    peak RSS growth (the highest of the rounds) against its target in MiB, if any."""
    rounds = sorted({r for per in mbps.values() for r in per})
    lines = ["| Contestant | | CPU s/GB | MB/s at that CPU | Median MB/s (wall) | " + round_headers(rounds)
             + " | Peak RSS growth | RSS target |",
             "|---|---|---:|---:|---:|" + "---:|" * len(rounds) + "---:|---|"]
    for c in [c for c in labels if c in mbps]:
        cpu_med = statistics.median(cpu[c].values())
        mib = max(rss[c].values()) / 1048576
        tgt = ""
        if c in rss_targets:
            tgt = f"≤ {rss_targets[c]} MiB: " + ("met" if mib <= rss_targets[c] else "**missed**")
        lines.append(f"| {c} | {labels[c]} | {cpu_med:.2f} | {1000 / cpu_med:.0f} | "
                     f"{statistics.median(mbps[c].values()):.0f} | {round_cells(mbps[c], rounds, '.0f')} | "
                     f"{mib:.1f} MiB | {tgt} |")
    return lines


def report_rounds(section: str, make_text: Callable[[dict, dict, dict], str]) -> int:
    """A contestant benchmark's report writer: `python3 X_report.py RESULTS.tsv BENCHMARKS.md`
    reads bench_rounds' results and publishes `make_text(mbps, cpu, rss)` as `section`."""
    mbps, cpu, rss = read_rounds(sys.argv[1])
    return publish(section, sys.argv[2], bool(mbps), lambda: make_text(mbps, cpu, rss))
