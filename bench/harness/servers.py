"""The servers a benchmark talks to, on 127.0.0.1 and a free port only: nginx (one worker,
pinned to the server CPU, root a folder of the run) and Python's ThreadingHTTPServer for the
in-process benchmarks. Both stop when the run ends.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import socket
import subprocess
import threading
import time
from typing import Any, Iterator


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nginx_binary() -> str:
    """nginx's path; installs nginx-light with apt-get if there is none (as the scripts did)."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if found:
        return found
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(["apt-get", "install", "-y", "-q", "nginx-light"], env=env, capture_output=True).returncode:
        subprocess.run(["apt-get", "update", "-q"], capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-q", "nginx-light"], env=env, check=True, capture_output=True)
    return "/usr/sbin/nginx"


def nginx_conf(prefix: str, root: str, port: int, connections: int = 64, keepalive_requests: int = 1000000,
               keepalive_timeout: str = "120s", main: str = "", http: str = "", listen: str = "",
               server: str = "") -> str:
    """nginx.conf: one worker, no access log, sendfile, keep-alive; the texts go into their blocks."""
    temps = "\n".join(f"    {k}_temp_path {prefix}/{k.split('_')[0]};"
                      for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return f"""worker_processes 1;
{main}
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections {connections}; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    gzip off;
    keepalive_requests {keepalive_requests};
    keepalive_timeout {keepalive_timeout};
    default_type application/octet-stream;
    {http}
{temps}
    server {{
        listen 127.0.0.1:{port}{' ' + listen if listen else ''};
        root {root};
        {server}
    }}
}}
"""


def wait_listening(port: int, proc: subprocess.Popen | None, seconds: float = 5.0) -> None:
    """Returns once 127.0.0.1:port accepts; raises if proc exits or time runs out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


@contextlib.contextmanager
def nginx(tmp: str, pin: tuple[str, ...] = (), **conf: Any) -> Iterator[dict[str, Any]]:
    """nginx serving tmp/www (made world-readable: root's nginx workers run unprivileged) with
    nginx_conf's options; yields {"port", "version", "pid", "root"}; stopped on exit."""
    binary = nginx_binary()
    prefix, root = os.path.join(tmp, "nginx"), os.path.join(tmp, "www")
    os.makedirs(prefix, exist_ok=True)
    os.makedirs(root, exist_ok=True)
    for d in (tmp, root):
        os.chmod(d, 0o755)
    port = free_port()
    with open(os.path.join(prefix, "nginx.conf"), "w") as f:
        f.write(nginx_conf(prefix, root, port, **conf))
    log = open(os.path.join(prefix, "stdout.log"), "w")
    proc = subprocess.Popen([*pin, binary, "-p", prefix, "-c", os.path.join(prefix, "nginx.conf"),
                             "-e", os.path.join(prefix, "error.log")], stdout=log, stderr=subprocess.STDOUT)
    try:
        try:
            wait_listening(port, proc)
        except RuntimeError:
            with open(os.path.join(prefix, "error.log")) as f:
                raise RuntimeError("nginx did not start: " + f.read()[-2000:]) from None
        version = subprocess.run([binary, "-v"], capture_output=True, text=True).stderr.strip().split("/")[-1]
        yield {"port": port, "version": version, "pid": proc.pid, "root": root}
    finally:
        stop(proc)
        log.close()


def stop(proc: subprocess.Popen) -> None:
    """TERM, then KILL after 5 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    """Serves files with keep-alive and no log lines; `extensions_map` gives the content types."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def file_server(folder: str, types: dict[str, str]) -> Iterator[str]:
    """folder served on 127.0.0.1 by ThreadingHTTPServer in this process (content types by
    extension, as {".xml": "application/xml"}); yields the base URL; files written later are
    served too."""
    handler = type("Quiet", (QuietFiles,), {"extensions_map": types})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
