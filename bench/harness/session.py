"""One benchmark run's context: its settings, a temporary folder, CPU pinning, the library
snapshot, the servers it started (stopped at the end, whatever happens), and the runner set up
to pin and time contestants. A benchmark is a `with Session(...) as s:` block.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from typing import Any

from . import library, machine, servers, writer
from .contestant import Contestant
from .rounds import Results, Runner, log
from .settings import Settings


def _exit_on_term(*_: object) -> None:
    """TERM ends the run through the exit stack, so servers stop and the folder goes."""
    raise SystemExit(143)


class Session(contextlib.ExitStack):
    """`name` names the temp folder and the run; `script` is what the report says measured it
    (e.g. "bash bench/records.sh"); `server`/`client` name the pinned sides in the report."""

    def __init__(self, name: str, script: str, settings: Settings, server: str = "server",
                 client: str = "client") -> None:
        super().__init__()
        self.name, self.script, self.settings = name, script, settings
        self.pinning = machine.Pinning.of(settings.server_cpu, settings.client_cpu, server, client)
        self.snap: dict[str, str] = {}
        self.pythonpath = ""
        self.tmp = ""

    def __enter__(self) -> "Session":
        super().__enter__()
        self.tmp = tempfile.mkdtemp(prefix=f"hc-{self.name}.", dir=os.environ.get("TMPDIR"))
        os.chmod(self.tmp, 0o755)
        self.callback(shutil.rmtree, self.tmp, ignore_errors=True)
        signal.signal(signal.SIGTERM, _exit_on_term)
        return self

    def path(self, *parts: str) -> str:
        return os.path.join(self.tmp, *parts)

    def snapshot(self) -> dict[str, str]:
        """The library, header and binding copied for this run; the binding goes first on the
        contestants' PYTHONPATH."""
        log("snapshotting the library and the binding")
        self.snap = library.snapshot(self.settings.root, self.settings.libdir, self.tmp)
        self.add_pythonpath(self.snap["py"])
        return self.snap

    def add_pythonpath(self, folder: str) -> None:
        self.pythonpath = f"{self.pythonpath}:{folder}" if self.pythonpath else folder

    def compile(self, source: str, *libs: str) -> str:
        """A C contestant from bench/SOURCE built against the snapshot; returns its path."""
        out = self.path(os.path.splitext(os.path.basename(source))[0])
        return library.compile_c(self.snap, os.path.join(self.settings.here, source), out, *libs)

    def nginx(self, **conf: Any) -> dict[str, Any]:
        """nginx on the server CPU serving self.path("www") (servers.nginx_conf's options)."""
        info = self.enter_context(servers.nginx(self.tmp, self.pinning.server, **conf))
        log(f"nginx {info['version']} on port {info['port']} (pid {info['pid']})")
        return info

    def runner(self, cls: type[Runner] = Runner, **kwargs: Any) -> Runner:
        """A Runner (or subclass) pinned to the client CPU, with the step timeout and the
        snapshot's paths."""
        env = {"PYTHONPATH": self.pythonpath} if self.pythonpath else {}
        return cls(pin=self.pinning.client, env=env, timeout=self.settings.timeout, **kwargs)

    def run(self, contestants: list[Contestant], runner: Runner | None = None, warm_up: bool = True,
            budget: float | None = None) -> Results:
        """Warm-up (unless warm_up is False) and rounds with the settings' rounds, count and
        BENCH_ONLY, within budget seconds if given; keeps the raw figures in BENCH_KEEP_RESULTS."""
        s, runner = self.settings, runner or self.runner()
        active = runner.warm_up(contestants, s.only) if warm_up else [c for c in contestants if not s.only or c.name in s.only]
        res = runner.rounds(active, s.rounds, s.count, budget)
        if s.keep_results:
            res.save_tsv(s.keep_results)
        log(f"{res.elapsed:.0f} s of measurements, load {res.load}")
        return res

    def measured_by(self, memory: bool = False) -> str:
        """The section's opening: the command, the date, the library, the machine."""
        lib = self.snap.get("id", "library not used")
        return f"Measured by `{self.script}` on {machine.today()} ({lib}): {machine.summary(memory)}"

    def publish(self, lines: list[str]) -> int:
        """Prints the section (lines[0] its heading) and writes it as section `name` of the
        output file, unless --no-write."""
        return writer.publish(self.settings.output, self.name, lines)

    def rounds_note(self, res: Results) -> str:
        """How the rounds ran: count, interleaving, seconds, load average before → after."""
        return (f"{res.rounds} rounds, contestants interleaved round-robin (the first rotating each "
                f"round); {res.elapsed:.0f} s of measuring, load average {res.load}")
