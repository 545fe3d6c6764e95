"""The transport from Python: the real libhttpcontent.so through ctypes, against a real server."""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import httpcontent as hc


def expected_bytes(n):
    return bytes(i % 251 for i in range(n))


def test_get_returns_exact_bytes_status_and_headers(client, base_url):
    r = client.get(f"{base_url}/bytes/100000")
    assert r.status == 200
    assert r.content == expected_bytes(100000)
    assert r.headers["CONTENT-LENGTH"] == "100000"
    assert r.headers.get("x-missing") is None
    assert r.media_type == "application/octet-stream"
    assert r.url.endswith("/bytes/100000")
    assert r.metrics["decoded_bytes"] == 100000


def test_chunked_and_gzip_bodies_are_decoded(client, base_url):
    assert client.get(f"{base_url}/bytes/30000?chunked=1&chunk=999").content == expected_bytes(30000)
    r = client.get(f"{base_url}/gzip/40000")
    assert r.headers["content-encoding"] == "gzip"
    assert r.content == expected_bytes(40000)
    assert r.metrics["wire_bytes"] < r.metrics["decoded_bytes"] == 40000


def test_headers_are_multi_valued_and_ordered(client, base_url):
    r = client.get(f"{base_url}/cookie?set=a=1")
    assert r.headers.get_all("set-cookie") == ["a=1; Path=/"]
    names = [name.lower() for name, _ in r.headers.items()]
    assert "content-type" in names


def test_rejected_status_raises_with_status_headers_body_and_server_message(client, base_url):
    with pytest.raises(hc.UnacceptableStatus) as info:
        client.get(f"{base_url}/status/401?json=1")
    err = info.value
    assert err.code == 5 and err.status == 401
    assert err.headers["content-type"] == "application/json"
    assert b"You are not authorized" in err.body
    assert "401" in str(err)


def test_accept_status_makes_a_code_acceptable(client, base_url):
    r = client.get(f"{base_url}/status/404", handler=hc.Bytes(accept_status=[404, (200, 299)]))
    assert r.status == 404 and r.content == b"status 404"
    r = client.get(f"{base_url}/status/503", handler=hc.Bytes(accept_status=[]))
    assert r.status == 503
    with pytest.raises(hc.UnacceptableStatus):
        client.get(f"{base_url}/status/200", handler=hc.Bytes(accept_status=["400-499"]))


def test_accept_types_with_wildcards_and_suffixes(client, base_url):
    h = hc.Bytes(accept_types=["*/*+json", "image/*"])
    assert client.get(f"{base_url}/ctype?type=application/problem%2Bjson&body=x", handler=h).content == b"x"
    assert client.get(f"{base_url}/ctype?type=image/png&body=x", handler=h).status == 200
    with pytest.raises(hc.UnacceptableContentType):
        client.get(f"{base_url}/ctype?type=text/html&body=x", handler=h)
    with pytest.raises(hc.UnacceptableContentType):
        client.get(f"{base_url}/ctype?none=1&body=x", handler=h)


def test_discard_keeps_nothing(client, base_url):
    r = client.get(f"{base_url}/bytes/5000", handler=hc.Discard())
    assert r.content is None and r.status == 200


def test_max_size_counts_decoded_bytes_so_a_gzip_bomb_stops(client, base_url):
    with pytest.raises(hc.TooLarge):
        client.get(f"{base_url}/gzip-bomb/20000000", handler=hc.Bytes(max_size=1_000_000))
    assert len(client.get(f"{base_url}/bytes/1000", handler=hc.Bytes(max_size=1000)).content) == 1000


def test_truncated_body_is_a_transport_error_not_a_short_result(client, base_url):
    with pytest.raises(hc.TransportError) as info:
        client.get(f"{base_url}/truncated?bytes=100&declared=1000")
    assert info.value.curl_code == 18
    assert type(info.value) is hc.TransportError


def test_timeout_and_redirect_errors(client, base_url):
    start = time.monotonic()
    with pytest.raises(hc.Timeout):
        client.get(f"{base_url}/stall?bytes=10", timeout=0.3)
    assert time.monotonic() - start < 15  # the stall lasts 60 s
    assert client.get(f"{base_url}/redirect/3").url.endswith("/redirect/0")
    with pytest.raises(hc.TooManyRedirects):
        client.get(f"{base_url}/redirect-loop")
    with pytest.raises(hc.TransportError):
        client.get(f"{base_url}/redirect-to?url=file:///etc/passwd")
    r = client.get(f"{base_url}/redirect/1", follow_redirects=False, handler=hc.Bytes(accept_status=[302]))
    assert r.status == 302


