"""Transport options (issue 31) against a real nginx with TLS (Tests/server/h2server.py: a CA of
the test's own, a server certificate for 127.0.0.1 and hc.test, a client certificate, a Unix
socket, /whoami answering the client certificate's verification and subject). Each option is
shown to change what happens: the same request without it fails, or fails with it set wrong.
The tests skip, saying why, where nginx or openssl is missing."""

import base64
import hashlib
import subprocess
from pathlib import Path

import pytest

import httpcontent as hc
import h2server  # Tests/server, on the path through conftest

# curl's codes the tests tell apart (hc_error_curl_code)
CURLE_COULDNT_RESOLVE_HOST = 6
CURLE_SSL_CONNECT_ERROR = 35
CURLE_SSL_PINNEDPUBKEYNOTMATCH = 90


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """(port, certificate folder) of nginx offering TLS 1.2 and 1.3."""
    d = tmp_path_factory.mktemp("tls")
    try:
        proc, port, _, _ = h2server.start(d, protocols="TLSv1.2 TLSv1.3")
    except h2server.Unavailable as exc:
        pytest.skip(str(exc))
    yield port, d
    h2server.stop(proc)


@pytest.fixture(scope="module")
def tls12(tmp_path_factory):
    """(port, certificate folder) of nginx offering TLS 1.2 only."""
    d = tmp_path_factory.mktemp("tls12")
    try:
        proc, port, _, _ = h2server.start(d, protocols="TLSv1.2")
    except h2server.Unavailable as exc:
        pytest.skip(str(exc))
    yield port, d
    h2server.stop(proc)


def _ca(d: Path) -> str:
    return str(d / "ca.pem")


def test_resolve_sends_a_host_name_to_the_address_given(tls):
    port, d = tls
    url = f"https://hc.test:{port}/f1.bin"
    with hc.Client(ca_file=_ca(d), resolve=[f"hc.test:{port}:127.0.0.1"]) as client:
        assert client.get(url).content == bytes([1]) * 1001   # TLS verified for hc.test
    with hc.Client(ca_file=_ca(d)) as client, pytest.raises(hc.TransportError) as e:
        client.get(url)
    assert e.value.curl_code == CURLE_COULDNT_RESOLVE_HOST


def test_resolve_rejects_an_entry_that_is_not_host_port_address():
    with pytest.raises(hc.InvalidArgument, match="resolve"):
        hc.Client(resolve=["hc.test:443"])


def test_unix_socket_carries_the_request(tls):
    port, d = tls
    with hc.Client(ca_file=_ca(d), unix_socket=str(d / "nginx.sock")) as client:
        # The URL's port is closed: only the socket can have answered.
        r = client.get("https://127.0.0.1:1/f2.bin")
    assert r.content == bytes([2]) * 1002


def test_ca_pem_from_memory_is_the_trust_store(tls):
    port, d = tls
    url = f"https://127.0.0.1:{port}/f3.bin"
    with hc.Client(ca_pem=(d / "ca.pem").read_bytes()) as client:
        assert client.get(url).status == 200
    with hc.Client() as client, pytest.raises(hc.TransportError):
        client.get(url)   # the system's store does not know the test's CA


@pytest.mark.parametrize("kind", ["pem", "pem-one-blob", "p12"])
def test_client_certificate_from_memory_is_presented(tls, kind):
    port, d = tls
    cert, key = (d / "client.pem").read_bytes(), (d / "client.key").read_bytes()
    option = {"pem": {"cert_pem": (cert, key)}, "pem-one-blob": {"cert_pem": cert + key},
              "p12": {"cert_p12": ((d / "client.p12").read_bytes(), "secret")}}[kind]
    with hc.Client(ca_file=_ca(d), **option) as client:
        assert client.get(f"https://127.0.0.1:{port}/whoami", handler=hc.Text()).content == "SUCCESS CN=hc-client"
    with hc.Client(ca_file=_ca(d)) as client:
        assert client.get(f"https://127.0.0.1:{port}/whoami", handler=hc.Text()).content == "NONE "


def test_pkcs12_with_a_wrong_password_fails(tls):
    port, d = tls
    with hc.Client(ca_file=_ca(d), cert_p12=((d / "client.p12").read_bytes(), "wrong")) as client, \
            pytest.raises(hc.TransportError):
        client.get(f"https://127.0.0.1:{port}/whoami")


