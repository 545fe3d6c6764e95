"""Contestants and ratios as data, as hyperfine and pyperf treat them: a benchmark is a list of
these, not a script. A contestant is either a command (run in a fresh process on the client CPU,
its output line parsed into metrics) or a callable (timed in this process).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence


@dataclasses.dataclass
class Contestant:
    """One thing measured.

    - name: its id in tables and in BENCH_ONLY.
    - settings: the text written beside its figures (what it does, with which options).
    - command: argv of a program, "{count}" replaced by the passes asked for; the harness prefixes
      the client's taskset and parses the program's last output line with the benchmark's `parse`.
    - call: a callable taking nothing, timed in-process (wall and CPU); its result goes to `check`.
    - tags: free-form facts a benchmark groups or labels by (format, group, baseline of...).
    - prepare: run before each measurement, untimed (hyperfine's --prepare): resetting a target file.
    - count: this contestant's passes per measurement, when it differs from the run's (calibrated
      from its own warm-up rate, say); None takes the run's.
    Exit status 3 from a command means "not installed": the contestant is skipped, not failed.
    """
    name: str
    settings: str = ""
    command: Sequence[str] | None = None
    call: Callable[[], Any] | None = None
    tags: dict[str, Any] = dataclasses.field(default_factory=dict)
    prepare: Callable[[], None] | None = None
    count: int | None = None

    def __post_init__(self) -> None:
        if (self.command is None) == (self.call is None):
            raise ValueError(f"{self.name}: give exactly one of command and call")

    def argv(self, count: int) -> list[str]:
        """The command with "{count}" filled in."""
        assert self.command is not None
        return [str(a).replace("{count}", str(count)) for a in self.command]


@dataclasses.dataclass(frozen=True)
class Ratio:
    """A figure of merit: num against den, same-round ratios, a target or None for context.

    A target is "≥ 1.5" or "> 1", met by the median of the same-round ratios."""
    num: str
    den: str
    target: str | None = None
    what: str = ""
