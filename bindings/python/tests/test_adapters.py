"""requests and httpx with httpcontent underneath (issue 30): the peers' own API, their own
exceptions, bodies streamed as they read them, against the local test server."""

import asyncio
import base64
import json
import time

import pytest

import httpcontent as hc
from httpcontent.adapters import HTTPXTransport, RequestsAdapter

requests = pytest.importorskip("requests")
httpx = pytest.importorskip("httpx")


@pytest.fixture
def session():
    s = requests.Session()
    adapter = RequestsAdapter()
    s.mount("http://", adapter)
    s.mount("https://", adapter)
    yield s
    s.close()


def _drip(base_url, body: bytes, at: int, hold: float) -> str:
    return (f"{base_url}/records/drip?b64={base64.urlsafe_b64encode(body).decode()}&at={at}"
            f"&hold={hold}&ctype=text/plain")


def test_requests_get_post_and_statuses(session, base_url):
    r = session.get(base_url + "/bytes/1000")
    assert r.status_code == 200 and r.content == bytes(i % 251 for i in range(1000))
    assert r.headers["content-length"] == "1000" and r.reason == "OK" and r.ok
    assert isinstance(r.connection, requests.adapters.BaseAdapter)
    r = session.post(base_url + "/echo", data={"name": "Lucas Drance"}, params={"q": "a b"})
    echoed = r.json()
    assert echoed["method"] == "POST" and bytes.fromhex(echoed["body_hex"]) == b"name=Lucas+Drance"
    assert echoed["query"] == "q=a+b"
    r = session.post(base_url + "/echo", json={"k": [1, 2]})
    assert json.loads(bytes.fromhex(r.json()["body_hex"])) == {"k": [1, 2]}
    r = session.get(base_url + "/status/404")
    assert r.status_code == 404 and r.reason == "Not Found"
    with pytest.raises(requests.HTTPError):
        r.raise_for_status()


def test_requests_keeps_redirects_cookies_and_gzip_for_itself(session, base_url):
    r = session.get(base_url + "/redirect/2")
    assert r.status_code == 200 and r.text == "done" and len(r.history) == 2
    assert session.get(base_url + "/redirect/2", allow_redirects=False).status_code == 302
    session.get(base_url + "/cookie?set=flavour=oat")
    assert session.cookies.get("flavour") == "oat"
    assert session.get(base_url + "/cookie").json()["cookie"] == "flavour=oat"
    r = session.get(base_url + "/gzip/5000")
    assert r.content == bytes(i % 251 for i in range(5000)) and r.headers["content-encoding"] == "gzip"


def test_requests_stream_reads_the_body_as_it_arrives(session, base_url):
    with session.get(_drip(base_url, b"first\nsecond\n", 6, 3.0), stream=True) as r:
        start = time.monotonic()
        first = next(r.iter_lines(chunk_size=1))   # 512 (the default) waits for 512 bytes, as with urllib3
        assert first == b"first" and time.monotonic() - start < 1.5
    chunked_upload = session.post(base_url + "/echo/raw", data=iter([b"a" * 10, b"b" * 5]))
    assert chunked_upload.content == b"a" * 10 + b"b" * 5


def test_requests_exceptions_are_requests_own(session, base_url):
    with pytest.raises(requests.exceptions.ConnectionError):
        session.get("http://127.0.0.1:1/")
    with pytest.raises(requests.exceptions.ReadTimeout):
        session.get(base_url + "/stall?bytes=10", timeout=(5, 0.3))
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        session.get(base_url + "/truncated?bytes=100&declared=1000").content
    assert issubclass(requests.exceptions.ReadTimeout, requests.exceptions.Timeout)


