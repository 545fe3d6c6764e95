"""A fault-injecting TCP proxy for the tests of every front (issue 31): links that misbehave,
between a client and a real server on 127.0.0.1, on a free port of its own.

    python3 faultproxy.py UPSTREAM_PORT [--rate B/S] [--latency S] [--jitter S] [--stall-after N]
        [--stall S] [--reset-after N] [--drip-headers S] [--faulty K]

prints "READY <port>" and runs until its stdin closes; a line "stats" on its stdin is answered
with "STATS <connections> <resets>" (what the C tests check, as Python reads the attributes). From
Python: `FaultProxy(upstream_port,
...)`, `.start()` gives the port, `.stop()`. Faults, on what flows from the server to the client
(the request side is copied as it is):

- rate: at most this many bytes a second (a bandwidth cap);
- latency, jitter: each piece sent waits latency + uniform(0, jitter) seconds (seeded: the same
  run gives the same delays);
- stall_after, stall: once this many bytes have gone, nothing moves for `stall` seconds;
- reset_after: once this many bytes have gone, the connection is reset (RST, not FIN);
- drip_headers: the response head goes one byte at a time, this many seconds apart;
- faulty: only the first K connections get the faults (None: all), so a client that reconnects
  or resumes gets a clean link.
Every wait is bounded (`stop` ends them); pieces are at most 16 KiB.
"""

from __future__ import annotations

import argparse
import random
import socket
import struct
import sys
import threading
import time

PIECE = 16 * 1024


class FaultProxy:
    def __init__(self, upstream_port: int, *, rate: float | None = None, latency: float = 0.0,
                 jitter: float = 0.0, stall_after: int | None = None, stall: float = 0.0,
                 reset_after: int | None = None, drip_headers: float | None = None,
                 faulty: int | None = None, seed: int = 31) -> None:
        self.upstream_port = upstream_port
        self.rate, self.latency, self.jitter = rate, latency, jitter
        self.stall_after, self.stall, self.reset_after = stall_after, stall, reset_after
        self.drip_headers, self.faulty = drip_headers, faulty
        self.random = random.Random(seed)
        self.connections = 0          # accepted so far
        self.resets = 0               # connections reset by `reset_after`
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None

    def start(self) -> int:
        """Listens on 127.0.0.1 and a free port; returns the port."""
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        threading.Thread(target=self._accept, daemon=True).start()
        return self._listener.getsockname()[1]

    def stop(self) -> None:
        self._stopping.set()
        if self._listener is not None:
            self._listener.close()
        with self._lock:
            for s in self._sockets:
                try:
                    s.close()
                except OSError:
                    pass

    def __enter__(self) -> "FaultProxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._stopping.is_set():  # bounded by stop()
            try:
                client, _ = self._listener.accept()  # type: ignore[union-attr]
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                self.connections += 1
                faulty = self.faulty is None or self.connections <= self.faulty
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            client.settimeout(None)
            with self._lock:
                self._sockets += [client, upstream]
            threading.Thread(target=self._copy, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._down, args=(upstream, client, faulty), daemon=True).start()

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _copy(self, src: socket.socket, dst: socket.socket) -> None:
        """Client to server, unchanged."""
        try:
            while data := src.recv(PIECE):
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def _down(self, src: socket.socket, dst: socket.socket, faulty: bool) -> None:
        """Server to client, with the faults."""
        sent, stalled, head = 0, False, b""
        dripping = faulty and self.drip_headers is not None
        try:
            while not self._stopping.is_set() and (data := src.recv(PIECE)):
                if not faulty:
                    dst.sendall(data)
                    continue
                while data and not self._stopping.is_set():
                    if dripping:
                        piece, data = data[:1], data[1:]
                        head += piece
                        dripping = b"\r\n\r\n" not in head
                        self._wait(self.drip_headers or 0)
                    else:
                        piece, data = data[:PIECE], b""
                    if self.reset_after is not None and sent + len(piece) > self.reset_after:
                        dst.sendall(piece[: self.reset_after - sent])
                        self._reset(dst)
                        return
                    if self.stall_after is not None and not stalled and sent + len(piece) > self.stall_after:
                        cut = self.stall_after - sent
                        dst.sendall(piece[:cut])
                        sent, piece, stalled = sent + cut, piece[cut:], True
                        self._wait(self.stall)
                    if self.latency or self.jitter:
                        self._wait(self.latency + self.random.uniform(0, self.jitter))
                    if self.rate:
                        self._wait(len(piece) / self.rate)
                    dst.sendall(piece)
                    sent += len(piece)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def _reset(self, s: socket.socket) -> None:
        """Closes with SO_LINGER 0: the peer sees a reset (ECONNRESET), not an orderly end."""
        with self._lock:
            self.resets += 1
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # The other direction's thread is blocked in recv on this socket, which keeps it open
        # past close(): wake it first (SHUT_RD sends nothing), then close, which now resets.
        try:
            s.shutdown(socket.SHUT_RD)
        except OSError:
            pass
        self._wait(0.05)
        s.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("upstream_port", type=int)
    ap.add_argument("--rate", type=float)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--jitter", type=float, default=0.0)
    ap.add_argument("--stall-after", type=int)
    ap.add_argument("--stall", type=float, default=0.0)
    ap.add_argument("--reset-after", type=int)
    ap.add_argument("--drip-headers", type=float)
    ap.add_argument("--faulty", type=int)
    a = ap.parse_args()
    proxy = FaultProxy(a.upstream_port, rate=a.rate, latency=a.latency, jitter=a.jitter,
                       stall_after=a.stall_after, stall=a.stall, reset_after=a.reset_after,
                       drip_headers=a.drip_headers, faulty=a.faulty)
    print(f"READY {proxy.start()}", flush=True)
    try:
        for line in sys.stdin:   # until stdin closes: the test that started us has gone
            if line.strip() == "stats":
                with proxy._lock:
                    print(f"STATS {proxy.connections} {proxy.resets}", flush=True)
    finally:
        proxy.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
