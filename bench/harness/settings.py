"""A run's knobs, one place: the BENCH_* environment variables every benchmark reads (as the
shell scripts did), overridden by the command line (`--rounds 2 --only a,b --no-write`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # bench/
ROOT = os.path.dirname(HERE)


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


@dataclasses.dataclass
class Settings:
    """What every benchmark is run with; `extra` holds the benchmark's own options."""
    rounds: int
    count: int
    server_cpu: int
    client_cpu: int
    timeout: float
    only: set[str]
    output: str | None
    libdir: str
    python: str
    pydeps: str
    keep_results: str | None
    extra: argparse.Namespace

    @property
    def root(self) -> str:
        return ROOT

    @property
    def here(self) -> str:
        return HERE


def parse(argv: list[str], rounds: int = 5, count: int = 1,
          options: list[tuple[tuple[str, ...], dict]] | None = None) -> Settings:
    """The settings from the environment (BENCH_ROUNDS, BENCH_COUNT, BENCH_SERVER_CPU,
    BENCH_CLIENT_CPU, BENCH_TIMEOUT, BENCH_ONLY, BENCH_OUTPUT, BENCH_LIBDIR, BENCH_PYDEPS,
    BENCH_KEEP_RESULTS, PYTHON) and argv; `rounds` and `count` are the benchmark's defaults,
    `options` its own argparse arguments ((flags...), kwargs)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=env_int("BENCH_ROUNDS", rounds))
    ap.add_argument("--count", type=int, default=env_int("BENCH_COUNT", count))
    ap.add_argument("--only", default=os.environ.get("BENCH_ONLY", ""),
                    help="contestants to run, comma- or space-separated (default all)")
    ap.add_argument("--output", default=os.environ.get("BENCH_OUTPUT") or os.path.join(ROOT, "BENCHMARKS.md"))
    ap.add_argument("--no-write", action="store_true", help="print the section, leave BENCHMARKS.md alone")
    for flags, kwargs in options or []:
        ap.add_argument(*flags, **kwargs)
    args = ap.parse_args(argv)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Settings(
        rounds=args.rounds, count=args.count,
        server_cpu=env_int("BENCH_SERVER_CPU", 0), client_cpu=env_int("BENCH_CLIENT_CPU", 1),
        timeout=float(os.environ.get("BENCH_TIMEOUT") or 300),
        only=set(args.only.replace(",", " ").split()),
        output=None if args.no_write else args.output,
        libdir=os.environ.get("BENCH_LIBDIR") or os.path.join(ROOT, "build"),
        python=os.environ.get("PYTHON") or sys.executable,
        pydeps=os.environ.get("BENCH_PYDEPS") or os.path.join(cache, "httpcontent-bench", "pydeps"),
        keep_results=os.environ.get("BENCH_KEEP_RESULTS"),
        extra=args)
