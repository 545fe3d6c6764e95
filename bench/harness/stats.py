"""The arithmetic every report uses: medians, same-round ratios and their min–max, verdicts.
Ratios are taken round by round (both contestants measured minutes apart at most) because load
on this shared machine moves absolute figures far more than it moves a same-round ratio.
"""

from __future__ import annotations

import math
import statistics
from typing import Iterable, Mapping

PerRound = Mapping[int, float]


def median(values: Iterable[float]) -> float:
    """The median, nan for no values."""
    v = list(values)
    return statistics.median(v) if v else float("nan")


def same_round(num: PerRound, den: PerRound) -> list[float]:
    """num[r] / den[r] for every round both have (a zero denominator skipped)."""
    return [num[r] / den[r] for r in sorted(num) if r in den and den[r]]


def spread(values: list[float], fmt: str = ".2f") -> str:
    """"min–max" formatted with fmt, "–" when empty."""
    return f"{min(values):{fmt}}–{max(values):{fmt}}" if values else "–"


def summary(values: list[float], fmt: str = ".2f") -> str:
    """"median (min–max)", "–" when empty."""
    return f"{median(values):{fmt}} ({spread(values, fmt)})" if values else "–"


def met(target: str, value: float) -> bool:
    """Whether value meets a target written "≥ x", ">= x" or "> x"."""
    op, limit = target.split()
    if math.isnan(value):
        return False
    return value > float(limit) if op == ">" else value >= float(limit)


def verdict(target: str | None, values: list[float]) -> str:
    """"met", "**missed**" (by the median) or "context" without a target."""
    if target is None:
        return "context"
    return "met" if met(target, median(values)) else "**missed**"
