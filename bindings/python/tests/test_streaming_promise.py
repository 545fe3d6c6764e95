"""The streaming promise (issue 27): an item reaches the caller as soon as the bytes that
complete it have been read, however the batches for throughput are cut, on every streaming
path; a batch cut in the middle of an item carries that item on to the next batch, losing and
repeating nothing. The server is the test server's /records/drip (a body sent in parts with
holds between them) and /records/echo (a body in HTTP chunks of N bytes)."""

import asyncio
import base64
import json
import random
import time
import xml.etree.ElementTree as ET

import pytest

import httpcontent as hc

HOLD = 3.0      # the server's pause after the first part
PROMPT = 1.5    # an item completed in the first part must arrive well before the pause ends


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode()


def drip(base_url: str, first: bytes, rest: bytes, ctype: str, chunked: bool = False) -> str:
    body = first + rest
    return (f"{base_url}/records/drip?b64={_b64(body)}&at={len(first)}&hold={HOLD}"
            f"&ctype={ctype}" + ("&chunked=1" if chunked else ""))


def echo(base_url: str, body: bytes, chunk: int, ctype: str) -> str:
    return f"{base_url}/records/echo?b64={_b64(body)}&chunk={chunk}&ctype={ctype}"


JSON_FIRST, JSON_REST = b'{"items": [{"a": 1}, {"a": 2}, {"a"', b': 3}]}'
LINES_FIRST, LINES_REST = b'{"a": 1}\n{"a": 2}\n{"a"', b': 3}\n'
XML_FIRST, XML_REST = b"<feed><entry>1</entry><entry>2</entry><entry>3", b"</entry></feed>"

SYNC_CASES = {
    "iter_json": lambda c, u: c.iter_json(drip(u, JSON_FIRST, JSON_REST, "application/json"), "items.item"),
    "iter_json chunked": lambda c, u: c.iter_json(drip(u, JSON_FIRST, JSON_REST, "application/json", True),
                                                  "items.item"),
    "iter_json_lines": lambda c, u: c.iter_json_lines(drip(u, LINES_FIRST, LINES_REST, "application/x-ndjson")),
    "iter_lines": lambda c, u: c.iter_lines(drip(u, b"one\ntwo\nthr", b"ee\n", "text/plain")),
    "iter_xml": lambda c, u: c.iter_xml(drip(u, XML_FIRST, XML_REST, "application/xml"), "feed/entry"),
    "iter_events": lambda c, u: c.iter_events(drip(u, b"data: 1\n\ndata: 2\n\ndata:", b" 3\n\n",
                                                   "text/event-stream")),
}


@pytest.mark.parametrize("name", sorted(SYNC_CASES))
def test_sync_iterators_hand_over_items_before_the_rest_arrives(base_url, name):
    with hc.Client() as c:
        it = SYNC_CASES[name](c, base_url)
        start = time.monotonic()
        first_two = [next(it), next(it)]
        took = time.monotonic() - start
        assert took < PROMPT, f"{name}: the first two items took {took:.2f} s (the server held the rest {HOLD} s)"
        assert len(first_two) == 2
        closing = time.monotonic()
        it.close()
        assert time.monotonic() - closing < 1.0, f"{name}: leaving early took {time.monotonic() - closing:.2f} s"


@pytest.mark.parametrize("chunked", [False, True])
def test_handler_callbacks_are_called_before_the_rest_arrives(base_url, chunked):
    seen: dict[str, list[float]] = {"json": [], "lines": [], "xml": []}
    with hc.Client() as c:
        for kind, url, handler in [
            ("json", drip(base_url, JSON_FIRST, JSON_REST, "application/json", chunked),
             hc.JSONItems("items.item", lambda v: seen["json"].append(time.monotonic()))),
            ("lines", drip(base_url, LINES_FIRST, LINES_REST, "application/x-ndjson", chunked),
             hc.JSONLines(lambda v: seen["lines"].append(time.monotonic()))),
            ("xml", drip(base_url, XML_FIRST, XML_REST, "application/xml", chunked),
             hc.XMLElements("feed/entry", lambda e: seen["xml"].append(time.monotonic()))),
        ]:
            start = time.monotonic()
            c.get(url, handler=handler)
            times = [t - start for t in seen[kind]]
            assert len(times) == 3, kind
            assert times[1] < PROMPT, f"{kind}: the second item came after {times[1]:.2f} s"
            assert times[2] >= HOLD - 0.5, f"{kind}: the third item cannot come before the rest"


