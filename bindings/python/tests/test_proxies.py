"""Proxies from Python: an http proxy forwarding http:// and tunnelling https:// with CONNECT,
SOCKS5 with local (socks5) and proxy-side (socks5h) name resolution, proxy credentials,
no_proxy, per-request proxies and trust_env=False. The proxies are tiny local ones inside the
test server (Tests/server/proxyserver.py, loopback only), which log what they saw; https goes to
a real nginx with TLS (Tests/server/h2server.py), skipped where nginx is missing."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import httpcontent as hc
import h2server  # Tests/server, on the path through conftest


@pytest.fixture(scope="module")
def proxies(base_url):
    with hc.Client(timeout=10, trust_env=False) as c:
        return c.get(f"{base_url}/proxies").json()


class Seen:
    """What the proxies log from the moment it was made."""

    def __init__(self, base_url):
        self.base_url = base_url
        with hc.Client(timeout=10, trust_env=False) as c:
            self.start = c.get(f"{base_url}/proxies").json()["logged"]

    def entries(self):
        with hc.Client(timeout=10, trust_env=False) as c:
            return c.get(f"{self.base_url}/proxies/log", params={"since": self.start}).json()


def _proxy(proxies, name, scheme="http", credentials=""):
    return f"{scheme}://{credentials}127.0.0.1:{proxies[name]}"


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """(https base URL, CA file) of an nginx with a certificate made for the test."""
    try:
        proc, port, ca, _log = h2server.start(tmp_path_factory.mktemp("tls"))
    except h2server.Unavailable as exc:
        pytest.skip(str(exc))
    yield f"https://127.0.0.1:{port}", ca
    h2server.stop(proc)


# ---------------------------------------------------------------- http proxies

def test_http_proxy_forwards_plain_http_in_absolute_form(base_url, proxies):
    seen = Seen(base_url)
    with hc.Client(timeout=10, proxy=_proxy(proxies, "http")) as c:
        echo = c.get(f"{base_url}/echo").json()
    assert echo["target"] == f"{base_url}/echo"  # absolute-form: it came through a proxy
    assert [(e["proxy"], e["kind"], e["target"]) for e in seen.entries()] == [
        ("http", "forward", f"{base_url}/echo")]


def test_https_goes_through_an_http_proxy_with_connect(base_url, proxies, tls_server):
    origin, ca = tls_server
    seen = Seen(base_url)
    with hc.Client(timeout=10, ca_file=ca, proxy=_proxy(proxies, "http")) as c:
        r = c.get(f"{origin}/f3.bin")
    assert r.content == bytes([3]) * 1003  # TLS end to end, verified against the test's CA
    assert [(e["kind"], e["target"]) for e in seen.entries()] == [("connect", origin[len("https://"):])]


def test_proxy_credentials_are_sent_to_the_proxy_only(base_url, proxies, tls_server):
    origin, ca = tls_server
    seen = Seen(base_url)
    with hc.Client(timeout=10, ca_file=ca, proxy=_proxy(proxies, "http_auth", credentials="pu:pp@")) as c:
        assert c.get(f"{origin}/f1.bin").content == bytes([1]) * 1001
        echo = c.get(f"{base_url}/echo").json()
    assert echo["target"] == f"{base_url}/echo"
    assert "proxy-authorization" not in {k.lower() for k, _ in echo["headers"]}
    assert [(e["kind"], e["auth"]) for e in seen.entries()] == [("connect", True), ("forward", True)]


def test_wrong_proxy_credentials_fail_with_the_proxys_407(base_url, proxies, tls_server):
    origin, ca = tls_server
    wrong = _proxy(proxies, "http_auth", credentials="pu:nope@")
    with hc.Client(timeout=10, ca_file=ca, proxy=wrong) as c:
        with pytest.raises(hc.UnacceptableStatus) as plain:
            c.get(f"{base_url}/echo")
        assert plain.value.status == 407
        assert plain.value.headers["proxy-authenticate"].startswith("Basic")
        with pytest.raises(hc.TransportError, match="407"):  # the CONNECT itself is refused
            c.get(f"{origin}/f1.bin")


# ---------------------------------------------------------------- socks5

def test_socks5_resolves_locally_and_socks5h_lets_the_proxy_resolve(base_url, proxies):
    port = base_url.rsplit(":", 1)[1]
    seen = Seen(base_url)
    with hc.Client(timeout=10, proxy=_proxy(proxies, "socks5", "socks5")) as c:
        assert c.get(f"{base_url}/echo").json()["target"] == "/echo"  # a tunnel: origin-form
    with hc.Client(timeout=10, proxy=_proxy(proxies, "socks5", "socks5h")) as c:
        assert c.get(f"http://localhost:{port}/echo").json()["target"] == "/echo"
    assert [(e["kind"], e["atyp"], e["target"]) for e in seen.entries()] == [
        ("socks5", "ipv4", f"127.0.0.1:{port}"), ("socks5", "domain", f"localhost:{port}")]


def test_socks5_with_credentials(base_url, proxies):
    seen = Seen(base_url)
    with hc.Client(timeout=10, proxy=_proxy(proxies, "socks5_auth", "socks5h", "pu:pp@")) as c:
        assert c.get(f"{base_url}/bytes/10").content == bytes(range(10))
    with hc.Client(timeout=10, proxy=_proxy(proxies, "socks5_auth", "socks5h", "pu:bad@")) as c:
        with pytest.raises(hc.TransportError):
            c.get(f"{base_url}/bytes/10")
    assert [(e["auth"], e.get("refused", False)) for e in seen.entries()] == [(True, False), (False, True)]


def test_https_through_socks5h(base_url, proxies, tls_server):
    origin, ca = tls_server
    seen = Seen(base_url)
    with hc.Client(timeout=10, ca_file=ca) as c:  # the proxy of this request only
        r = c.get(f"{origin}/f2.bin", proxy=_proxy(proxies, "socks5", "socks5h"))
        assert r.content == bytes([2]) * 1002
        assert c.get(f"{origin}/f2.bin", proxy="").content == r.content  # and directly
    assert [(e["kind"], e["target"]) for e in seen.entries()] == [("socks5", origin[len("https://"):])]


# ---------------------------------------------------------------- no_proxy, trust_env

def test_no_proxy_hosts_go_directly(base_url, proxies):
    seen = Seen(base_url)
    with hc.Client(timeout=10, proxy=_proxy(proxies, "http"), no_proxy="localhost,127.0.0.1") as c:
        assert c.get(f"{base_url}/echo").json()["target"] == "/echo"
    with hc.Client(timeout=10, proxy=_proxy(proxies, "socks5", "socks5h"), no_proxy="*") as c:
        assert c.get(f"{base_url}/echo").json()["target"] == "/echo"
    assert seen.entries() == []


def test_trust_env_false_ignores_the_proxy_variables(base_url, proxies):
    # In a process of its own, whose environment names the http proxy (and an empty no_proxy):
    # the default client goes through it, trust_env=False goes directly, and a proxy given
    # explicitly is used either way.
    code = ("import json, sys, httpcontent as hc\n"
            "url = sys.argv[1] + '/echo'\n"
            "out = []\n"
            "for c in (hc.Client(), hc.Client(trust_env=False), hc.Client(trust_env=False, proxy=sys.argv[2])):\n"
            "    out.append(c.get(url).json()['target'])\n"
            "print(json.dumps(out))\n")
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["http_proxy"] = _proxy(proxies, "http")
    env["no_proxy"] = ""
    env["PYTHONPATH"] = str(Path(hc.__file__).resolve().parents[1])
    seen = Seen(base_url)
    out = subprocess.run([sys.executable, "-c", code, base_url, _proxy(proxies, "http")], env=env,
                         capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == [f"{base_url}/echo", "/echo", f"{base_url}/echo"]
    assert [e["kind"] for e in seen.entries()] == ["forward", "forward"]


def test_proxies_refuse_a_target_off_the_machine_in_the_test_server(base_url, proxies):
    # The test proxies are loopback only: an IP literal elsewhere is refused by the proxy itself
    # (no name is resolved, nothing leaves the machine).
    with hc.Client(timeout=10, proxy=_proxy(proxies, "http")) as c:
        with pytest.raises(hc.UnacceptableStatus) as info:
            c.get("http://192.0.2.1/")
    assert info.value.status == 403
