"""An HTTP/2 server for the tests of every front: a real nginx (TLS, ALPN h2) on 127.0.0.1 and a
free port, with a certificate made for the test, serving /f{i}.bin = bytes([i]) * (1000 + i)
for i < 40, and an access log of one line per request: "<connection> <protocol> <uri>". It also
listens on the Unix socket DIR/nginx.sock, asks for an optional client certificate (the CA's)
and answers /whoami with "<verification> <client subject>".

    python3 h2server.py DIR [--fresh] [--tls12] [--http1]

(--fresh: keepalive_timeout 0, a new connection per request, and the log's fourth field says
whether the TLS session was resumed; --tls12: TLS 1.2 only, where sessions resume by ticket;
--http1: ALPN offers http/1.1 only. nginx 1.22 ends an h2 connection with keepalive_timeout 0
abruptly, which makes OpenSSL 3.0 mark its session not resumable: resumption tests use --http1)

prints "READY <port> <ca_file> <access_log>" (or "SKIP <reason>" where nginx with http_v2 or
openssl is missing) and stops nginx when its stdin closes. From Python: `start(dir)`, `stop`.
"""

import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

FILES = 40


class Unavailable(Exception):
    """nginx with http_v2, or openssl, is not installed: the test skips with this reason."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_certificates(openssl: str, d: Path) -> None:
    """A CA (ca.pem) and the server's certificate signed by it (cert.pem, key.pem, for
    127.0.0.1 and hc.test), and a client certificate (client.pem, client.key, client.p12): clients that refuse a self-signed CA as the server's own certificate
    (rustls: pyreqwest, httpr) verify it too. bench/suites/https.py makes its own with it."""
    def run(*args: str) -> None:
        subprocess.run([openssl, *args], check=True, capture_output=True, timeout=60)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=httpcontent test CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem"))
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
        "-keyout", str(d / "key.pem"), "-out", str(d / "cert.csr"))
    (d / "cert.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:hc.test\nbasicConstraints=CA:FALSE\n"
                                "extendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", str(d / "cert.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca.key"),
        "-CAcreateserial", "-days", "1", "-extfile", str(d / "cert.ext"), "-out", str(d / "cert.pem"))
    # A client certificate (EC P-256, quick to make) signed by the same CA, also as PKCS#12
    # (password "secret"), for the client-certificate tests (/whoami answers its subject).
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=hc-client",
        "-keyout", str(d / "client.key"), "-out", str(d / "client.csr"))
    (d / "client.ext").write_text("basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n")
    run("x509", "-req", "-in", str(d / "client.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca.key"),
        "-CAcreateserial", "-days", "1", "-extfile", str(d / "client.ext"), "-out", str(d / "client.pem"))
    run("pkcs12", "-export", "-in", str(d / "client.pem"), "-inkey", str(d / "client.key"),
        "-passout", "pass:secret", "-out", str(d / "client.p12"))


def start(d: Path, keepalive_timeout: str | None = None, http2: bool = True,
          files: dict[str, int] | None = None, access_log: bool = True,
          protocols: str | None = None, log_sessions: bool = False):
    """Starts nginx in `d`; returns (process, port, CA file, access log path).

    The benchmarks (bench/https.py) ask for more: `keepalive_timeout` ("0": the server closes
    every connection after one response, so each request makes a new TLS connection),
    `http2=False` (ALPN offers http/1.1 only), `protocols` (nginx's ssl_protocols, as
    "TLSv1.2 TLSv1.3"; default: nginx's own), `files` (name -> size, zero bytes, beside the
    tests' ones), `access_log=False` (no disk write per request) and `log_sessions` (a fourth
    field per log line: "r" for a request on a resumed TLS session, "." after a full handshake)."""
    nginx = shutil.which("nginx") or shutil.which("/usr/sbin/nginx")
    openssl = shutil.which("openssl")
    if nginx is None:
        raise Unavailable("nginx is not installed: the HTTP/2 test needs a real h2 server")
    if openssl is None:
        raise Unavailable("openssl is not installed: the HTTP/2 test makes its own certificate")
    if "http_v2_module" not in subprocess.run([nginx, "-V"], capture_output=True, text=True).stderr:
        raise Unavailable("this nginx is built without http_v2")
    make_certificates(openssl, d)
    www = d / "www"
    www.mkdir(exist_ok=True)
    for i in range(FILES):
        (www / f"f{i}.bin").write_bytes(bytes([i]) * (1000 + i))
    for name, size in (files or {}).items():
        with open(www / name, "wb") as f:
            f.truncate(size)
    port = _free_port()
    # One process (no master, no workers under another user): it reads the test's own files.
    (d / "nginx.conf").write_text(f"""
daemon off;
master_process off;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
  log_format conn '$connection $server_protocol $request_uri{" $ssl_session_reused" if log_sessions else ""}';
  access_log {f"{d}/access.log conn" if access_log else "off"};
  {f"keepalive_timeout {keepalive_timeout};" if keepalive_timeout is not None else ""}
  keepalive_requests 1000000;
  sendfile on;
  server {{
    listen 127.0.0.1:{port} ssl{" http2" if http2 else ""};
    listen unix:{d}/nginx.sock ssl{" http2" if http2 else ""};
    {f"ssl_protocols {protocols};" if protocols else ""}
    ssl_certificate {d}/cert.pem;
    ssl_certificate_key {d}/key.pem;
    ssl_client_certificate {d}/ca.pem;
    ssl_verify_client optional;
    location = /whoami {{ default_type text/plain; return 200 "$ssl_client_verify $ssl_client_s_dn"; }}
    root {www};
  }}
}}
""")
    proc = subprocess.Popen([nginx, "-p", str(d), "-c", str(d / "nginx.conf")],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while True:  # bounded: until nginx accepts, exits, or 10 s pass
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port, str(d / "ca.pem"), d / "access.log"
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"nginx did not start on port {port}: {err}")
            time.sleep(0.05)


def log_count(log: Path) -> int:
    """How many requests the access log holds now."""
    return len(log.read_text().splitlines()) if log.exists() else 0


def log_lines(log: Path, after: int, count: int, timeout: float = 10) -> list[list[str]]:
    """The fields of each request logged after line `after`, once `count` are there (or the
    timeout passed): nginx writes a request's line after sending its response, so a client can
    hold the response before the line is written."""
    deadline = time.monotonic() + timeout
    lines = log.read_text().splitlines()[after:] if log.exists() else []
    while len(lines) < count and time.monotonic() < deadline:
        time.sleep(0.02)
        lines = log.read_text().splitlines()[after:] if log.exists() else []
    return [line.split() for line in lines]


def stop(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def main() -> int:
    # A parent may start us with signals blocked (Foundation's Process does); nginx would
    # inherit that and never see stop()'s SIGTERM.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    try:
        flags = set(sys.argv[2:])
        proc, port, ca, log = start(Path(sys.argv[1]), keepalive_timeout="0" if "--fresh" in flags else None,
                                    protocols="TLSv1.2" if "--tls12" in flags else None,
                                    http2="--http1" not in flags,
                                    log_sessions="--fresh" in flags)
    except Unavailable as exc:
        print(f"SKIP {exc}", flush=True)
        return 0
    print(f"READY {port} {ca} {log}", flush=True)
    try:
        sys.stdin.read()  # until the test closes our stdin (or exits)
    finally:
        stop(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