ASYNC_CASES = {
    "aiter_json": lambda c, u: c.aiter_json(drip(u, JSON_FIRST, JSON_REST, "application/json"), "items.item"),
    "aiter_events": lambda c, u: c.aiter_events(drip(u, b"data: 1\n\ndata: 2\n\ndata:", b" 3\n\n",
                                                     "text/event-stream")),
}


@pytest.mark.parametrize("name", sorted(ASYNC_CASES))
def test_async_iterators_hand_over_items_before_the_rest_arrives(base_url, name):
    async def main() -> None:
        with hc.Client() as c:
            agen = ASYNC_CASES[name](c, base_url)
            start = time.monotonic()
            got = [await asyncio.wait_for(agen.__anext__(), 10), await asyncio.wait_for(agen.__anext__(), 10)]
            assert len(got) == 2
            took = time.monotonic() - start
            assert took < PROMPT, f"{name}: the first two items took {took:.2f} s"
            closing = time.monotonic()
            await asyncio.wait_for(agen.aclose(), 10)
            assert time.monotonic() - closing < 1.0
    asyncio.run(main())


def _document(seed: int) -> dict:
    """Items with repeated member names (short: marshal references; long: written out), names
    that are not ASCII, nulls, nesting, and numbers of every kind."""
    rnd = random.Random(seed)
    names = ["id", "name", "tags", "é", "日本", "a_name_longer_than_sixteen_bytes", "x" * 16]
    items = []
    for i in range(40):
        item = {rnd.choice(names): rnd.choice([None, i, -i * 1.5, "v" * rnd.randint(0, 20), True])
                for _ in range(rnd.randint(0, 6))}
        item["nested"] = [{"id": j, "n": {"deep": [None, {"é": j}]}} for j in range(rnd.randint(0, 3))]
        item[f"unique{i}"] = i   # a name seen once (fills the reference table's slots)
        items.append(item)
    return {"count": len(items), "items": items}


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_items_cut_anywhere_come_out_whole_and_once(base_url, chunk):
    doc = _document(chunk)
    body = json.dumps(doc, ensure_ascii=False).encode()
    url = echo(base_url, body, chunk, "application/json")
    with hc.Client() as c:
        assert list(c.iter_json(url, "items.item")) == doc["items"]
        got: list = []
        c.get(url, handler=hc.JSONItems("items.item", got.append))
        assert got == doc["items"]


@pytest.mark.parametrize("chunk", [1, 5, 64])
def test_records_cut_anywhere_come_out_whole_and_once(base_url, chunk):
    records = _document(100 + chunk)["items"]
    body = b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)
    with hc.Client() as c:
        assert list(c.iter_json_lines(echo(base_url, body, chunk, "application/x-ndjson"))) == records
        # A bad record between good ones: skipped, the others whole.
        bad = body.replace(b"\n", b"\n{bad\n", 1)
        skipped: list = []
        got = list(c.iter_json_lines(echo(base_url, bad, chunk, "application/x-ndjson"), skip_bad=True,
                                     on_skip=skipped.append))
        assert got == records and len(skipped) == 1


@pytest.mark.parametrize("chunk", [1, 4, 64])
def test_xml_elements_cut_anywhere_come_out_whole_and_once(base_url, chunk):
    entries = "".join(f'<entry id="{i}" xmlns:m="urn:m"><m:t lang="é">t{i}</m:t><title>x{i}</title>tail</entry>'
                      for i in range(40))
    body = f"<feed>{entries}</feed>".encode()
    with hc.Client() as c:
        got = [ET.tostring(e) for e in c.iter_xml(echo(base_url, body, chunk, "application/xml"), "feed/entry")]
    expected = [ET.tostring(e) for e in ET.fromstring(body).findall("entry")]
    assert got == expected


