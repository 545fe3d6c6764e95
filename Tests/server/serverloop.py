"""The command-line lifetime both test servers share: print the port, then serve until SIGTERM or
SIGINT, until stdin closes (with --exit-on-stdin-eof, so a parent that dies takes the server with
it), or until --lifetime seconds have passed."""

import signal
import sys
import threading
import time


def serve_until_done(server, port: int, exit_on_stdin_eof: bool, lifetime: float) -> int:
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    print(f"PORT {port}", flush=True)

    if exit_on_stdin_eof:
        def watch_stdin():
            try:
                while sys.stdin.buffer.read1(65536):
                    pass
            except (OSError, ValueError):
                pass
            done.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    deadline = time.monotonic() + lifetime if lifetime > 0 else None
    while not done.is_set():
        if deadline is not None and time.monotonic() >= deadline:
            break
        done.wait(0.2)
    server.shutdown()
    return 0
