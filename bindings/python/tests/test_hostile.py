"""A server that misbehaves on purpose (Tests/server/hostile.py), and the security defaults.

Every test asserts the exact error and that nothing is left behind: no response, no partial or
temporary file next to the download target, the old target intact, and as many live library
handles as before the test once garbage is collected. Each test is bounded in time (timeouts of
at most 2 s)."""

import gc
import json
import os
import shutil
import subprocess
import time

import pytest

import httpcontent as hc
from hostile import BAD_UTF8, LYING_IMAGES, SCHEMES, start_server

OLD = b"the previous download"


@pytest.fixture(scope="module")
def hostile():
    server, port = start_server()
    server.base = f"http://127.0.0.1:{port}"
    yield server
    server.shutdown()


@pytest.fixture(autouse=True)
def no_handle_leaks():
    gc.collect()
    before = hc.live_handles()
    yield
    gc.collect()
    assert hc.live_handles() == before


@pytest.fixture
def client():
    with hc.Client(timeout=2, connect_timeout=2) as c:
        yield c


@pytest.fixture
def target(tmp_path):
    """A download target that already holds an older download."""
    path = tmp_path / "out.bin"
    path.write_bytes(OLD)
    return path


def left_intact(target):
    """The old file is untouched and nothing else (no temporary or partial file) is beside it."""
    return target.read_bytes() == OLD and os.listdir(target.parent) == [target.name]


def fails(client, url, handler, error, **kwargs):
    """The request raises exactly `error` (not a subclass) and returns the exception."""
    with pytest.raises(error) as info:
        client.get(url, handler=handler, **kwargs)
    assert type(info.value) is error and info.value.code == error.code
    return info.value


def hits(client, hostile, path):
    return json.loads(client.get(f"{hostile.base}/hits?path={path}").content)["hits"]


# -- Framing

def test_body_longer_than_content_length_is_cut_and_the_excess_never_read_as_a_response(client, hostile, target):
    r = client.get(f"{hostile.base}/overlong?declared=10", handler=hc.Bytes())
    assert r.content == bytes(range(10))
    # The excess carried a forged response: the next request must get the genuine one.
    assert client.get(f"{hostile.base}/plain", handler=hc.Bytes()).content == b"genuine"
    r = client.get(f"{hostile.base}/overlong?declared=10", handler=hc.File(target))
    assert r.content.size == 10 and target.read_bytes() == bytes(range(10))
    assert os.listdir(target.parent) == ["out.bin"]


def test_body_shorter_than_content_length_fails_and_keeps_the_old_file(client, hostile, target):
    e = fails(client, f"{hostile.base}/truncated?bytes=5000", hc.File(target), hc.TransportError)
    assert e.curl_code == 18
    assert left_intact(target)


@pytest.mark.parametrize("kind", ["hex", "crlf", "overflow", "eof"])
def test_invalid_chunked_encoding_fails_and_keeps_the_old_file(client, hostile, target, kind):
    e = fails(client, f"{hostile.base}/bad-chunk/{kind}", hc.File(target), hc.TransportError)
    assert e.curl_code in (18, 56)
    assert left_intact(target)


def test_connection_reset_mid_download_keeps_the_old_file_and_no_temp_file(client, hostile, target):
    e = fails(client, f"{hostile.base}/reset-mid-body?bytes=50000", hc.File(target), hc.ConnectError)
    assert e.curl_code == 56
    assert left_intact(target)


# -- Headers

def test_headers_that_never_end_time_out(client, hostile, target):
    start = time.monotonic()
    fails(client, f"{hostile.base}/endless-headers?delay=0.05", hc.File(target), hc.Timeout, timeout=1)
    assert time.monotonic() - start < 2
    assert left_intact(target)


def test_a_flood_of_headers_is_cut_off_long_before_the_timeout(client, hostile, target):
    start = time.monotonic()
    fails(client, f"{hostile.base}/header-flood", hc.File(target), hc.TransportError)
    assert time.monotonic() - start < 1.5
    assert left_intact(target)


def test_a_100_kb_header_line_is_refused(client, hostile, target):
    fails(client, f"{hostile.base}/long-header?size={101 * 1024}", hc.File(target), hc.TransportError)
    assert left_intact(target)


# -- Content encoding and size

def test_invalid_gzip_fails_and_keeps_the_old_file(client, hostile, target):
    e = fails(client, f"{hostile.base}/bad-gzip", hc.File(target), hc.TransportError)
    assert e.curl_code == 61
    assert left_intact(target)


def test_gzip_bomb_is_stopped_by_the_decoded_size_limit(client, hostile, target):
    fails(client, f"{hostile.base}/gzip-bomb?mb=64", hc.Bytes(max_size=1 << 20), hc.TooLarge)
    fails(client, f"{hostile.base}/gzip-bomb?mb=64", hc.File(target, max_size=1 << 20), hc.TooLarge)
    assert left_intact(target)


