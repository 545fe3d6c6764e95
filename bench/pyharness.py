"""What the in-process Python benchmarks (plist_bench.py, xml_bench.py) share: files served from a
temporary folder by Python's ThreadingHTTPServer on 127.0.0.1, one round-robin runner over
contestants declared as data, and the report's end (printed, and written into BENCHMARKS.md when
asked).

A contestant is a dict with at least "name" and "run" (a callable taking nothing); the runner
times each once per round, interleaved, so machine load hits them alike.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import http.server
import shutil
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Iterator

import report_common


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    """Serves files with keep-alive and no log lines; `extensions_map` gives the content types."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def file_server(prefix: str, types: dict[str, str]) -> Iterator[tuple[str, str]]:
    """A temporary folder served on 127.0.0.1 (content types by extension, as `{".xml":
    "application/xml"}`): yields (folder, base URL); files written there later are served too.
    The server stops and the folder is removed on exit."""
    folder = tempfile.mkdtemp(prefix=prefix)
    handler = type("Quiet", (QuietFiles,), {"extensions_map": types})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(folder, ignore_errors=True)


def run_rounds(contestants: list[dict[str, Any]], rounds: int,
               check: Callable[[dict[str, Any], Any], None] | None = None
               ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Runs every contestant once per round, in order, after a garbage collection; `check` sees
    each result (untimed). Returns the wall and the CPU seconds (this process, every thread) per
    contestant name, one entry per round; prints each round's wall times to stderr."""
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for r in range(rounds):
        for c in contestants:
            gc.collect()
            p, w = time.process_time(), time.perf_counter()
            result = c["run"]()
            wall.setdefault(c["name"], []).append(time.perf_counter() - w)
            cpu.setdefault(c["name"], []).append(time.process_time() - p)
            if check is not None:
                check(c, result)
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in wall.items()), file=sys.stderr)
    return wall, cpu


def finish(section: str, lines: list[str], output: str | None) -> int:
    """Prints the report and, with `output`, writes it as that section of the file."""
    text = "\n".join(lines) + "\n"
    print(text)
    if output:
        report_common.replace_section(output, section, text)
    return 0
