"""Issue 28 ("Mends"): where the binding used to decide on its own, the library decides, and
Python only translates."""

import inspect
import socket
import urllib.parse

import pytest

import httpcontent as hc


def _q(text):
    return urllib.parse.quote(text, safe="")


# -- Response.text decodes by the library's rules (hc_text_decode)

def test_text_of_a_bytes_response_reads_a_byte_order_mark_as_the_text_handler_does(client, base_url):
    url = f"{base_url}/text?raw_hex=fffe680069002100&nocharset=1"   # UTF-16LE with its BOM, no charset
    r = client.get(url)
    assert r.content == bytes.fromhex("fffe680069002100")
    assert r.text == client.get(url, handler=hc.Text()).content == "hi!"


def test_text_of_a_bytes_response_follows_the_charset_then_utf8_with_replacement(client, base_url):
    assert client.get(f"{base_url}/text?text=caf%C3%A9&charset=iso-8859-1").text == "café"
    assert client.get(f"{base_url}/text?raw_hex=61ff62&nocharset=1").text == "a\ufffdb"
    # A charset the library does not read: UTF-8, as when none is named.
    assert client.get(f"{base_url}/ctype?type={_q('text/plain; charset=x-unknown')}&body=ok").text == "ok"


# -- raise_for_status raises what a refused response raises

def test_raise_for_status_raises_the_error_a_rejected_response_carries(client, base_url):
    url = f"{base_url}/status/404?json=1&message=nothing+here"
    with pytest.raises(hc.UnacceptableStatus) as rejected:
        client.get(url)
    r = client.get(url, handler=hc.Bytes(accept_status=[]))
    with pytest.raises(hc.UnacceptableStatus) as raised:
        r.raise_for_status()
    a, b = rejected.value, raised.value
    assert str(b) == str(a) == "HTTP 404 Not Found: nothing here"
    assert (b.status, b.method, b.url, b.server_message) == (a.status, a.method, a.url, a.server_message) \
        == (404, "GET", url, "nothing here")
    assert b.body == a.body and b.headers["Content-Type"] == "application/json"
    client.get(f"{base_url}/status/201", handler=hc.Bytes(accept_status=[])).raise_for_status()


# -- One default, stated in the library

def test_map_and_amap_default_to_the_librarys_concurrency():
    assert hc.default_concurrency() == 64
    for method in (hc.Client.map, hc.Client.amap):
        assert inspect.signature(method).parameters["concurrency"].default is None


def test_query_and_form_arrays_default_to_the_librarys_encoding(client, base_url):
    expected = hc.form_encode({"a": [1, 2]})
    assert expected == "a%5B%5D=1&a%5B%5D=2"
    echo = client.get(f"{base_url}/echo", params={"a": [1, 2]}).json()
    assert echo["query"] == expected
    echo = client.post(f"{base_url}/echo", data={"a": [1, 2]}).json()
    assert bytes.fromhex(echo["body_hex"]).decode() == expected


# -- iter_json_lines: the Content-Type picks the framing

def test_iter_json_lines_reads_json_seq_when_the_response_says_so(client, base_url):
    body = '\x1e{"a": 1}\n\x1e{"a": 2}\n'
    url = f"{base_url}/ctype?type=application/json-seq&body={_q(body)}"
    assert list(client.iter_json_lines(url)) == [{"a": 1}, {"a": 2}]
    with pytest.raises(hc.DecodeError):
        list(client.iter_json_lines(url, framing="lines"))
    lines = f"{base_url}/ndjson?n=2"
    assert list(client.iter_json_lines(lines)) == [{"i": 0}, {"i": 1}]
    assert list(client.iter_json_lines(lines, framing="concatenated")) == [{"i": 0}, {"i": 1}]


# -- A redirect not followed is the answer

def test_a_redirect_not_followed_is_returned_with_its_location(client, base_url):
    r = client.get(f"{base_url}/redirect/1", follow_redirects=False)
    assert (r.status, r.headers["Location"], r.content, r.ok) == (302, "/redirect/0", b"", True)
    r = client.get(f"{base_url}/redirect/1", handler=hc.JSON(), follow_redirects=False)
    assert (r.status, r.content) == (302, None)
    with pytest.raises(hc.UnacceptableStatus):   # codes of one's own still decide
        client.get(f"{base_url}/redirect/1", handler=hc.Bytes(accept_status=[200]), follow_redirects=False)
    assert client.get(f"{base_url}/redirect/1").content == b"done"


# -- Errors are also the built-in exceptions except clauses expect

def test_errors_are_also_the_builtin_exceptions(client, base_url):
    assert issubclass(hc.DecodeError, ValueError) and issubclass(hc.Timeout, TimeoutError)
    with pytest.raises(ValueError):
        client.get(f"{base_url}/json?doc=%7B", handler=hc.JSON())
    with pytest.raises(TimeoutError):
        client.get(f"{base_url}/slow?bytes=10&delay=1", timeout=0.2)
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with pytest.raises(ConnectionError) as refused:
        client.get(f"http://127.0.0.1:{port}/")
    assert isinstance(refused.value, hc.TransportError) and type(refused.value) is hc.ConnectError
    with pytest.raises(ConnectionError):
        client.get(f"{base_url}/reset?bytes=1000", handler=hc.Discard())


# -- Link header and resumed progress

def test_links_are_keyed_by_rel_as_requests_reads_them(client, base_url):
    first = '<https://api.example/items?page=2>; rel="next", <https://api.example/items?page=9>; rel=last'
    second = '<https://api.example/about>; title="a, b; c"; type=text/html'
    r = client.get(f"{base_url}/ctype?link={_q(first)}&link={_q(second)}")
    assert r.links == {
        "next": {"url": "https://api.example/items?page=2", "rel": "next"},
        "last": {"url": "https://api.example/items?page=9", "rel": "last"},
        "https://api.example/about": {"url": "https://api.example/about", "title": "a, b; c", "type": "text/html"},
    }
    assert client.get(f"{base_url}/ctype").links == {}


def test_progress_of_a_resumed_download_counts_the_part_already_on_disk(client, base_url, tmp_path):
    handler = hc.File(tmp_path / "big.bin", resume=True)
    with pytest.raises(hc.TransportError):
        client.get(f"{base_url}/range/100000?reset_after=40000", handler=handler)
    part = (tmp_path / "big.bin.part").stat().st_size
    seen = []
    r = client.get(f"{base_url}/range/100000", handler=handler, progress=seen.append)
    assert r.content.resumed and 0 < part < 100000
    assert seen[0]["received"] == part
    assert all(p["expected"] in (0, 100000) for p in seen) and seen[-1]["expected"] == 100000
    assert seen[-1]["received"] == 100000


# -- iter_json with multiple values reads NDJSON

def test_iter_json_with_multiple_values_accepts_ndjson(client, base_url):
    assert list(client.iter_json(f"{base_url}/ndjson?n=3", "", multiple_values=True)) == [{"i": 0}, {"i": 1}, {"i": 2}]
