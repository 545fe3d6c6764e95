"""The one round-robin runner: a warm-up pass of each contestant, then `rounds` rounds in which
every contestant is measured once, interleaved (the first rotating each round) so that machine
load hits them alike. Load average before and after and the seconds spent are kept for the
report. Commands run on the client CPU within the step timeout; callables run in this process.
"""

from __future__ import annotations

import csv
import dataclasses
import gc
import os
import subprocess
import sys
import time
from typing import Any, Callable

from .contestant import Contestant
from .machine import loadavg

Metrics = dict[str, Any]   # numbers, or whatever a benchmark's parse keeps (latency samples)
Parse = Callable[[str], Metrics]


class NotInstalled(Exception):
    """A contestant's library is missing (its command exited 3): skipped, not failed."""


class Failed(Exception):
    """A contestant failed: the run stops."""


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


@dataclasses.dataclass
class Results:
    """Per metric, per contestant, per round (from 1): the figures; plus the run's facts."""
    values: dict[str, dict[str, dict[int, float]]] = dataclasses.field(default_factory=dict)
    active: list[Contestant] = dataclasses.field(default_factory=list)
    rounds: int = 0
    elapsed: float = 0.0
    load_before: str = "?"
    load_after: str = "?"
    round_loads: list[str] = dataclasses.field(default_factory=list)   # 1-min load after each round

    def add(self, name: str, rnd: int, metrics: Metrics) -> None:
        for key, value in metrics.items():
            self.values.setdefault(key, {}).setdefault(name, {})[rnd] = value

    def of(self, metric: str) -> dict[str, dict[int, float]]:
        """contestant → round → value for one metric ({} if nobody reported it)."""
        return self.values.get(metric, {})

    @property
    def load(self) -> str:
        return f"{self.load_before} → {self.load_after}"

    def names(self) -> list[str]:
        return [c.name for c in self.active]

    def save_tsv(self, path: str) -> None:
        """round, contestant, then one column per metric."""
        metrics = sorted(self.values)
        with open(path, "w", newline="") as f:
            w = csv.writer(f, delimiter="\t")
            w.writerow(["round", "contestant", *metrics])
            for c in self.names():
                for r in range(1, self.rounds + 1):
                    w.writerow([r, c, *(self.values[m].get(c, {}).get(r, "") for m in metrics)])


def parse_mbps(line: str) -> Metrics:
    """A throughput program's "MBPS <v> bytes=<n> seconds=<s> cpu=<c> [k=v...]" line: mbps,
    cpu_s_per_gb (client CPU seconds per 10^9 bytes) and every other numeric k=v."""
    f = line.split()
    if not f or f[0] != "MBPS":
        raise Failed(f"unexpected output: {line!r}")
    kv = parse_kv(" ".join(f[2:]))
    kv["mbps"] = float(f[1])
    kv["cpu_s_per_gb"] = kv["cpu"] / (kv["bytes"] / 1e9)
    return kv


def parse_kv(line: str) -> Metrics:
    """Every numeric "k=v" of a line."""
    out: Metrics = {}
    for word in line.split():
        k, sep, v = word.partition("=")
        if sep:
            try:
                out[k] = float(v)
            except ValueError:
                pass
    return out


@dataclasses.dataclass
class Runner:
    """Measures contestants. `pin` is the client's taskset prefix, `env` extra environment for
    commands (PYTHONPATH, HTTPCONTENT_LIBRARY), `parse` turns a command's last output line
    into metrics, `check` sees each callable's result (untimed)."""
    pin: tuple[str, ...] = ()
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    timeout: float = 300
    parse: Parse = parse_mbps
    check: Callable[[Contestant, Any], None] | None = None
    rotate: bool = True
    keep_going: bool = False   # a failed measurement is logged and left out instead of ending the run
    warm: dict[str, Metrics] = dataclasses.field(default_factory=dict)   # each warm-up's figures

    def measure(self, c: Contestant, count: int) -> Metrics:
        """One measurement of c: `count` passes (after its untimed `prepare`)."""
        if c.prepare is not None:
            c.prepare()
        if c.call is not None:
            return self._call(c, count)
        argv = [*self.pin, *c.argv(count)]
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=self.timeout,
                               env={**os.environ, **self.env})
        except subprocess.TimeoutExpired:
            raise Failed(f"{c.name}: timed out after {self.timeout:.0f} s") from None
        if p.returncode == 3:
            raise NotInstalled(c.name)
        if p.returncode != 0:
            raise Failed(f"{c.name} failed (exit {p.returncode}): {p.stderr.strip()[-2000:]}")
        lines = p.stdout.strip().splitlines()
        return self.parse(lines[-1] if lines else "")

    def _call(self, c: Contestant, count: int) -> Metrics:
        assert c.call is not None
        gc.collect()
        result = None
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(count):
            result = c.call()
        metrics = {"seconds": (time.perf_counter() - wall) / count, "cpu": (time.process_time() - cpu) / count}
        if self.check is not None:
            self.check(c, result)
        return metrics

    def warm_up(self, contestants: list[Contestant], only: set[str] = frozenset(), count: int = 1) -> list[Contestant]:
        """`count` passes of each (those named by `only`, if any); returns those that ran, their
        figures in `warm`. A contestant not installed is skipped; a failure ends the run."""
        log(f"warm-up: {count} pass(es) each")
        active = []
        for c in contestants:
            if only and c.name not in only:
                continue
            try:
                m = self.measure(c, count)
            except NotInstalled:
                log(f"  {c.name}: not installed, skipped")
                continue
            active.append(c)
            self.warm[c.name] = m
            log(f"  {c.name:<18} " + describe(m))
        return active

    def rounds(self, active: list[Contestant], rounds: int, count: int, budget: float | None = None) -> Results:
        """`rounds` rounds of `active`, `count` passes a measurement (or the contestant's own),
        interleaved. With a budget (seconds), no round starts that would likely end past it
        (judged by the last round's length); `res.rounds` is then the rounds done."""
        res = Results(active=active, rounds=rounds, load_before=loadavg())
        start = time.monotonic()
        n, last = len(active), 0.0
        for rnd in range(1, rounds + 1):
            if budget is not None and rnd > 1 and time.monotonic() - start + last > budget:
                log(f"time budget ({budget:.0f} s) reached: stopping after {rnd - 1} rounds")
                res.rounds = rnd - 1
                break
            round_start = time.monotonic()
            for k in range(n):
                c = active[(k + rnd - 1) % n] if self.rotate else active[k]
                try:
                    m = self.measure(c, c.count or count)
                except Failed as exc:
                    if not self.keep_going:
                        raise
                    log(f"round {rnd}/{rounds}  {exc} (left out)")
                    continue
                res.add(c.name, rnd, m)
                log(f"round {rnd}/{rounds}  {c.name:<18} " + describe(m))
            last = time.monotonic() - round_start
            res.round_loads.append(loadavg().split()[0])
        res.elapsed = time.monotonic() - start
        res.load_after = loadavg()
        return res


def describe(m: Metrics) -> str:
    """A log line's figures."""
    if "mbps" in m:
        return f"{m['mbps']:.1f} MB/s  CPU {m.get('cpu_s_per_gb', float('nan')):.2f} s/GB"
    return "  ".join(f"{k} {v:.4g}" for k, v in m.items() if isinstance(v, (int, float)))
