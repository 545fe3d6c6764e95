"""Responses and requests as requests/httpx users expect them: `r.ok`, `r.elapsed`, `r.history`,
`r.raise_for_status()`, `r.text`/`r.json()` of a Bytes body, `params=` lists, `data=dict`,
`files=`, and errors that carry the URL, method and redirect history. httpbin (started locally
from the package index) is the oracle where it has a route for the question."""

import datetime
import json
from urllib.parse import urljoin

import pytest

import httpcontent as hc

ANY_STATUS = [(100, 599)]


# ---------------------------------------------------------------- history

def test_history_lists_each_redirect_oldest_first_as_httpbin_sends_them(client, httpbin_url):
    start = f"{httpbin_url}/redirect/3"
    r = client.get(start)
    assert r.status == 200
    assert [h.status for h in r.history] == [302, 302, 302]
    assert r.history[0].url == start
    # Each entry's URL is where the one before it pointed (its Location), and the final
    # response's URL is where the last one pointed.
    for before, after in zip(r.history, r.history[1:]):
        assert after.url == urljoin(before.url, before.headers["location"])
    assert r.url == urljoin(r.history[-1].url, r.history[-1].headers["location"])
    assert json.loads(r.content)["url"].endswith("/get")


def test_history_entries_carry_each_redirects_own_headers(client, base_url):
    r = client.get(f"{base_url}/redirect/2")
    assert [(h.status, h.url) for h in r.history] == [
        (302, f"{base_url}/redirect/2"), (302, f"{base_url}/redirect/1")]
    assert [h.headers["location"] for h in r.history] == ["/redirect/1", "/redirect/0"]
    assert r.content == b"done"
    assert isinstance(r.history[0], hc.HistoryEntry)


def test_history_is_empty_without_a_redirect(client, base_url):
    assert client.get(f"{base_url}/redirect/0").history == []
    # A redirect not followed is the response itself, not history.
    r = client.get(f"{base_url}/redirect/1", follow_redirects=False,
                   handler=hc.Bytes(accept_status=ANY_STATUS))
    assert r.status == 302 and r.history == []


def test_history_survives_the_send_path_with_a_native_request(client, base_url):
    # headers= takes hc_client_send instead of hc_client_fetch.
    r = client.get(f"{base_url}/redirect/2", headers={"X-Any": "1"})
    assert [h.status for h in r.history] == [302, 302]


def test_error_after_redirects_carries_url_method_and_history(client, base_url):
    with pytest.raises(hc.UnacceptableStatus) as info:
        client.get(f"{base_url}/redirect-to?url=/status/404&status=307")
    e = info.value
    assert e.status == 404
    assert e.url == f"{base_url}/status/404"
    assert e.method == "GET"
    assert [(h.status, h.url) for h in e.history] == [(307, f"{base_url}/redirect-to?url=/status/404&status=307")]
    assert e.history[0].headers["location"] == "/status/404"
    assert e.attempts == 1


def test_too_many_redirects_keeps_the_redirects_before_the_last(base_url):
    with hc.Client(max_redirects=2) as client:
        with pytest.raises(hc.TooManyRedirects) as info:
            client.get(f"{base_url}/redirect-loop")
    assert [h.status for h in info.value.history] == [302, 302]
    assert info.value.method == "GET"


def test_error_without_a_response_has_no_history(client):
    with pytest.raises(hc.TransportError) as info:
        client.get("http://127.0.0.1:1/")
    assert info.value.history == [] and info.value.url == "http://127.0.0.1:1/"


def test_async_and_batch_responses_have_history_too(client, base_url):
    import asyncio
    [r] = client.map([hc.Request("GET", f"{base_url}/redirect/2")])
    assert [h.status for h in r.history] == [302, 302]

    async def main():
        return await client.arequest("GET", f"{base_url}/redirect/1")
    assert [h.url for h in asyncio.run(main()).history] == [f"{base_url}/redirect/1"]


# ---------------------------------------------------------------- ok, elapsed, raise_for_status

def test_ok_and_raise_for_status_follow_requests(client, httpbin_url):
    any_status = hc.Bytes(accept_status=ANY_STATUS)
    good = client.get(f"{httpbin_url}/status/201", handler=any_status)
    assert good.ok and good.raise_for_status() is None
    moved = client.get(f"{httpbin_url}/status/304", handler=any_status)
    assert moved.ok  # requests: below 400 is ok
    for status in (404, 503):
        r = client.get(f"{httpbin_url}/status/{status}", handler=any_status)
        assert not r.ok
        with pytest.raises(hc.UnacceptableStatus) as info:
            r.raise_for_status()
        assert info.value.status == status and info.value.url == r.url and info.value.method == "GET"
        with pytest.raises(hc.UnacceptableStatus) as refused:   # what a refusing handler raises
            client.get(f"{httpbin_url}/status/{status}")
        assert str(info.value) == str(refused.value) and str(info.value).startswith(f"HTTP {status}")


def test_elapsed_is_the_transfer_time(client, httpbin_url):
    r = client.get(f"{httpbin_url}/delay/0.2")
    assert isinstance(r.elapsed, datetime.timedelta)
    assert r.elapsed.total_seconds() == pytest.approx(r.metrics["total_seconds"])
    assert 0.2 <= r.elapsed.total_seconds() < 10


