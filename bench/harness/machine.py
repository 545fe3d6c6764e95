"""The machine: its facts for a report, the load average before and after a run, and CPU pinning
(server and client on different cores: request rates here swing 3–5× with core placement).
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import platform
import shutil
import subprocess


def loadavg() -> str:
    """The 1, 5 and 15-minute load averages, "a b c"."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


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


def command_output(argv: list[str], default: str = "?") -> str:
    """A tool's first output line (stdout or stderr), or default if it cannot run."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return default
    out = (p.stdout or p.stderr).strip().splitlines()
    return out[0] if out and p.returncode == 0 else default


def libcurl_version() -> str:
    return command_output(["curl-config", "--version"]).replace("libcurl ", "")


def python_version() -> str:
    return platform.python_version()


def summary(memory: bool = False) -> str:
    """"<n> CPUs (<model>), [<RAM>, ]Linux <release>, libcurl <version>"."""
    ram = f"{mem_total()}, " if memory else ""
    return (f"{os.cpu_count()} CPUs ({cpu_model()}), {ram}Linux {platform.release()}, "
            f"libcurl {libcurl_version()}")


def today() -> str:
    return datetime.date.today().isoformat()


@dataclasses.dataclass(frozen=True)
class Pinning:
    """taskset prefixes for the server and the client, and the report's sentence about them."""
    server: tuple[str, ...]
    client: tuple[str, ...]
    sentence: str

    @staticmethod
    def of(server_cpu: int, client_cpu: int, server_name: str = "server",
           client_name: str = "client") -> "Pinning":
        """Server on server_cpu, client on client_cpu; unpinned with one CPU or no taskset."""
        if (os.cpu_count() or 1) < 2 or not shutil.which("taskset"):
            return Pinning((), (), "unpinned (1 CPU or no taskset)")
        return Pinning(("taskset", "-c", str(server_cpu)), ("taskset", "-c", str(client_cpu)),
                       f"{server_name} on CPU {server_cpu}, {client_name} on CPU {client_cpu} (taskset)")

    def pin_self(self) -> None:
        """Moves this process (an in-process benchmark's client) onto the client CPU."""
        if self.client:
            os.sched_setaffinity(0, {int(self.client[-1])})
