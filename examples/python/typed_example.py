"""A typed httpcontent program: checked with `mypy --strict` and `pyright --strict` (tests and
the clean-room install check run both), and run against a local server by the tests.

    python3 typed_example.py BASE_URL      # e.g. http://127.0.0.1:8080 (the test server)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import httpcontent as hc
from httpcontent import ProgressInfo, RequestOptions


class LineCounter(hc.Handler):
    """A handler of one's own: counts the lines of a body as it streams by."""

    def __init__(self) -> None:
        super().__init__()
        self.lines = 0

    def consume(self, chunk: bytes) -> None:
        self.lines += chunk.count(b"\n")

    def finish(self) -> int:
        return self.lines


def main(base: str) -> int:
    seen: list[int] = []

    def progress(info: ProgressInfo) -> bool:
        seen.append(info["received"])
        return False  # True would cancel the transfer

    with hc.Client(timeout=20, headers={"X-Example": "typed"}) as client:  # a Client, not Any
        r: hc.Response = client.get(f"{base}/bytes/1000", handler=hc.Bytes())
        body: bytes = r.content
        print(r.status, r.headers["content-length"], len(body))

        doc: Any = client.get(f"{base}/json?doc=%7B%22a%22%3A%5B1%2C2%5D%7D", handler=hc.JSON()).content
        print(doc["a"])

        options: RequestOptions = {"json": {"name": "Ada"}, "timeout": 10.0, "progress": progress}
        echoed = client.post(f"{base}/echo", **options)
        print(echoed.status, echoed.media_type, bool(seen))

        lines = client.get(f"{base}/ndjson?n=5", handler=LineCounter()).content
        print("lines:", lines)

        with tempfile.TemporaryDirectory() as folder:
            target = Path(folder) / "file.bin"
            download: hc.Download = client.get(f"{base}/bytes/5000", handler=hc.File(target)).content
            print("saved", download.size, "bytes")

        results = client.map([hc.Request("GET", f"{base}/bytes/{n}") for n in (1, 2, 3)])
        print([len(x.content) for x in results if isinstance(x, hc.Response)])

        try:
            client.get(f"{base}/status/404", handler=hc.Discard())
        except hc.UnacceptableStatus as e:
            print("refused:", e.status, e.code)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080"))
