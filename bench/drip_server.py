"""A server that drips records, for the streaming latency benchmark (bench/latency.sh, suites/latency.py): each record is
sent in two writes, the second (the bytes that complete it) after a short pause and carrying the
CLOCK_MONOTONIC nanosecond at which it is written; the client subtracts that from the time it
holds the item. Standard library only; binds 127.0.0.1, prints "PORT n", serves until stdin
closes.

    GET /<kind>?n=N&gap_ms=G&split_ms=S&pad=P

kind: json ({"items": [...]}, items {"i", "pad", "t"}), ndjson, lines ("i pad t"), sse
("data: i pad t"), xml (<feed><e i=".."><p>pad</p><t>T</t></e>...</feed>), bytes (each record
"i pad t\\n", for raw-chunk readers). Records are sent G ms apart, each split S ms before its end.
Chunked encoding, TCP_NODELAY (each write leaves at once).
"""

from __future__ import annotations

import socket
import sys
import threading
import time
import urllib.parse

TYPES = {"json": "application/json", "ndjson": "application/x-ndjson", "lines": "text/plain",
         "sse": "text/event-stream", "xml": "application/xml", "bytes": "application/octet-stream"}


def parts(kind: str, i: int, pad: str) -> tuple[bytes, str]:
    """The first part of record i, and the format of its completing part ({t}: the timestamp)."""
    if kind == "json":
        return (b"" if i == 0 else b", ") + b'{"i": %d, "pad": "%s"' % (i, pad.encode()), ', "t": {t}}'
    if kind == "ndjson":
        return b'{"i": %d, "pad": "%s"' % (i, pad.encode()), ', "t": {t}}\n'
    if kind in ("lines", "bytes"):
        return b"%d %s" % (i, pad.encode()), " {t}\n"
    if kind == "sse":
        return b"data: %d %s" % (i, pad.encode()), " {t}\n\n"
    if kind == "xml":
        return b'<e i="%d"><p>%s</p>' % (i, pad.encode()), "<t>{t}</t></e>"
    raise ValueError(kind)


HEAD = {"json": b'{"items": [', "xml": b"<feed>"}
TAIL = {"json": b"]}", "xml": b"</feed>"}


def serve(conn: socket.socket) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            more = conn.recv(4096)
            if not more:
                return
            data += more
        target = data.split(b" ", 2)[1].decode()
        path, _, query = target.partition("?")
        q = {k: v[0] for k, v in urllib.parse.parse_qs(query).items()}
        kind = path.strip("/")
        n = min(int(q.get("n", "100")), 100_000)
        gap = float(q.get("gap_ms", "10")) / 1000
        split = float(q.get("split_ms", "2")) / 1000
        pad = "x" * int(q.get("pad", "64"))

        def chunk(b: bytes) -> None:
            conn.sendall(b"%x\r\n%s\r\n" % (len(b), b))

        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: " + TYPES[kind].encode()
                     + b"\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        if kind in HEAD:
            chunk(HEAD[kind])
        for i in range(n):
            first, rest = parts(kind, i, pad)
            chunk(first)
            time.sleep(split)
            chunk(rest.replace("{t}", str(time.monotonic_ns())).encode())
            time.sleep(gap)
        if kind in TAIL:
            chunk(TAIL[kind])
        conn.sendall(b"0\r\n\r\n")
    except OSError:
        pass
    finally:
        conn.close()


def main() -> None:
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.2)
    print("PORT", listener.getsockname()[1], flush=True)
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    while not stop.is_set():
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            continue
        conn.settimeout(None)
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
