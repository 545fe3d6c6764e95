"""What the four report writers (report.py, requests_report.py, json_report.py,
bodies_report.py) share: the run's facts from the BENCH_META_* environment variables, the
machine's facts, the per-round table cells, and replacing one "## " section of BENCHMARKS.md.
"""

from __future__ import annotations

import csv
import datetime
import os
import platform
import re
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
    """num against den: the ratio of the medians med[num] / med[den], the min–max of the
    same-round ratios of per_round formatted with fmt, and the CPU ratio cpu_med[den] /
    cpu_med[num] (the baseline's CPU per byte over the contestant's; nan without a figure)."""
    ratio = med[num] / med[den]
    per = spread(round_ratios(per_round[num], per_round[den], rounds), fmt)
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