def test_a_body_that_never_ends_is_stopped_by_the_size_limit(client, hostile, target):
    start = time.monotonic()
    fails(client, f"{hostile.base}/endless", hc.Bytes(max_size=4 << 20), hc.TooLarge)
    fails(client, f"{hostile.base}/endless", hc.File(target, max_size=4 << 20), hc.TooLarge)
    assert time.monotonic() - start < 2
    assert left_intact(target)


def test_a_drip_feed_slower_than_the_low_speed_limit_times_out(hostile, target):
    start = time.monotonic()
    with hc.Client(low_speed=(100, 1), timeout=5) as slow:
        e = fails(slow, f"{hostile.base}/drip?interval=0.3", hc.File(target), hc.Timeout)
    assert e.curl_code == 28 and "too slow" in e.message
    assert time.monotonic() - start < 2.5
    assert left_intact(target)


# -- Redirects

@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_redirect_to_another_protocol_is_refused(client, hostile, target, scheme):
    e = fails(client, f"{hostile.base}/redirect-scheme/{scheme}", hc.File(target), hc.TransportError)
    assert e.curl_code == 1  # CURLE_UNSUPPORTED_PROTOCOL: never even tried
    assert b"root:" not in e.body
    assert left_intact(target)


def test_an_unparseable_redirect_location_is_the_servers_fault_not_an_invalid_argument(client, hostile, target):
    e = fails(client, f"{hostile.base}/redirect-garbage", hc.File(target), hc.TransportError)
    assert e.curl_code == 3 and e.status == 302  # CURLE_URL_MALFORMAT, after the server's 302
    assert left_intact(target)


def test_a_redirect_loop_stops_after_the_limit(client, hostile, target):
    before = hits(client, hostile, "/redirect-loop")
    fails(client, f"{hostile.base}/redirect-loop", hc.File(target), hc.TooManyRedirects)
    assert hits(client, hostile, "/redirect-loop") - before == 11  # the request and 10 redirects
    assert left_intact(target)


def test_credentials_are_not_forwarded_to_another_host(client, hostile):
    secrets = {"Authorization": "Bearer s3cret", "Cookie": "session=s3cret"}
    r = client.get(f"{hostile.base}/auth-redirect", headers=secrets)
    seen = json.loads(r.content)
    assert seen["host"].startswith(hostile.other_host + ":")  # the redirect did cross hosts
    assert seen["authorization"] is None and seen["cookie"] is None
    # The same redirect on the same host keeps them: the check above can fail.
    seen = json.loads(client.get(f"{hostile.base}/auth-redirect?same=1", headers=secrets).content)
    assert seen["authorization"] == "Bearer s3cret" and seen["cookie"] == "session=s3cret"


# -- Bodies the handlers must survive

def test_json_nested_a_million_deep_is_streamed_through_text_and_bytes(client, hostile):
    # The Python binding has no JSON handler yet: its variant of this case joins with it
    # (the C and Swift suites already run it against the JSON handlers).
    text = client.get(f"{hostile.base}/deep-json?depth=1000000", handler=hc.Text()).content
    assert len(text) == 2_000_000 and text.startswith("[[[") and text.endswith("]]]")
    fails(client, f"{hostile.base}/deep-json?depth=1000000", hc.Bytes(max_size=1_000_000), hc.TooLarge)


@pytest.mark.parametrize("kind", sorted(BAD_UTF8) + ["truncated"])
def test_invalid_utf8_in_strict_text_is_a_decode_error_at_its_offset(client, hostile, kind):
    e = fails(client, f"{hostile.base}/bad-utf8/{kind}", hc.Text(), hc.DecodeError)
    assert e.offset == 3


@pytest.mark.parametrize("kind", sorted(LYING_IMAGES))
def test_an_image_whose_header_lies_about_its_size_is_refused(client, hostile, kind):
    e = fails(client, f"{hostile.base}/lying-image/{kind}", hc.Image(), hc.DecodeError)
    assert ("claims" in e.message) == (kind != "short")


# -- Security defaults

