"""The command-line lifetime both test servers share: print the port, then serve until SIGTERM or
SIGINT, until stdin closes (with --exit-on-stdin-eof, so a parent that dies takes the server with
it), or until --lifetime seconds have passed."""

import signal
import sys
import threading
import time


def serve_until_done(server, port: int, exit_on_stdin_eof: bool, lifetime: float) -> int:
    done = threading.Event()
    # A handler must not call done.set(): it runs on the main thread between bytecodes, possibly
    # inside done.wait() with the Event's (non-reentrant) lock held, and set() would then wait on
    # that lock forever. That happened when stdin closed and SIGTERM came at the same instant.
    # The handler only flips a flag; the loop below reads it at least every 0.1 s.
    signalled = False

    def on_signal(*_):
        nonlocal signalled
        signalled = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
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
    while not done.is_set() and not signalled:
        if deadline is not None and time.monotonic() >= deadline:
            break
        done.wait(0.1)
    server.shutdown()
    return 0
