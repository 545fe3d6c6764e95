"""The one benchmark harness (issue 29): contestants as data, one round-robin runner, one
section writer. See bench/README.md, "Adding a benchmark"."""

from .contestant import Contestant, Ratio
from .rounds import Failed, NotInstalled, Results, Runner, log, parse_kv, parse_mbps
from .session import Session
from .settings import Settings, parse

__all__ = ["Contestant", "Ratio", "Failed", "NotInstalled", "Results", "Runner", "log", "parse_kv",
           "parse_mbps", "Session", "Settings", "parse"]