# -- leaving and cancelling on an idle connection; timeouts for streams

def _drip_parts(base_url: str, parts: int, hold: float) -> str:
    """A body of `parts` lines, one sent every `hold` seconds."""
    body = b"".join(b"line %d\n" % i for i in range(parts))
    cuts = ",".join(str(len(b"line 0\n") * i) for i in range(1, parts))
    return f"{base_url}/records/drip?b64={_b64(body)}&at={cuts}&hold={hold}&ctype=text/plain"


def test_a_token_set_from_another_thread_stops_a_request_on_an_idle_connection(base_url):
    import threading
    with hc.Client() as c:
        token = hc.CancelToken()
        threading.Timer(0.3, token.cancel).start()
        start = time.monotonic()
        with pytest.raises(hc.Cancelled):
            c.get(f"{base_url}/stall?bytes=100", cancel=token)
        assert time.monotonic() - start < 0.9   # was ~1.2 s: the wait is woken


def test_a_token_stops_a_request_of_a_batch_at_once(base_url):
    import threading
    with hc.Client() as c:
        token = hc.CancelToken()
        threading.Timer(0.3, token.cancel).start()
        start = time.monotonic()
        results = c.map([hc.Request("GET", f"{base_url}/stall?bytes=100", cancel=token),
                         hc.Request("GET", f"{base_url}/bytes/10")])
        assert isinstance(results[0], hc.Cancelled) and results[1].content == bytes(range(10))
        assert time.monotonic() - start < 0.9


@pytest.mark.parametrize("front", ["request", "map", "arequest", "iter_lines"])
def test_read_timeout_fails_a_stalled_response_on_time(base_url, front):
    url = f"{base_url}/stall?bytes=100"
    with hc.Client(read_timeout=0.4) as c:
        start = time.monotonic()
        with pytest.raises(hc.Timeout) as caught:
            if front == "request":
                c.get(url)
            elif front == "map":
                raise c.map([hc.Request("GET", url)])[0]
            elif front == "arequest":
                asyncio.run(asyncio.wait_for(c.arequest("GET", url), 10))
            else:
                list(c.iter_lines(url))
        took = time.monotonic() - start
        assert 0.35 < took < 1.5, took
        assert "read timeout" in caught.value.message


@pytest.mark.parametrize("front", ["request", "map", "arequest"])
def test_a_stream_longer_than_the_read_timeout_but_never_silent_that_long_lives(base_url, front):
    url = _drip_parts(base_url, 5, 0.3)   # 1.2 s in all, 0.3 s silences
    with hc.Client(read_timeout=0.8) as c:
        if front == "request":
            r = c.get(url)
        elif front == "map":
            r = c.map([hc.Request("GET", url)])[0]
        else:
            r = asyncio.run(asyncio.wait_for(c.arequest("GET", url), 10))
        assert r.content.count(b"\n") == 5


def test_a_request_lifts_or_sets_the_clients_limits(base_url):
    url = _drip_parts(base_url, 4, 0.3)   # 0.9 s in all
    with hc.Client(timeout=0.5) as c:
        with pytest.raises(hc.Timeout):
            c.get(url)
        assert c.get(url, timeout=None).content.count(b"\n") == 4           # lifted
        assert list(c.iter_lines(url, timeout=None)) == [f"line {i}" for i in range(4)]
    with hc.Client(read_timeout=0.1) as c:
        assert c.get(url, read_timeout=None).content.count(b"\n") == 4      # lifted
        assert c.get(url, read_timeout=1.0).content.count(b"\n") == 4       # set
        with pytest.raises(hc.Timeout):
            c.get(url, read_timeout=0.1, connect_timeout=5)


def test_leaving_a_line_iterator_early_on_an_idle_stream_is_instant(base_url):
    with hc.Client() as c:
        it = c.iter_lines(_drip_parts(base_url, 3, 5.0))
        assert next(it) == "line 0"
        start = time.monotonic()
        it.close()
        assert time.monotonic() - start < 0.5