def test_httpx_client_with_the_transport(base_url):
    with httpx.Client(transport=HTTPXTransport()) as c:
        r = c.get(base_url + "/bytes/1000")
        assert r.status_code == 200 and r.content == bytes(i % 251 for i in range(1000))
        assert r.http_version == "HTTP/1.1" and r.reason_phrase == "OK"
        r = c.post(base_url + "/echo", json={"a": 1})
        assert json.loads(bytes.fromhex(r.json()["body_hex"])) == {"a": 1}
        r = c.get(base_url + "/gzip/5000")   # httpx decodes it itself
        assert r.content == bytes(i % 251 for i in range(5000))
        assert c.get(base_url + "/redirect/1", follow_redirects=True).text == "done"
        assert c.get(base_url + "/status/418").status_code == 418
        with c.stream("GET", _drip(base_url, b"first\nsecond\n", 6, 3.0)) as r:
            start = time.monotonic()
            assert next(r.iter_lines()) == "first" and time.monotonic() - start < 1.5
        with pytest.raises(httpx.ConnectError):
            c.get("http://127.0.0.1:1/")
        with pytest.raises(httpx.ReadTimeout):
            c.get(base_url + "/stall?bytes=10", timeout=httpx.Timeout(5, read=0.3))
    with pytest.raises(ValueError, match="uds"):
        HTTPXTransport(uds="/tmp/x.sock")


def test_stream_gives_the_head_first(base_url):
    with hc.Client() as c:
        with c.stream("GET", _drip(base_url, b"abc\ndef\n", 4, 3.0)) as r:
            assert r.status == 200 and r.reason == "OK" and r.http_version == "HTTP/1.1"
            start = time.monotonic()
            chunks = r.iter_bytes()
            assert next(chunks) == b"abc\n" and time.monotonic() - start < 1.5
        with c.stream("GET", base_url + "/status/404") as r:
            assert r.status == 404 and r.read() == b"status 404"
            assert r.response is not None and r.response.status == 404
        with c.stream("GET", base_url + "/bytes/100000") as r:
            assert sum(len(x) for x in r.iter_bytes(chunk_size=1000)) == 100000


def test_async_httpx_client_with_the_transport(base_url):
    from httpcontent.adapters import AsyncHTTPXTransport

    async def main() -> None:
        async with httpx.AsyncClient(transport=AsyncHTTPXTransport()) as c:
            r = await c.get(base_url + "/bytes/1000")
            assert r.status_code == 200 and r.content == bytes(i % 251 for i in range(1000))
            r = await c.post(base_url + "/echo", json={"a": 1})
            assert json.loads(bytes.fromhex(r.json()["body_hex"])) == {"a": 1}
            assert (await c.get(base_url + "/gzip/5000")).content == bytes(i % 251 for i in range(5000))
            async with c.stream("GET", _drip(base_url, b"first\nsecond\n", 6, 3.0)) as r:
                start = time.monotonic()
                lines = r.aiter_lines()
                assert await lines.__anext__() == "first" and time.monotonic() - start < 1.5
            with pytest.raises(httpx.ConnectError):
                await c.get("http://127.0.0.1:1/")
            with pytest.raises(httpx.ReadTimeout):
                await c.get(base_url + "/stall?bytes=10", timeout=httpx.Timeout(5, read=0.3))
            results = await asyncio.gather(*[c.get(base_url + f"/bytes/{n}") for n in range(1, 40)])
            assert [len(r.content) for r in results] == list(range(1, 40))
    asyncio.run(main())


def test_async_httpx_transport_under_trio(base_url):
    trio = pytest.importorskip("trio")
    from httpcontent.adapters import AsyncHTTPXTransport

    async def main() -> None:
        async with httpx.AsyncClient(transport=AsyncHTTPXTransport()) as c:
            r = await c.get(base_url + "/bytes/3000")
            assert r.content == bytes(i % 251 for i in range(3000))
    trio.run(main)


def test_an_unfollowed_redirect_keeps_its_body_for_a_handler_that_takes_3xx(session, base_url):
    r = session.get(base_url + "/redirect/1", allow_redirects=False)
    assert r.status_code == 302 and r.headers["location"] == "/redirect/0"
    assert r.text == "redirecting to /redirect/0"   # as requests gives it
    with hc.Client(follow_redirects=False) as c:
        assert c.get(base_url + "/redirect/1").content == b""    # the default handler: no content


