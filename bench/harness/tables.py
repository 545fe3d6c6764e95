"""The tables the throughput benchmarks share: ratios of CPU per byte and of MB/s with their
same-round min–max and a verdict, and one row per contestant with its settings beside its
figures. Both read `Results` (metrics "mbps", "cpu_s_per_gb" and optionally "rss").
"""

from __future__ import annotations

from . import stats
from .contestant import Contestant, Ratio
from .rounds import Results
from .writer import round_cells, table


def ratio_rows(ratios: list[Ratio], res: Results) -> list[str]:
    """Per ratio: the same-round CPU ratio (the baseline's CPU per byte over the contestant's:
    the speed ratio had each had the CPU to itself, steady on a shared machine) and wall-time
    ratio (what a user sees), median (min–max), the target and a verdict for each."""
    mbps, cpu = res.of("mbps"), res.of("cpu_s_per_gb")
    rows = []
    for r in ratios:
        if r.num not in mbps or r.den not in mbps:
            continue
        cpu_r = stats.same_round(cpu[r.den], cpu[r.num])   # CPU per byte: less is faster
        wall_r = stats.same_round(mbps[r.num], mbps[r.den])
        rows.append((f"{r.num} / {r.den}", r.what, stats.summary(cpu_r), stats.summary(wall_r),
                     r.target or "–", stats.verdict(r.target, cpu_r), stats.verdict(r.target, wall_r)))
    return table(["Ratio", "What", "CPU ratio per round: median (min–max)",
                  "Wall-time ratio per round: median (min–max)", "Target", "CPU verdict", "Wall verdict"],
                 rows, "llrrrll")


def contestant_rows(contestants: list[Contestant], res: Results,
                    rss_targets: dict[str, int] | None = None) -> list[str]:
    """Per contestant: its settings, median CPU s/GB, MB/s at that CPU, median and per-round
    MB/s, peak RSS growth (the highest of the rounds) against its target in MiB, if any."""
    mbps, cpu, rss = res.of("mbps"), res.of("cpu_s_per_gb"), res.of("rss")
    rounds = list(range(1, res.rounds + 1))
    rows = []
    for c in contestants:
        if c.name not in mbps:
            continue
        cpu_med = stats.median(cpu[c.name].values())
        mib = max(rss.get(c.name, {0: 0}).values()) / 1048576
        tgt = ""
        if rss_targets and c.name in rss_targets:
            tgt = f"≤ {rss_targets[c.name]} MiB: " + ("met" if mib <= rss_targets[c.name] else "**missed**")
        rows.append((c.name, c.settings, f"{cpu_med:.2f}", f"{1000 / cpu_med:.0f}",
                     f"{stats.median(mbps[c.name].values()):.0f}",
                     *round_cells(mbps[c.name], rounds, ".0f"), f"{mib:.1f} MiB", tgt))
    return table(["Contestant", "", "CPU s/GB", "MB/s at that CPU", "Median MB/s (wall)",
                  *(f"R{r}" for r in rounds), "Peak RSS growth", "RSS target"],
                 rows, "llrrr" + "r" * len(rounds) + "rl")


def time_rows(contestants: list[Contestant], res: Results, group: str = "") -> list[str]:
    """In-process contestants: their group tag (if `group` names one), settings, median wall
    and CPU seconds per pass, and the per-round wall seconds."""
    wall, cpu = res.of("seconds"), res.of("cpu")
    rounds = list(range(1, res.rounds + 1))
    rows = []
    for c in contestants:
        if c.name in wall:
            rows.append(((c.tags.get(group, ""),) if group else ()) + (
                f"`{c.name}`", f"`{c.settings}`", f"{stats.median(wall[c.name].values()):.3f}",
                f"{stats.median(cpu[c.name].values()):.3f}", ", ".join(round_cells(wall[c.name], rounds, ".3f"))))
    head = ([group.capitalize()] if group else []) + ["Contestant", "Settings", "Median s (wall)",
                                                      "Median s (CPU)", "Rounds (s)"]
    return table(head, rows, ("l" if group else "") + "llrrl")


def speedup_rows(ratios: list[Ratio], res: Results, metric: str = "seconds", group: str = "") -> list[str]:
    """Per ratio, the same-round speed-up of r.num over r.den (r.den's seconds over r.num's:
    above 1, r.num is faster), written "den / num": median, min–max, each round, the target;
    with `group`, first the num contestant's tag of that name."""
    per_round = res.of(metric)
    tag = {c.name: c.tags.get(group, "") for c in res.active}
    rows = []
    for r in ratios:
        if r.num not in per_round or r.den not in per_round:
            continue
        x = stats.same_round(per_round[r.den], per_round[r.num])
        target = f" (target {r.target})" if r.target else ""
        rows.append(((tag[r.num],) if group else ()) + (
            f"{r.den} / {r.num}{target}", f"**{stats.median(x):.2f}x**", stats.spread(x),
            ", ".join(f"{v:.2f}" for v in x)))
    head = ([group.capitalize()] if group else []) + ["Ratio (anchor / hc, wall)", "Median", "Min-max", "Per round"]
    return table(head, rows, ("l" if group else "") + "lrrl")


def timed(ratios: list[Ratio], res: Results, group: str = "") -> list[str]:
    """An in-process benchmark's two tables: seconds per contestant, then the speed-ups."""
    return time_rows(res.active, res, group) + [""] + speedup_rows(ratios, res, group=group)