@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """An HTTPS server whose certificate (for `localhost` only) is made now and trusted by nobody."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: cannot make a self-signed certificate")
    d = tmp_path_factory.mktemp("tls")
    cert, key = str(d / "cert.pem"), str(d / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                    "-days", "1", "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", cert],
                   check=True, capture_output=True, timeout=30)
    server, port = start_server(tls=(cert, key))
    server.base = f"https://localhost:{port}"
    server.cert = cert
    yield server
    server.shutdown()


def test_tls_is_verified_by_default(tls_server):
    with hc.Client(timeout=2) as c:
        e = fails(c, f"{tls_server.base}/plain", hc.Bytes(), hc.TransportError)
    assert e.curl_code == 60  # CURLE_PEER_FAILED_VERIFICATION
    with hc.Client(timeout=2, verify=False) as c:
        assert c.get(f"{tls_server.base}/plain").content == b"genuine"
    with hc.Client(timeout=2, ca_file=tls_server.cert) as c:
        assert c.get(f"{tls_server.base}/plain").content == b"genuine"
        # A trusted certificate for another name is still refused: the host name is checked.
        other = tls_server.base.replace("localhost", "127.0.0.1")
        e = fails(c, f"{other}/plain", hc.Bytes(), hc.TransportError)
        assert e.curl_code == 60


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1:{port}/x", "gopher://127.0.0.1:{port}/x",
                                 "dict://127.0.0.1:{port}/d:x", "telnet://127.0.0.1:{port}/"])
def test_only_http_and_https_are_spoken(client, hostile, url):
    # Refused before any connection, as the caller's argument, naming the scheme.
    e = fails(client, url.format(port=hostile.port), hc.Bytes(), hc.InvalidArgument)
    scheme = url.split(":", 1)[0]
    assert f'scheme "{scheme}"' in e.message and e.curl_code == 0 and b"root:" not in e.body


def test_redirects_are_bounded(hostile):
    with hc.Client(timeout=2) as c:  # the default: at most 10
        assert c.get(f"{hostile.base}/redirect-chain/10").content == b"done"
        fails(c, f"{hostile.base}/redirect-chain/11", hc.Bytes(), hc.TooManyRedirects)
    with hc.Client(timeout=2, max_redirects=2) as c:
        assert c.get(f"{hostile.base}/redirect-chain/2").content == b"done"
        fails(c, f"{hostile.base}/redirect-chain/3", hc.Bytes(), hc.TooManyRedirects)


@pytest.mark.parametrize("name,value", [("X-Evil", "a\r\nInjected: yes"), ("X-Evil", "a\nInjected: yes"),
                                        ("X-Evil", "a\rInjected: yes"), ("X-Evil", "a\x00b"),
                                        ("X-Evil\r\nInjected", "yes"), ("X-Evil: a\r\nInjected", "yes")])
def test_crlf_header_injection_is_refused_before_sending(client, hostile, name, value):
    path = "/inject-target"
    with pytest.raises(hc.InvalidArgument):
        client.get(f"{hostile.base}{path}", headers={name: value})
    with pytest.raises(hc.InvalidArgument):
        hc.Client(headers={name: value})
    if "\r" in value or "\n" in value:
        with pytest.raises(hc.InvalidArgument):
            hc.Client(user_agent=f"agent{value}")
    for url in [f"{hostile.base}{path}\r\nInjected: yes", f"{hostile.base}{path} HTTP/1.1\r\nX: y"]:
        with pytest.raises(hc.InvalidArgument):
            client.get(url)
    with pytest.raises(hc.InvalidArgument):
        client.request("GET /x HTTP/1.1\r\nInjected: yes\r\n", f"{hostile.base}{path}")
    if "\r" in value or "\n" in value:  # a body's Content-Type and a part's headers are headers too
        with pytest.raises(hc.InvalidArgument):
            client.post(f"{hostile.base}{path}", data=b"x", content_type=f"text/plain{value}")
        with pytest.raises(hc.InvalidArgument):
            client.post(f"{hostile.base}{path}", multipart=[hc.BytesPart("f", b"x", "a.txt", f"text/plain{value}")])
        with pytest.raises(hc.InvalidArgument):
            client.post(f"{hostile.base}{path}", multipart=[hc.BytesPart("f", b"x", f"a{value}.txt")])
    assert hits(client, hostile, path) == 0


def test_download_path_is_exactly_what_the_caller_gave(client, hostile, tmp_path):
    folder = tmp_path / "downloads"
    folder.mkdir()
    target = folder / "out.bin"
    for name in ["../escaped.bin", str(tmp_path / "absolute.bin"), "sub/dir.bin", "evil.sh"]:
        quoted = name.replace("/", "%2F")
        r = client.get(f"{hostile.base}/disposition?name={quoted}", handler=hc.File(target))
        assert r.content.path == str(target) and target.read_bytes() == b"payload"
    r = client.get(f"{hostile.base}/redirect-chain/2", handler=hc.File(target))
    assert r.content.path == str(target) and target.read_bytes() == b"done"
    # A NUL would cut the path short in C: refused, not truncated to another path.
    with pytest.raises(hc.InvalidArgument):
        client.get(f"{hostile.base}/plain", handler=hc.File(str(folder / "x.bin") + "\x00/../../evil"))
    assert sorted(os.listdir(tmp_path)) == ["downloads"] and os.listdir(folder) == ["out.bin"]