# ---------------------------------------------------------------- text and json of a Bytes body

def test_json_and_text_of_a_bytes_response(client, httpbin_url):
    r = client.get(f"{httpbin_url}/json")
    assert isinstance(r.content, bytes)
    assert r.json() == json.loads(r.content)
    assert r.text == r.content.decode("utf-8")
    utf8 = client.get(f"{httpbin_url}/encoding/utf8")
    assert utf8.charset == "utf-8" and utf8.text == utf8.content.decode("utf-8")
    assert "∮ E⋅da = Q" in utf8.text


def test_text_uses_the_declared_charset(client, base_url):
    r = client.get(f"{base_url}/text", params={"charset": "iso-8859-1", "text": "héllo"})
    assert r.charset == "iso-8859-1" and r.content == "héllo".encode("iso-8859-1")
    assert r.text == "héllo"


def test_json_of_a_handler_that_made_something_else_says_so(client, httpbin_url):
    r = client.get(f"{httpbin_url}/json", handler=hc.JSON())
    with pytest.raises(TypeError, match="Bytes or Text"):
        r.json()
    text = client.get(f"{httpbin_url}/json", handler=hc.Text())
    assert text.json() == r.content and text.text == text.content


# ---------------------------------------------------------------- params, data, files

def test_params_lists_follow_the_librarys_array_encoding_by_default(client, httpbin_url, base_url):
    r = client.get(f"{httpbin_url}/get", params={"a": [1, 2], "b": "x y"})
    assert r.json()["args"] == {"a[]": ["1", "2"], "b": "x y"}
    echo = client.get(f"{base_url}/echo", params={"a": [1, 2], "b": "x y"}).json()
    assert echo["query"] == "a%5B%5D=1&a%5B%5D=2&b=x%20y" == hc.form_encode({"a": [1, 2], "b": "x y"})
    r = client.get(f"{httpbin_url}/get", params={"a": [1, 2]}, arrays="repeat")   # requests' way
    assert r.json()["args"] == {"a": ["1", "2"]}


def test_params_brackets_per_request(client, httpbin_url, base_url):
    r = client.get(f"{httpbin_url}/get", params={"a": [1, 2]}, arrays="brackets")
    assert r.json()["args"] == {"a[]": ["1", "2"]}
    echo = client.get(f"{base_url}/echo", params={"a": [1, 2]}, arrays="indexed").json()
    assert echo["query"] == "a%5B0%5D=1&a%5B1%5D=2"
    with pytest.raises(ValueError):
        client.get(f"{base_url}/echo", params={"a": [1]}, arrays="commas")


def test_data_dict_sends_a_percent_20_form(client, httpbin_url, base_url):
    r = client.post(f"{httpbin_url}/post", data={"name": "a b&c", "n": [1, 2]}, arrays="repeat")
    assert r.json()["form"] == {"name": "a b&c", "n": ["1", "2"]}
    assert r.json()["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    echo = client.post(f"{base_url}/echo", data=[("k", "x y"), ("k", "z")]).json()
    assert bytes.fromhex(echo["body_hex"]) == b"k=x%20y&k=z"


def test_data_bytes_and_chunks_are_still_raw_bodies(client, base_url):
    echo = client.post(f"{base_url}/echo", data=[b"ab", b"cd"]).json()
    assert bytes.fromhex(echo["body_hex"]) == b"abcd"


def test_files_in_requests_shapes_against_httpbin(client, httpbin_url, tmp_path):
    path = tmp_path / "report.csv"
    path.write_bytes(b"a,b\n1,2\n")
    with open(path, "rb") as f:
        r = client.post(f"{httpbin_url}/post", data={"title": "t 1"},
                        files={"upload": f, "note": ("note.txt", b"hello", "text/plain"),
                               "raw": ("raw.txt", "plain ü")})
    got = r.json()
    assert got["form"] == {"title": "t 1"}
    assert got["files"] == {"upload": "a,b\n1,2\n", "note": "hello",
                            "raw": "plain ü"}
    assert got["headers"]["Content-Type"].startswith("multipart/form-data; boundary=")


def test_files_names_parts_as_requests_does(client, base_url, tmp_path):
    path = tmp_path / "pic.png"
    path.write_bytes(b"\x89PNG")
    with open(path, "rb") as f:
        f.read(1)  # not at its start: its remaining bytes are sent, read here
        echo = client.post(f"{base_url}/echo", files={"p": f, "q": ("q.txt", b"x", "text/plain")}).json()
    body = bytes.fromhex(echo["body_hex"])
    assert b'name="p"; filename="pic.png"' in body and b"PNG" in body and b"\x89PNG" not in body
    assert b'name="q"; filename="q.txt"\r\nContent-Type: text/plain' in body


def test_files_refuses_shapes_it_cannot_read(client, base_url):
    with pytest.raises(hc.InvalidArgument):
        client.post(f"{base_url}/echo", files={"f": ("a", b"x", "t", {"X": "1"}, 5)})
    with pytest.raises(hc.InvalidArgument):
        client.post(f"{base_url}/echo", files={"f": 12})
    with pytest.raises(hc.InvalidArgument):
        client.post(f"{base_url}/echo", files={"f": b"x"}, json={"a": 1})
