"""Fixtures of the `hc` tests: the binary, and the shared test server with the two endpoints
only these tests need (a flaky one for --retry, a Content-Disposition one for -J), added by
subclassing its handler here rather than editing Tests/server/testserver.py."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "server"))

import testserver  # noqa: E402
import threading  # noqa: E402


def hc_binary() -> str:
    """HC_BIN, else the checkout's release or debug build of `hc` (built here if neither is)."""
    if os.environ.get("HC_BIN"):
        return os.environ["HC_BIN"]
    for config in ("debug", "release"):
        path = ROOT / ".build" / config / "hc"
        if path.exists():
            return str(path)
    subprocess.run(["swift", "build", "--product", "hc"], cwd=ROOT, check=True, timeout=1800)
    return str(ROOT / ".build" / "debug" / "hc")


class CLIHandler(testserver.Handler):
    flaky_hits: dict = {}
    flaky_lock = threading.Lock()

    def h_flaky(self, args):
        """/flaky/<key>/<n>[?status=503]: the first n requests for key fail with `status`
        (a Retry-After of 0), then 200 "ok after N"."""
        key, n = args[0], int(args[1])
        with self.flaky_lock:
            hits = self.flaky_hits.get(key, 0) + 1
            self.flaky_hits[key] = hits
        if hits <= n:
            return self._send(int(self._q("status", "503")), f"failure {hits}",
                              headers=[("Retry-After", "0")])
        self._send(200, f"ok after {hits - 1}")

    def h_disposition(self, args):
        """/disposition?name=...: a body with `Content-Disposition: attachment; <name>` as given."""
        value = self._q("value", "attachment")
        self._send(200, b"payload", "application/octet-stream", [("Content-Disposition", value)])


@pytest.fixture(scope="session")
def hc():
    return hc_binary()


@pytest.fixture(scope="session")
def base_url():
    server = testserver.Server(("127.0.0.1", 0), handler=CLIHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