def test_low_speed_limit_aborts_a_drip_feed(base_url):
    with hc.Client(low_speed=(1000, 1)) as c:
        with pytest.raises(hc.Timeout):
            c.get(f"{base_url}/slow?bytes=100&delay=0.2")


def test_connection_refused_is_a_transport_error(client):
    with pytest.raises(hc.TransportError):
        client.get("http://127.0.0.1:1/")


def test_header_injection_is_refused_before_sending(client, base_url):
    with pytest.raises(hc.InvalidArgument):
        client.get(f"{base_url}/headers", headers={"X-Evil": "a\r\nInjected: yes"})
    with pytest.raises(ValueError):
        client.get(f"{base_url}/headers", headers={"Bad Name": "x"})
    with pytest.raises(hc.InvalidArgument):
        hc.Client(user_agent="x\ny")


def test_invalid_url_is_invalid_argument(client):
    with pytest.raises(hc.InvalidArgument):
        client.get("http://x/a b")


def test_post_bytes_round_trip(client, base_url):
    body = bytes(range(256)) * 10
    r = client.post(f"{base_url}/echo/raw", data=body, content_type="application/x-test")
    assert r.content == body
    assert r.headers["x-request-content-type"] == "application/x-test"


def test_default_and_custom_user_agent(base_url):
    with hc.Client() as c:
        assert c.get(f"{base_url}/user-agent").content.startswith(b"httpcontent/")
    with hc.Client(user_agent="me/1") as c:
        assert c.get(f"{base_url}/user-agent").content == b"me/1"
        assert c.get(f"{base_url}/user-agent", headers={"User-Agent": "you/2"}).content == b"you/2"


def test_progress_reports_and_can_cancel(client, base_url):
    seen = []
    client.get(f"{base_url}/bytes/200000", progress=seen.append)
    assert seen and seen[-1]["decoded"] == 200000
    with pytest.raises(hc.Cancelled):
        client.get(f"{base_url}/slow?bytes=100&delay=0.05", progress=lambda p: p["received"] > 0)


def test_exception_in_progress_callback_surfaces(client, base_url):
    class Boom(Exception):
        pass

    def explode(_):
        raise Boom("from the callback")

    with pytest.raises(Boom):
        client.get(f"{base_url}/bytes/100000", progress=explode)


def test_cancel_token_from_another_thread(client, base_url):
    token = hc.CancelToken()
    threading.Timer(0.3, token.cancel).start()
    start = time.monotonic()
    with pytest.raises(hc.Cancelled):
        client.get(f"{base_url}/slow?bytes=1000&delay=0.1", cancel=token)
    assert time.monotonic() - start < 20  # uncancelled: 100 s
    assert token.cancelled
    token.close()


def test_other_threads_run_while_a_request_blocks(client, base_url):
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set() and len(ticks) < 1000:
            ticks.append(1)
            time.sleep(0.01)

    t = threading.Thread(target=tick)
    t.start()
    client.get(f"{base_url}/slow?bytes=5&delay=0.1")
    stop.set()
    t.join()
    assert len(ticks) >= 10  # the GIL was released during the transfer


def test_handles_close_idempotently_and_refuse_use_after_close(base_url):
    c = hc.Client()
    c.close()
    c.close()
    with pytest.raises(ValueError):
        c.get(f"{base_url}/bytes/1")
    token = hc.CancelToken()
    token.close()
    token.close()


def test_one_handler_serves_many_requests(client, base_url):
    h = hc.Bytes()
    assert [len(client.get(f"{base_url}/bytes/{n}", handler=h).content) for n in (1, 10, 100)] == [1, 10, 100]


def test_threads_sharing_a_client_and_handler_each_get_their_own_response(client, base_url):
    # The fetch path reuses its result structs: no two calls in flight may share one.
    from concurrent.futures import ThreadPoolExecutor
    h = hc.Bytes()

    def fetch(n):
        r = client.get(f"{base_url}/slow?bytes={n}&chunk=64&delay=0.005", handler=h)
        return r.content == expected_bytes(n) and r.url.endswith(f"bytes={n}&chunk=64&delay=0.005")

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(fetch, [1 + i % 50 for i in range(200)]))


