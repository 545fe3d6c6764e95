"""The behaviours the C header promises, as the Python front gives them (issue 14): every header
of a rejected response with its URL and method, empty bodies for the JSON handler, a strict text
error's body, other schemes refused up front, a finished part answered with 416, a request that
cannot start in `map`, and proxies per client and per request."""

import json

import pytest

import httpcontent as hc


def test_a_rejected_response_carries_all_its_headers_its_url_and_its_method(client, base_url):
    with pytest.raises(hc.UnacceptableStatus) as info:
        client.request("DELETE", f"{base_url}/redirect-to?url=/status/403")
    e = info.value
    # The same fields, in the same order, as the response itself gives when accepted.
    accepted = client.request("DELETE", f"{base_url}/status/403", handler=hc.Bytes(accept_status=[403]))
    assert isinstance(e.headers, hc.Headers)
    assert [name.lower() for name, _ in e.headers.items()] == [name.lower() for name, _ in accepted.headers.items()]
    assert e.headers["content-length"] == "10" and "server" in e.headers and "date" in e.headers
    assert e.url == f"{base_url}/status/403"      # the final URL, after the redirect
    assert e.method == "DELETE"


def test_a_failure_without_a_response_names_the_request(client):
    with pytest.raises(hc.TransportError) as info:
        client.request("PUT", "http://127.0.0.1:1/nothing-listens", data=b"x")
    assert info.value.url == "http://127.0.0.1:1/nothing-listens" and info.value.method == "PUT"
    assert info.value.headers is None and info.value.status == 0


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/x", "gopher://127.0.0.1/x", "file:///etc/passwd"])
def test_other_schemes_are_refused_before_any_connection(client, url):
    with pytest.raises(hc.InvalidArgument, match="scheme") as info:
        client.get(url)
    assert info.value.curl_code == 0
    result = client.map([hc.Request("GET", url)])[0]
    assert isinstance(result, hc.InvalidArgument) and "scheme" in result.message


def test_json_honours_the_configured_empty_statuses_and_methods(client, base_url):
    empty_json = f"{base_url}/ctype?type=application/json&body="
    with pytest.raises(hc.DecodeError):
        client.get(empty_json, handler=hc.JSON())
    assert client.get(empty_json, handler=hc.JSON(empty_statuses=[200])).content is None
    with pytest.raises(hc.DecodeError):   # 204 left out of the list: its empty body is an error
        client.get(f"{base_url}/status/204", handler=hc.JSON(empty_statuses=[200]))
    with pytest.raises(hc.DecodeError):
        client.head(f"{base_url}/json?doc=%7B%7D", handler=hc.JSON(empty_methods=[]))
    assert client.head(f"{base_url}/json?doc=%7B%7D", handler=hc.JSON()).content is None


def test_a_strict_text_decode_error_carries_the_body(client, base_url):
    with pytest.raises(hc.DecodeError) as info:
        client.get(f"{base_url}/text?raw_hex=68c3a96cff6c6f", handler=hc.Text(encoding="utf-8"))
    assert info.value.offset == 4
    assert info.value.body == bytes.fromhex("68c3a96cff6c6f")


def test_a_complete_part_answered_with_416_is_renamed_into_place(client, base_url, tmp_path):
    target = tmp_path / "whole.bin"
    client.get(f"{base_url}/range/1000", handler=hc.File(target))
    target.rename(str(target) + ".part")
    r = client.get(f"{base_url}/range/1000", handler=hc.File(target, resume=True))
    assert r.status == 416 and r.content.resumed and r.content.bytes_written == 0 and r.content.size == 1000
    assert target.read_bytes() == bytes(i % 251 for i in range(1000))
    assert not (tmp_path / "whole.bin.part").exists()


def test_map_gives_a_request_that_cannot_start_its_own_error(client, base_url, tmp_path):
    existing = tmp_path / "exists"
    existing.write_bytes(b"keep")
    results = client.map([hc.Request("GET", f"{base_url}/bytes/5"),
                          hc.Request("GET", f"{base_url}/bytes/5", handler=hc.File(existing, overwrite=False)),
                          hc.Request("GET", f"{base_url}/bytes/7")])
    assert isinstance(results[1], hc.LocalIOError) and existing.read_bytes() == b"keep"
    assert results[0].content == bytes(range(5)) and len(results[2].content) == 7


def _target(client, base_url, **options):
    return json.loads(client.get(f"{base_url}/echo", handler=hc.Bytes(), **options).content)["target"]


def test_proxy_per_client_and_per_request(base_url):
    # The test server plays the proxy: through one, it sees the absolute-form target.
    with hc.Client(timeout=10, proxy=base_url) as c:
        assert _target(c, base_url) == f"{base_url}/echo"
        assert _target(c, base_url, proxy="") == "/echo"
    with hc.Client(timeout=10, proxy=base_url, no_proxy="127.0.0.1") as c:
        assert _target(c, base_url) == "/echo"
    with hc.Client(timeout=10, proxy="") as c:
        assert _target(c, base_url) == "/echo"
        assert _target(c, base_url, proxy=base_url) == f"{base_url}/echo"
    with pytest.raises(hc.InvalidArgument, match="proxy"):
        hc.Client(proxy="ftp://127.0.0.1:21")
    with hc.Client(timeout=10) as c, pytest.raises(hc.InvalidArgument, match="proxy"):
        c.get(f"{base_url}/echo", proxy="http://x\r\nInjected: 1")