def test_minimum_tls_version_refuses_an_older_server(tls12):
    port, d = tls12
    url = f"https://127.0.0.1:{port}/f4.bin"
    with hc.Client(ca_file=_ca(d), min_tls="1.2") as client:
        assert client.get(url).status == 200
    with hc.Client(ca_file=_ca(d), min_tls="1.3") as client, pytest.raises(hc.TransportError) as e:
        client.get(url)
    assert e.value.curl_code == CURLE_SSL_CONNECT_ERROR
    with pytest.raises(ValueError):
        hc.Client(min_tls="1.4")


def test_cipher_list_is_what_the_handshake_may_use(tls12):
    port, d = tls12
    url = f"https://127.0.0.1:{port}/f5.bin"
    with hc.Client(ca_file=_ca(d), ciphers="ECDHE-RSA-AES128-GCM-SHA256") as client:
        assert client.get(url).status == 200
    # Only ECDSA suites: the server's RSA certificate can use none of them.
    with hc.Client(ca_file=_ca(d), ciphers="ECDHE-ECDSA-AES128-GCM-SHA256") as client, \
            pytest.raises(hc.TransportError):
        client.get(url)


def _pin(d: Path) -> str:
    """sha256//<base64> of the server's public key, as curl's --pinnedpubkey takes it."""
    der = subprocess.run(["openssl", "x509", "-in", str(d / "cert.pem"), "-pubkey", "-noout"],
                         capture_output=True, check=True).stdout
    key = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=der,
                         capture_output=True, check=True).stdout
    return "sha256//" + base64.b64encode(hashlib.sha256(key).digest()).decode()


def test_pinned_public_key_accepts_the_server_and_refuses_another_key(tls):
    port, d = tls
    url = f"https://127.0.0.1:{port}/f6.bin"
    with hc.Client(ca_file=_ca(d), pinned_public_key=_pin(d)) as client:
        assert client.get(url).status == 200
    other = "sha256//" + base64.b64encode(hashlib.sha256(b"another key").digest()).decode()
    with hc.Client(ca_file=_ca(d), pinned_public_key=other) as client, pytest.raises(hc.TransportError) as e:
        client.get(url)
    assert e.value.curl_code == CURLE_SSL_PINNEDPUBKEYNOTMATCH


def test_happy_eyeballs_timeout_is_checked_and_taken(tls):
    port, d = tls
    with hc.Client(ca_file=_ca(d), happy_eyeballs_timeout=0.05) as client:
        assert client.get(f"https://127.0.0.1:{port}/f7.bin").status == 200
    with pytest.raises(hc.InvalidArgument):
        hc.Client(happy_eyeballs_timeout=-1)


def test_timings_are_the_phases_in_order(tls):
    port, d = tls
    with hc.Client(ca_file=_ca(d)) as client:
        first = client.get(f"https://127.0.0.1:{port}/f8.bin").timings
        kept = client.get(f"https://127.0.0.1:{port}/f8.bin").timings
    assert list(first) == ["dns", "connect", "tls", "pretransfer", "first_byte", "total", "redirect"]
    assert 0 <= first["dns"] <= first["connect"] < first["tls"] <= first["pretransfer"] \
        <= first["first_byte"] <= first["total"]
    assert first["tls"] > first["connect"]   # a handshake took place on the new connection
    assert kept["tls"] <= first["tls"]       # the kept connection made none
    assert first["redirect"] == 0


def test_http_version_is_what_alpn_offers(tls):
    port, d = tls
    log = d / "access.log"
    for version, protocol in ((None, "HTTP/2.0"), ("1.1", "HTTP/1.1"), ("2", "HTTP/2.0")):
        kwargs = {} if version is None else {"http_version": version}
        before = h2server.log_count(log)
        with hc.Client(ca_file=_ca(d), **kwargs) as client:
            assert client.get(f"https://127.0.0.1:{port}/f9.bin").status == 200
        assert h2server.log_lines(log, before, 1)[-1][1] == protocol
    with pytest.raises(ValueError):
        hc.Client(http_version="3")