def test_requests_without_a_handler_share_one_bytes_per_client(base_url):
    # A native handler made per request would cost more than the request; the client makes
    # one Bytes for all its requests that name no handler, and frees it when closed.
    import gc
    gc.collect()
    before = hc.live_handles()
    c = hc.Client()
    bodies = [c.get(f"{base_url}/bytes/{n}").content for n in (3, 30, 300)]
    bodies.append(c.request("GET", f"{base_url}/bytes/5", headers={"X-A": "1"}).content)
    bodies += [r.content for r in c.map([hc.Request("GET", f"{base_url}/bytes/{n}") for n in (7, 70)])]
    assert bodies == [expected_bytes(n) for n in (3, 30, 300, 5, 7, 70)]
    gc.collect()
    assert hc.live_handles() == before + 3  # the client, its one Bytes, the batch map keeps
    c.close()
    assert hc.live_handles() == before


def test_a_bytes_subclass_converts_on_the_fetch_path(client, base_url):
    class Length(hc.Bytes):
        def convert(self, data):
            return len(data)
    r = client.get(f"{base_url}/bytes/123", handler=Length())
    assert r.content == 123 and r.status == 200
    assert client.get(f"{base_url}/bytes/1", handler=hc.Bytes()).content == expected_bytes(1)


def test_proxy_variables_are_read_when_a_client_is_made(base_url):
    # In a process of its own, with no proxy variable but the one it sets: the environment is
    # the process's. A client made before http_proxy is set connects directly (it told libcurl
    # there is no proxy); one made after sends its request through the proxy, here the test
    # server itself, which then sees the absolute-form target a proxy gets.
    code = ("import json, os, sys, httpcontent as hc\n"
            "url = sys.argv[1] + '/echo'\n"
            "before = hc.Client()\n"
            "os.environ['http_proxy'] = sys.argv[1]\n"
            "after = hc.Client()\n"
            "print(json.dumps([c.get(url, handler=hc.JSON()).content['target'] for c in (before, after)]))\n")
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["PYTHONPATH"] = str(Path(hc.__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, "-c", code, base_url], env=env, capture_output=True,
                         text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == ["/echo", f"{base_url}/echo"]


def test_error_codes_match_the_c_header():
    assert [cls.code for cls in (hc.InvalidArgument, hc.TransportError, hc.Timeout,
            hc.TooManyRedirects, hc.UnacceptableStatus, hc.UnacceptableContentType,
            hc.DecodeError, hc.TooLarge, hc.Cancelled, hc.LocalIOError, hc.CallbackError)] == list(range(1, 12))
    assert issubclass(hc.Timeout, hc.TransportError) and issubclass(hc.TooManyRedirects, hc.TransportError)
    assert hc.library_version() == hc.__version__


def test_large_bodies_are_filled_in_place_and_released(client, base_url):
    import gc
    from httpcontent.handlers import _lent  # the bytes objects the library is filling or holds
    gc.collect()
    before = len(_lent)
    h = hc.Bytes()
    r = client.get(f"{base_url}/bytes/1000000", handler=h)
    body = r.content
    assert body == expected_bytes(1000000)
    assert len(_lent) == before + 1 and any(b is body for b in _lent.values())  # lent, not copied
    r.close()
    assert len(_lent) == before  # the library released the memory it was lent
    assert body == expected_bytes(1000000)  # and the bytes are Python's to keep
    # Bodies without a declared length, or compressed ones, take the copying path.
    assert client.get(f"{base_url}/bytes/200000?chunked=1", handler=h).content == expected_bytes(200000)
    assert client.get(f"{base_url}/gzip/300000", handler=h).content == expected_bytes(300000)
    with pytest.raises(hc.TransportError):
        client.get(f"{base_url}/truncated?bytes=70000&declared=140000", handler=h)
    gc.collect()
    assert len(_lent) == before


def test_an_absurd_declared_length_fails_early_and_quietly(client, base_url, capfd):
    # A limit fails any declared length above it before the body, even one too large for
    # 64 bits (it failed later, as a truncated transfer).
    for declared in (10**14, 9 * 10**18, 10**20 - 1):
        with pytest.raises(hc.TooLarge):
            client.get(f"{base_url}/truncated?bytes=10&declared={declared}", handler=hc.Bytes(max_size=1000))
    # Without one, the binding declines to lend memory of the claimed size (it printed a
    # MemoryError from the ctypes callback) and the short body fails as truncated.
    with pytest.raises(hc.TransportError):
        client.get(f"{base_url}/truncated?bytes=10&declared={9 * 10**18}")
    assert "Exception ignored" not in capfd.readouterr().err


def test_a_response_outlives_its_handler_and_client(base_url):
    # The library releases lent memory when the response is freed, which may be after the
    # handler that lent it (and the client that owned that handler) are gone: no crash.
    import gc
    from httpcontent.handlers import _lent
    gc.collect()
    before = len(_lent)
    c = hc.Client()
    h = hc.Bytes()
    mine = c.get(f"{base_url}/bytes/1000000", handler=h)
    default = c.get(f"{base_url}/bytes/300000")  # the client's own Bytes
    del h
    c.close()
    gc.collect()
    assert mine.content == expected_bytes(1000000) and default.content == expected_bytes(300000)
    assert mine.headers["content-length"] == "1000000"
    del mine, default
    gc.collect()
    assert len(_lent) == before


def test_one_client_mixing_requests_carries_nothing_over(base_url):
    """Sequential requests on one client reuse one libcurl handle: what one request sets (method,
    body, headers, redirects, timeout, progress) must not leak into the next."""
    import json

    def echo(r):
        doc = json.loads(r.content)
        return doc["method"], {k.lower(): v for k, v in doc["headers"]}, doc["body_len"]

    any_status = hc.Bytes(accept_status=[])
    with hc.Client(timeout=20) as c:
        method, headers, n = echo(c.get(f"{base_url}/echo"))
        assert (method, n) == ("GET", 0) and headers["user-agent"].startswith("httpcontent/")
        assert c.head(f"{base_url}/bytes/100").content == b""
        assert echo(c.get(f"{base_url}/echo"))[0] == "GET"
        method, headers, n = echo(c.post(f"{base_url}/echo", data=b"abc", content_type="text/x-a"))
        assert (method, n, headers["content-type"]) == ("POST", 3, "text/x-a")
        method, headers, n = echo(c.get(f"{base_url}/echo"))
        assert (method, n) == ("GET", 0) and "content-type" not in headers and "expect" not in headers
        assert echo(c.delete(f"{base_url}/echo"))[0] == "DELETE"
        assert echo(c.get(f"{base_url}/echo"))[0] == "GET"
        assert echo(c.get(f"{base_url}/echo", headers={"X-A": "1"}))[1]["x-a"] == "1"
        assert "x-a" not in echo(c.get(f"{base_url}/echo"))[1]
        assert echo(c.get(f"{base_url}/echo", headers={"User-Agent": "me"}))[1]["user-agent"] == "me"
        assert echo(c.get(f"{base_url}/echo"))[1]["user-agent"].startswith("httpcontent/")
        assert c.get(f"{base_url}/redirect/1", handler=any_status, follow_redirects=False).status == 302
        r = c.get(f"{base_url}/redirect/1", handler=any_status)
        assert (r.status, r.content) == (200, b"done")
        assert r.url.endswith("/redirect/0")
        with pytest.raises(hc.Timeout):
            c.get(f"{base_url}/slow?bytes=4&delay=0.3", timeout=0.1)
        assert c.get(f"{base_url}/slow?bytes=3&delay=0.2").content == expected_bytes(3)
        seen = []
        c.get(f"{base_url}/bytes/10", progress=lambda p: seen.append(p) and None)
        assert seen
        assert c.get(f"{base_url}/bytes/10").content == expected_bytes(10)
        token = hc.CancelToken()
        token.cancel()
        with pytest.raises(hc.Cancelled):
            c.get(f"{base_url}/bytes/10", cancel=token)
        assert c.get(f"{base_url}/bytes/10").content == expected_bytes(10)


def test_fetch_path_reports_errors_like_the_full_path(client, base_url):
    with pytest.raises(hc.UnacceptableStatus) as info:
        client.get(f"{base_url}/status/404")
    assert info.value.status == 404
    with pytest.raises(hc.InvalidArgument):
        client.get(f"{base_url}/a b")
    with pytest.raises(hc.InvalidArgument):
        client.get(f"{base_url}/a\x00b")
    with pytest.raises(ValueError):
        client.get(f"{base_url}/bytes/1", timeout=-1)
    r = client.get(f"{base_url}/bytes/5", handler=hc.Discard())
    assert (r.status, r.content) == (200, None)
    assert client.get(f"{base_url}/text", handler=hc.Text()).content is not None
