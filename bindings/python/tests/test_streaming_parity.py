"""The streaming promise (issue 27), on every Python front, sync and async: an item (a JSON path
item, a JSON record, a line, an XML element, an event, a raw chunk) reaches the caller as soon as
the bytes completing it are read, and leaving early (close, break, aclose, task.cancel) stops the
transfer at once, also while the connection is idle. The server (/records/drip) sends the body
cut at byte offsets, holding a few seconds after each part: the items completed in the first
part must arrive well before the hold ends, and leaving during a hold must return well under a
second and close the connection (the server's thread for it then ends).

Every wait is bounded: the server's holds end on their own (at most `HOLD` or `LONG` seconds
each), and every await has a timeout."""

from __future__ import annotations

import asyncio
import base64
import threading
import time
import urllib.parse

import pytest

import httpcontent as hc

HOLD = 4.0     # the hold after the first part, in latency tests
LONG = 6.0     # the holds in early-leave tests (the stream would otherwise last 2 * LONG)
SOON = 2.0     # items of the first part arrive within this (half the hold: the machine may be busy)
PROMPT = 1.0   # leaving returns, and the server sees the connection closed, within this


def drip(base_url: str, body: bytes, at: list[int], *, hold: float = HOLD, ctype: str = "application/json",
         chunked: bool = False, hold_last: bool = False) -> str:
    query = {"b64": base64.urlsafe_b64encode(body).decode(), "at": ",".join(map(str, at)), "hold": hold,
             "ctype": ctype}
    if chunked:
        query["chunked"] = 1
    if hold_last:
        query["hold_last"] = 1
    return f"{base_url}/records/drip?{urllib.parse.urlencode(query)}"


def cut_after(body: bytes, marker: bytes) -> int:
    """The offset just after the first `marker` (and a byte into what follows it)."""
    return body.index(marker) + len(marker) + 1


# Each form: a body whose first part completes two items and starts a third, how to cut it,
# the content type, and the items expected, as the test reads them.
JSON_BODY = b'[{"id": 1}, {"id": 2}, {"id": 3}]'
JSON_LINES_BODY = b'{"id": 1}\n{"id": 2}\n{"id": 3}\n'
LINES_BODY = b"one\ntwo\nthree\n"
XML_BODY = b"<feed><entry>1</entry><entry>2</entry><entry>3</entry></feed>"
EVENTS_BODY = b"data: 1\n\ndata: 2\n\ndata: 3\n\n"

FORMS = {
    "json": (JSON_BODY, cut_after(JSON_BODY, b'"id": 2}'), "application/json", [1, 2, 3]),
    "json_lines": (JSON_LINES_BODY, cut_after(JSON_LINES_BODY, b'"id": 2}\n'), "application/x-ndjson", [1, 2, 3]),
    "lines": (LINES_BODY, cut_after(LINES_BODY, b"two\n"), "text/plain", ["one", "two", "three"]),
    "xml": (XML_BODY, cut_after(XML_BODY, b"<entry>2</entry>"), "application/xml", ["1", "2", "3"]),
    "events": (EVENTS_BODY, cut_after(EVENTS_BODY, b"data: 2\n\n"), "text/event-stream", ["1", "2", "3"]),
}


def sync_iterator(client, form, url):
    """The sync iterator of `form`, giving each item as FORMS lists it."""
    if form == "json":
        return (v["id"] for v in client.iter_json(url))
    if form == "json_lines":
        return (v["id"] for v in client.iter_json_lines(url))
    if form == "lines":
        return client.iter_lines(url)
    if form == "xml":
        return (e.text for e in client.iter_xml(url, "feed/entry"))
    return (e.data for e in client.iter_events(url))


def async_iterator(client, form, url):
    if form == "json":
        return client.aiter_json(url)
    if form == "json_lines":
        return client.aiter_json_lines(url)
    if form == "lines":
        return client.aiter_lines(url)
    if form == "xml":
        return client.aiter_xml(url, "feed/entry")
    return client.aiter_events(url)


def readable(form, item):
    if form in ("json", "json_lines"):
        return item["id"]
    if form == "xml":
        return item.text
    if form == "events":
        return item.data
    return item


