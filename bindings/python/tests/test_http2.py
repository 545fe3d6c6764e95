"""HTTP/2 from the batch executor: many transfers multiplexed on one connection when the server
speaks h2. The server is a real nginx (TLS, ALPN h2) on 127.0.0.1 with a certificate made for
the test; the test skips, saying why, where nginx (with http_v2) or openssl is missing."""

import shutil
import socket
import subprocess
import time

import pytest

import httpcontent as hc

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if shutil.which("/usr/sbin/nginx") else None)
OPENSSL = shutil.which("openssl")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def h2_server(tmp_path_factory):
    """(base URL, CA file, access log path) of an nginx serving files over HTTP/2 and TLS."""
    if NGINX is None:
        pytest.skip("nginx is not installed: the HTTP/2 test needs a real h2 server")
    if OPENSSL is None:
        pytest.skip("openssl is not installed: the HTTP/2 test makes its own certificate")
    version = subprocess.run([NGINX, "-V"], capture_output=True, text=True).stderr
    if "http_v2_module" not in version:
        pytest.skip("this nginx is built without http_v2")
    d = tmp_path_factory.mktemp("h2")
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")],
                   check=True, capture_output=True, timeout=60)
    www = d / "www"
    www.mkdir()
    for i in range(40):
        (www / f"f{i}.bin").write_bytes(bytes([i]) * (1000 + i))
    port = _free_port()
    # One process (no master, no workers under another user): it reads the test's own files.
    (d / "nginx.conf").write_text(f"""
daemon off;
master_process off;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
  log_format conn '$connection $server_protocol $request_uri';
  access_log {d}/access.log conn;
  server {{
    listen 127.0.0.1:{port} ssl http2;
    ssl_certificate {d}/cert.pem;
    ssl_certificate_key {d}/key.pem;
    root {www};
  }}
}}
""")
    proc = subprocess.Popen([NGINX, "-p", str(d), "-c", str(d / "nginx.conf")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while True:  # bounded: until nginx accepts, exits, or 10 s pass
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                pytest.fail(f"nginx did not start on port {port}: {err}")
            time.sleep(0.05)
    yield f"https://127.0.0.1:{port}", str(d / "cert.pem"), d / "access.log"
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _log_lines(path, after: int) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()[after:]]


def test_a_batch_multiplexes_its_transfers_on_one_h2_connection(h2_server):
    base, ca, log = h2_server
    before = len(log.read_text().splitlines()) if log.exists() else 0
    with hc.Client(ca_file=ca) as client:
        results = client.map([hc.Request("GET", f"{base}/f{i}.bin") for i in range(40)],
                             concurrency=40)
    assert [r.content for r in results] == [bytes([i]) * (1000 + i) for i in range(40)]
    lines = _log_lines(log, before)
    assert len(lines) == 40
    assert {protocol for _, protocol, _ in lines} == {"HTTP/2.0"}
    # All 40 at once on one connection: the later transfers waited for the first connection to
    # say it multiplexes instead of opening their own.
    assert len({conn for conn, _, _ in lines}) == 1


def test_sequential_requests_negotiate_h2_and_verify_the_certificate(h2_server):
    base, ca, _ = h2_server
    with hc.Client(ca_file=ca) as client:
        r = client.get(f"{base}/f3.bin")
        assert r.status == 200 and r.content == bytes([3]) * 1003
    with hc.Client() as untrusting:  # the system's CAs do not know the test's certificate
        with pytest.raises(hc.TransportError):
            untrusting.get(f"{base}/f3.bin")
