"""The BENCHMARKS.md section writer: markdown tables, the sentence that opens every section, and
replacing one section of the file. A section sits between `<!-- bench:NAME -->` and
`<!-- /bench:NAME -->` markers; a section written before the markers existed is found by its
`## ` heading (up to the next one) and gets them.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

HEADER = """# Benchmarks

Figures measured by the scripts under `bench/`. Each `##` section is written by the benchmark that
names it and is replaced, alone, when that benchmark runs again.
"""


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], align: str = "") -> list[str]:
    """A markdown table. `align` has one letter a column: "l" (default) or "r"."""
    seps = ["---:" if (align[i:i + 1] == "r") else "---" for i in range(len(headers))]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join(seps) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def round_cells(per: dict[int, float], rounds: Iterable[int], fmt: str) -> list[str]:
    """One cell a round, "–" for a round without a figure."""
    return [format(per[r], fmt) if r in per else "–" for r in rounds]


def measured_by(command: str, library: str, machine: str) -> str:
    """The opening of a section: "Measured by `COMMAND` on DATE (LIBRARY): MACHINE"."""
    from .machine import today
    return f"Measured by `{command}` on {today()} ({library}): {machine}"


def markers(name: str) -> tuple[str, str]:
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def replace_section(path: str, name: str, heading: str, text: str) -> None:
    """Writes text (which starts with `heading`) as section `name` of the file at path: between
    its markers, else in place of the `heading` section, else appended; creates the file."""
    try:
        with open(path) as f:
            doc = f.read()
    except FileNotFoundError:
        doc = HEADER
    begin, end = markers(name)
    block = f"{begin}\n{text.rstrip()}\n{end}\n"
    marked = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end) + r"\n?", re.S)
    by_heading = re.compile(r"^" + re.escape(heading) + r"[ \t]*\n.*?(?=^## |^<!-- bench:|\Z)", re.S | re.M)
    if marked.search(doc):
        doc = marked.sub(lambda _: block, doc, count=1)
    elif by_heading.search(doc):
        doc = by_heading.sub(lambda _: block + "\n", doc, count=1)
    else:
        doc = doc.rstrip("\n") + "\n\n" + block
    with open(path, "w") as f:
        f.write(doc.rstrip("\n") + "\n")


def publish(path: str | None, name: str, lines: list[str]) -> int:
    """Prints the section (lines, the first its heading) and writes it into path unless None."""
    text = "\n".join(lines).rstrip() + "\n"
    print(text)
    if path:
        replace_section(path, name, lines[0], text)
    return 0