def server_threads() -> int:
    """The in-process test server's threads: one per open connection."""
    return sum(1 for t in threading.enumerate() if "process_request" in t.name)


def server_let_go(at_most: int, within: float) -> bool:
    """Whether the server's threads are down to `at_most` within `within` seconds (a connection
    the client closed ends its thread at once: the server stops holding)."""
    deadline = time.monotonic() + within
    while server_threads() > at_most and time.monotonic() < deadline:
        time.sleep(0.02)
    return server_threads() <= at_most


async def aserver_let_go(at_most: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while server_threads() > at_most and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return server_threads() <= at_most


def arrivals_sync(iterator):
    start = time.monotonic()
    return [(item, time.monotonic() - start) for item in iterator]


async def arrivals_async(iterator):
    start, got = time.monotonic(), []
    while True:
        try:
            item = await asyncio.wait_for(iterator.__anext__(), HOLD + 10)
        except StopAsyncIteration:
            return got
        got.append((item, time.monotonic() - start))


def check_arrivals(arrivals, expected):
    assert [item for item, _ in arrivals] == expected
    first, second, third = (at for _, at in arrivals)
    assert first < SOON and second < SOON, f"items of the first part held back: {arrivals}"
    assert third > HOLD - 0.5   # the server did hold


# -- items arrive as soon as they are complete ------------------------------------------------

@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
@pytest.mark.parametrize("form", list(FORMS))
def test_sync_items_of_the_first_part_arrive_before_the_hold_ends(base_url, form, chunked):
    body, at, ctype, expected = FORMS[form]
    with hc.Client(timeout=30) as client:
        arrivals = arrivals_sync(sync_iterator(client, form, drip(base_url, body, [at], ctype=ctype,
                                                                  chunked=chunked)))
    check_arrivals(arrivals, expected)


@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
@pytest.mark.parametrize("form", list(FORMS))
def test_async_items_of_the_first_part_arrive_before_the_hold_ends(base_url, form, chunked):
    body, at, ctype, expected = FORMS[form]

    async def main():
        with hc.Client(timeout=30) as client:
            got = await arrivals_async(async_iterator(client, form, drip(base_url, body, [at], ctype=ctype,
                                                                         chunked=chunked)))
            return [(readable(form, item), t) for item, t in got]
    check_arrivals(asyncio.run(main()), expected)


BYTES_BODY = bytes(range(256)) * 40   # 10 240 bytes, cut at 3000 and 7000


@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
def test_iter_bytes_gives_the_chunks_read_before_the_hold_ends(base_url, chunked):
    url = drip(base_url, BYTES_BODY, [3000, 7000], ctype="application/octet-stream", chunked=chunked)
    with hc.Client(timeout=30) as client:
        arrivals = arrivals_sync(client.iter_bytes(url))
        assert b"".join(c for c, _ in arrivals) == BYTES_BODY
        early = sum(len(c) for c, at in arrivals if at < SOON)
        assert early == 3000, f"the first part was held back: {[(len(c), t) for c, t in arrivals]}"
        assert max(at for _, at in arrivals) > 2 * HOLD - 0.5
        # Cut again at the first part's size: the first chunk is the whole first part, at once.
        arrivals = arrivals_sync(client.iter_bytes(url, chunk_size=3000))
    assert [len(c) for c, _ in arrivals] == [3000, 3000, 3000, 1240]
    assert b"".join(c for c, _ in arrivals) == BYTES_BODY
    assert arrivals[0][1] < SOON and arrivals[1][1] > HOLD - 0.5


@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
def test_aiter_bytes_gives_the_chunks_read_before_the_hold_ends(base_url, chunked):
    url = drip(base_url, BYTES_BODY, [3000, 7000], ctype="application/octet-stream", chunked=chunked)

    async def main():
        with hc.Client(timeout=30) as client:
            whole = await arrivals_async(client.aiter_bytes(url))
            cut = await arrivals_async(client.aiter_bytes(url, chunk_size=3000))
            return whole, cut
    whole, cut = asyncio.run(main())
    assert b"".join(c for c, _ in whole) == BYTES_BODY
    assert sum(len(c) for c, at in whole if at < SOON) == 3000, [(len(c), t) for c, t in whole]
    assert [len(c) for c, _ in cut] == [3000, 3000, 3000, 1240]
    assert b"".join(c for c, _ in cut) == BYTES_BODY
    assert cut[0][1] < SOON and cut[1][1] > HOLD - 0.5


def test_bytes_iterators_refuse_a_chunk_size_that_is_not_a_positive_int(base_url):
    with hc.Client() as client:
        for bad in (0, -1, 1.5, True):
            with pytest.raises(ValueError, match="chunk_size"):
                client.iter_bytes(f"{base_url}/bytes/10", chunk_size=bad)
            with pytest.raises(ValueError, match="chunk_size"):
                client.aiter_bytes(f"{base_url}/bytes/10", chunk_size=bad)
        assert b"".join(client.iter_bytes(f"{base_url}/bytes/10", chunk_size=4)) == bytes(range(10))
        assert [len(c) for c in client.iter_bytes(f"{base_url}/bytes/10", chunk_size=4)] == [4, 4, 2]
        with pytest.raises(hc.UnacceptableStatus):
            list(client.iter_bytes(f"{base_url}/status/404"))

        async def statuses():
            with pytest.raises(hc.UnacceptableStatus):
                async for _ in client.aiter_bytes(f"{base_url}/status/404"):
                    pass
            return [c async for c in client.aiter_bytes(f"{base_url}/bytes/10", chunk_size=4)]
        assert asyncio.run(asyncio.wait_for(statuses(), 20)) == [bytes(range(4)), bytes(range(4, 8)), b"\x08\t"]


# -- leaving early stops the transfer at once, on an idle connection too ----------------------

ALL_FORMS = list(FORMS) + ["bytes"]


def leave_url(base_url, form):
    """A stream whose first part completes an item, then idles LONG seconds (twice)."""
    if form == "bytes":
        return drip(base_url, BYTES_BODY, [3000], hold=LONG, ctype="application/octet-stream", hold_last=True)
    body, at, ctype, _ = FORMS[form]
    return drip(base_url, body, [at], hold=LONG, ctype=ctype, hold_last=True)


@pytest.mark.parametrize("how", ["close", "break"])
@pytest.mark.parametrize("form", ALL_FORMS)
def test_sync_leaving_during_a_hold_returns_at_once_and_closes_the_connection(base_url, form, how):
    with hc.Client(timeout=30) as client:
        before = server_threads()
        url = leave_url(base_url, form)
        iterator = client.iter_bytes(url) if form == "bytes" else sync_iterator(client, form, url)
        if how == "close":
            next(iterator)
            start = time.monotonic()
            iterator.close()
        else:
            for _ in iterator:
                start = time.monotonic()
                break
            del iterator
        took = time.monotonic() - start
        assert took < PROMPT, f"leaving took {took:.2f} s"
        assert server_let_go(before, PROMPT), "the connection was left open"


@pytest.mark.parametrize("how", ["aclose", "break", "cancel"])
@pytest.mark.parametrize("form", ALL_FORMS)
def test_async_leaving_during_a_hold_returns_at_once_and_closes_the_connection(base_url, form, how):
    async def main():
        with hc.Client(timeout=30) as client:
            before = server_threads()
            url = leave_url(base_url, form)
            iterator = client.aiter_bytes(url) if form == "bytes" else async_iterator(client, form, url)
            if how == "aclose":
                await asyncio.wait_for(iterator.__anext__(), LONG)
                start = time.monotonic()
                await asyncio.wait_for(iterator.aclose(), LONG)
            elif how == "break":
                async def first():
                    async for _ in iterator:
                        break
                await asyncio.wait_for(first(), LONG)
                start = time.monotonic()
                del iterator   # dropped: asyncio closes it (its finalizer hook)
                await asyncio.sleep(0)
            else:
                got = asyncio.Event()

                async def consume():
                    async for _ in iterator:
                        got.set()
                task = asyncio.ensure_future(consume())
                await asyncio.wait_for(got.wait(), LONG)
                await asyncio.sleep(0.2)   # the task waits for the next item, in the hold
                start = time.monotonic()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await asyncio.wait_for(task, LONG)
            took = time.monotonic() - start
            let_go = await aserver_let_go(before, PROMPT)
            # The client goes on serving.
            r = await asyncio.wait_for(client.arequest("GET", f"{base_url}/bytes/3"), 10)
            return took, let_go, r.content
    took, let_go, content = asyncio.run(main())
    assert took < PROMPT, f"leaving took {took:.2f} s"
    assert let_go, "the connection was left open"
    assert content == bytes(range(3))


# -- bounded memory: a slow reader leaves the socket unread ----------------------------------

@pytest.mark.parametrize("name", ["aiter_lines", "aiter_json_lines", "aiter_xml", "aiter_bytes"])
def test_async_iterators_stop_reading_while_their_buffer_is_full(base_url, monkeypatch, name):
    from httpcontent import _aio
    pauses = []

    class Watched(_aio.LoopDriver):
        def pause(self):
            pauses.append(1)
            super().pause()
    monkeypatch.setattr(_aio, "LoopDriver", Watched)
    n = 3000
    bodies = {
        "aiter_lines": (b"".join(b"line %d %s\n" % (i, b"x" * 200) for i in range(n)), "text/plain"),
        "aiter_json_lines": (b"".join(b'{"i": %d, "pad": "%s"}\n' % (i, b"x" * 200) for i in range(n)),
                             "application/x-ndjson"),
        "aiter_xml": (b"<r>" + b"".join(b"<e>%d %s</e>" % (i, b"x" * 200) for i in range(n)) + b"</r>",
                      "application/xml"),
        "aiter_bytes": (bytes(range(256)) * n, "application/octet-stream"),
    }
    body, ctype = bodies[name]
    # Posted to the echo route in 4 KiB chunks: many reads, many batches.
    url = f"{base_url}/records/echo?chunk=4096&ctype={urllib.parse.quote(ctype)}"

    async def slow():
        got = 0
        with hc.Client(timeout=60) as client:
            method = getattr(client, name)
            args = (url, "r/e") if name == "aiter_xml" else (url,)
            async for item in method(*args, method="POST", data=body, buffer=1):
                got += len(item) if name == "aiter_bytes" else 1
                if got % 500 == 0:
                    await asyncio.sleep(0.01)
        return got
    got = asyncio.run(asyncio.wait_for(slow(), 60))
    assert got == (len(body) if name == "aiter_bytes" else n)
    assert len(pauses) > 3   # the socket was left unread, yet nothing was lost


def test_async_iterators_take_their_siblings_options(base_url):
    lines = "a\nb\xff\nc".encode("latin-1")
    records = b'{"x": {"y": 1}}\nnot json\n{"x": {"y": 2}}\n'

    async def main():
        with hc.Client(timeout=30) as client:
            echo = f"{base_url}/records/echo?chunk=3&ctype="
            got_lines = [s async for s in client.aiter_lines(echo + "text/plain", method="POST", data=lines,
                                                             strict=False)]
            skipped: list[hc.Error] = []
            got_records = [v async for v in client.aiter_json_lines(
                echo + "application/x-ndjson", method="POST", data=records, skip_bad=True,
                on_skip=skipped.append, path="x.y")]
            with pytest.raises(hc.DecodeError):
                async for _ in client.aiter_json_lines(echo + "application/x-ndjson", method="POST", data=records):
                    pass
            limited = [e.text async for e in client.aiter_xml(
                f"{base_url}/xml/doc?doc={urllib.parse.quote('<r><e>1</e><e>2</e><e>3</e></r>')}", "r/e", limit=2)]
            return got_lines, got_records, skipped, limited
    got_lines, got_records, skipped, limited = asyncio.run(asyncio.wait_for(main(), 30))
    assert got_lines == ["a", "b\ufffd", "c"]
    assert got_records == [1, 2] and [e.record_index for e in skipped] == [1]
    assert limited == ["1", "2"]