def test_requests_adapter_checks_as_requests_httpadapter_does(session, base_url):
    """Gaps requests' own suite showed (scripts/peer-suites.sh): its checks and errors, in its words."""
    import pickle
    with pytest.raises(requests.exceptions.InvalidProxyURL):
        session.get(base_url + "/bytes/10", proxies={"http": "http://:8080"})
    with pytest.raises(requests.exceptions.ProxyError):
        session.get(base_url + "/bytes/10", proxies={"http": "127.0.0.1:1"})   # scheme prepended
    with pytest.raises(OSError, match="invalid path: /garbage"):
        session.get("https://127.0.0.1:1/", verify="/garbage")
    with pytest.raises(ValueError, match="must be an int, float or None"):
        session.get(base_url + "/bytes/10", timeout="foo")
    with pytest.raises(requests.exceptions.ReadTimeout) as e:
        session.get(base_url + "/stall?bytes=10", timeout=(5, 0.3))
    assert "Read timed out" in e.value.args[0].args[0]
    again = pickle.loads(pickle.dumps(session))
    assert again.get(base_url + "/bytes/10").content == bytes(range(10))
    assert type(again.get_adapter(base_url)).__name__ == "RequestsAdapter"


def test_httpx_transport_head_ssl_context_and_trace(base_url):
    import ssl
    events = []
    with httpx.Client(transport=HTTPXTransport()) as c:
        r = c.head(base_url + "/bytes/1000", timeout=5)
        assert r.status_code == 200 and r.content == b""
        r = c.get(base_url + "/bytes/10", extensions={"trace": lambda name, info: events.append((name, info))})
        assert r.content == bytes(range(10))
        with pytest.raises(httpx.UnsupportedProtocol, match="unsupported protocol 'ftp://'"):
            c.get("ftp://127.0.0.1/")
    names = [name for name, _ in events]
    assert names[-1] == "http11.receive_response_headers.complete"
    version, status, reason, headers = events[-1][1]["return_value"]
    assert (version, status, reason) == (b"HTTP/1.1", 200, b"OK") and (b"Content-Length", b"10") in [
        (k.title(), v) for k, v in headers]
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    HTTPXTransport(verify=context).close()   # taken, as verify=False


def test_requests_session_headers_sent_exactly_on_each_path(session, base_url):
    # The session's usual GET goes as one library call with its headers as a client's defaults
    # (adapters._Clients.with_headers); one with more headers, one with fewer and one with a body
    # take the other paths. Each must send exactly the headers requests prepared.
    def sent(r):
        return {k.lower(): v for k, v in r.json()["headers"]}
    usual = sent(session.get(base_url + "/echo"))
    assert usual["user-agent"] == requests.utils.default_user_agent()
    assert usual["accept"] == "*/*" and usual["connection"] == "keep-alive"
    assert sent(session.get(base_url + "/echo")) == usual
    more = sent(session.get(base_url + "/echo", headers={"X-Extra": "1"}))
    assert more == dict(usual, **{"x-extra": "1"})
    fewer = sent(session.get(base_url + "/echo", headers={"Connection": None}))
    assert "connection" not in fewer and fewer["user-agent"] == usual["user-agent"]
    posted = session.post(base_url + "/echo", data=b"abc").json()
    assert posted["body_len"] == 3 and sent(session.get(base_url + "/echo")) == usual


def test_requests_session_keeps_one_connection_across_header_sets():
    # A digest-auth retry adds a header to the session's usual ones: it must go on the same
    # connection (requests' own low-level tests count connections), not a client of its own.
    import socket
    import threading
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(10)
    seen: list[bytes] = []
    accepted = []

    def serve():
        conn, _ = server.accept()
        accepted.append(conn)
        conn.settimeout(10)
        data = b""
        for _ in range(2):   # two requests on this one connection, then stop
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            head, data = data.split(b"\r\n\r\n", 1)
            seen.append(head)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        try:   # a third connection would be a second client's
            server.settimeout(0.3)
            accepted.append(server.accept()[0])
        except OSError:
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    s = requests.Session()
    s.mount("http://", RequestsAdapter())
    url = f"http://127.0.0.1:{server.getsockname()[1]}/"
    try:
        assert s.get(url).text == "ok"
        assert s.get(url, headers={"Authorization": "Digest x"}).text == "ok"
    finally:
        thread.join(15)
        s.close()
        for c in accepted:
            c.close()
        server.close()
    assert len(accepted) == 1 and len(seen) == 2
    assert b"Authorization: Digest x" in seen[1] and b"Authorization" not in seen[0]
