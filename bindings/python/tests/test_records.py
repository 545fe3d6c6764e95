"""Record streams (lines, JSON records, Server-Sent Events) against oracles: httpx-sse's own
decoder on the same bytes, json.loads per line, and a plain CR/LF/CRLF split. The bodies come
from the test server's /records/echo in HTTP chunks of every size from 1 byte up."""

from __future__ import annotations

import asyncio
import base64
import codecs
import json
import random
import re
import time
import urllib.parse
from pathlib import Path

import pytest

import httpcontent as hc
from httpx_sse._decoders import SSEDecoder, SSELineDecoder


def echo(base_url: str, body: bytes, chunk: int, ctype: str = "text/event-stream") -> str:
    q = urllib.parse.urlencode({"b64": base64.b64encode(body).decode(), "chunk": chunk, "ctype": ctype})
    return f"{base_url}/records/echo?{q}"


# -- lines ----------------------------------------------------------------------------------

def split_lines(text: str) -> list[str]:
    """The reference: lines ended by CRLF, CR or LF; the last unterminated line kept."""
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


LINES_BODY = "a\r\nb\rc\n\nd\r\r\ncafé €uro 😀\r\n\r\nlast".encode()


def test_lines_split_at_cr_lf_crlf_and_multibyte_characters_at_every_chunk_size(client, base_url):
    want = split_lines(LINES_BODY.decode())
    assert want == ["a", "b", "c", "", "d", "", "café €uro 😀", "", "last"]
    for chunk in range(1, len(LINES_BODY) + 1):
        got = list(client.iter_lines(echo(base_url, LINES_BODY, chunk, "text/plain")))
        assert got == want, chunk


def test_requests_iter_lines_splits_a_crlf_across_chunks_wrongly_and_we_do_not(client, base_url):
    import requests
    body = b"one\r\ntwo\r\nthree"
    url = echo(base_url, body, 4, "text/plain")  # "one\r" | "\ntwo" | ...
    with requests.get(url, stream=True, timeout=20) as r:
        theirs = [line.decode() for line in r.iter_lines(chunk_size=4)]
    assert theirs != ["one", "two", "three"]  # the known requests bug: an extra empty line
    assert "" in theirs
    assert list(client.iter_lines(url)) == ["one", "two", "three"]


def test_lines_decode_the_content_type_charset_and_drop_a_bom(client, base_url):
    latin = "café\nnaïve".encode("latin-1")
    assert list(client.iter_lines(echo(base_url, latin, 3, "text/plain; charset=iso-8859-1"))) == ["café", "naïve"]
    bom = b"\xef\xbb\xbfx\ny"
    assert list(client.iter_lines(echo(base_url, bom, 1, "text/plain"))) == ["x", "y"]


def test_lines_limits_and_bad_bytes(client, base_url):
    with pytest.raises(hc.TooLarge):
        list(client.iter_lines(echo(base_url, b"short\n" + b"x" * 100 + b"\n", 7, "text/plain"), max_line_size=50))
    with pytest.raises(hc.DecodeError):
        list(client.iter_lines(echo(base_url, b"ok\n\xff\xfe\n", 2, "text/plain")))
    assert list(client.iter_lines(echo(base_url, b"ok\n\xff\n", 2, "text/plain"), strict=False)) == ["ok", "\ufffd"]


def test_lines_handler_counts_and_stops_early(client, base_url):
    seen = []
    r = client.get(echo(base_url, b"1\n2\n3\n4\n", 1, "text/plain"), handler=hc.Lines(seen.append))
    assert seen == ["1", "2", "3", "4"] and r.content == 4
    stopped = []
    client.get(echo(base_url, b"1\n2\n3\n4\n", 1, "text/plain"),
               handler=hc.Lines(lambda line: stopped.append(line) or line == "2"))
    assert stopped == ["1", "2"]
    it = client.iter_lines(f"{base_url}/ndjson?n=100000")
    assert next(it) == '{"i": 0}'
    it.close()  # stops the transfer; nothing hangs


# -- JSON records ---------------------------------------------------------------------------

NDJSON = ('{"a": 1, "s": "h\\u00e9 \\ud83d\\ude00"}\r\n'
          '\n'
          '[12345678901234567890123, -98765432109876543210, 1e400, 0.1, -0, 5e-324]\n'
          '   "text"  \r\n'
          '{"nested": {"k": [true, false, null]}, "big": 9223372036854775808}\n'
          '42\n'
          '\r\n'
          '{"last": "no newline"}').encode()


def test_lines_held_for_a_batch_are_handed_over_when_the_server_pauses(client, base_url):
    """libcurl hands a read over in 16 KiB pieces and lines are batched across them; a body
    part of exactly 16 KiB then a pause must still reach the caller during the pause."""
    part = b"".join(b"line %09d\n" % i for i in range(16384 // 15))
    part += b"x" * (16384 - len(part) - 1) + b"\n"
    assert len(part) == 16384
    url = echo(base_url, part * 2, 16384, "text/plain") + "&delay=1.0"
    started = time.monotonic()
    lines = client.iter_lines(url)
    first = next(lines)
    waited = time.monotonic() - started
    rest = list(lines)
    assert first == "line 000000000"
    assert len(rest) == 2 * (part.count(b"\n")) - 1
    assert waited < 0.8, f"the first line came after {waited:.2f} s: held until the next part"


def test_json_lines_equal_json_loads_per_line_at_every_chunk_size(client, base_url):
    want = [json.loads(line) for line in NDJSON.decode().splitlines() if line.strip()]
    for chunk in range(1, len(NDJSON) + 1):
        got = list(client.iter_json_lines(echo(base_url, NDJSON, chunk, "application/x-ndjson")))
        assert repr(got) == repr(want), chunk


def test_json_lines_handler_and_integers_beyond_64_bits(client, base_url):
    seen = []
    r = client.get(echo(base_url, NDJSON, 5, "application/x-ndjson"), handler=hc.JSONLines(seen.append))
    assert r.content == 6
    assert seen[1][0] == 12345678901234567890123 and type(seen[1][0]) is int
    assert seen[3]["big"] == 9223372036854775808


SUITE = Path(__file__).resolve().parents[3].parent / "shared" / "conformance" / "JSONTestSuite" / "test_parsing"


@pytest.mark.skipif(not SUITE.is_dir(), reason="../shared/conformance/JSONTestSuite is not beside the checkout")
@pytest.mark.parametrize("chunk", [5, 1 << 16])
def test_json_test_suite_as_json_lines(client, base_url, chunk):
    """Every one-line case of JSONTestSuite as a record of one stream (whole lines inside a chunk
    take the fast scanner, the others yajl): y_ cases come back as json.loads gives them, n_
    cases are bad records (skipped, each at its own index), i_ cases either way."""
    cases = [(p.name, p.read_bytes()) for p in sorted(SUITE.glob("[yni]_*.json"))]
    cases = [(name, text) for name, text in cases if b"\n" not in text and b"\r" not in text and text.strip()]
    body = b"".join(text + b"\n" for _, text in cases)
    skipped: list[hc.Error] = []
    url = f"{base_url}/records/echo?chunk={chunk}&ctype=application/x-ndjson"
    got = list(client.iter_json_lines(url, method="POST", data=body, skip_bad=True, on_skip=skipped.append))
    bad = {e.record_index for e in skipped}
    values = iter(got)
    wrong = []
    for index, (name, text) in enumerate(cases):
        if index in bad:
            if name.startswith("y_"):
                wrong.append(f"{name}: refused")
            continue
        value = next(values)
        if name.startswith("n_"):
            wrong.append(f"{name}: accepted as {value!r}")
            continue
        if name.startswith("i_"):
            continue  # either way (lone surrogates, say, are yajl's business, not json.loads')
        want = json.loads(text)
        if repr(value) != repr(want):
            wrong.append(f"{name}: {value!r} != {want!r}")
    assert wrong == []
    assert next(values, None) is None


@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_a_bad_record_reports_its_index_and_offset(client, base_url, chunk):
    body = b'{"a": 1}\n\n{"b": 2}\n{"c": oops}\n{"d": 4}\n'
    with pytest.raises(hc.DecodeError) as info:
        list(client.iter_json_lines(echo(base_url, body, chunk, "application/x-ndjson")))
    assert info.value.record_index == 2
    assert info.value.offset == body.index(b"oops")
    assert "record 2" in str(info.value)
    skipped = []
    got = list(client.iter_json_lines(echo(base_url, body, chunk, "application/x-ndjson"), skip_bad=True,
                                      on_skip=skipped.append))
    assert got == [{"a": 1}, {"b": 2}, {"d": 4}]
    assert [(e.record_index, e.offset) for e in skipped] == [(2, body.index(b"oops"))]


def test_lines_with_two_values_or_a_value_over_two_lines_are_bad_records(client, base_url):
    body = b'1\n2 3\n{"a":\n1}\n4\n'
    skipped = []
    got = list(client.iter_json_lines(echo(base_url, body, 2, "application/x-ndjson"), skip_bad=True,
                                      on_skip=skipped.append))
    assert got[0] == 1 and got[-1] == 4
    assert [e.record_index for e in skipped][:2] == [1, 2]
    with pytest.raises(hc.DecodeError):
        list(client.iter_json_lines(echo(base_url, body, 2, "application/x-ndjson")))


def test_json_text_sequences_detect_truncated_values(client, base_url):
    body = b'\x1e{"a": 1}\n\x1e123\x1e[2]\n\x1e\x1e"s"\n\x1e{"cut": '
    for chunk in (1, 4, 100):
        skipped = []
        got = list(client.iter_json_lines(echo(base_url, body, chunk, "application/json-seq"), framing="seq",
                                          skip_bad=True, on_skip=skipped.append))
        assert got == [{"a": 1}, [2], "s"], chunk
        assert [e.record_index for e in skipped] == [1, 4], chunk
    with pytest.raises(hc.DecodeError) as info:
        list(client.iter_json_lines(echo(base_url, body, 3, "application/json-seq"), framing="seq"))
    assert info.value.record_index == 1


def test_concatenated_json(client, base_url):
    body = b'{"a": 1}{"b": [2]}  [3]"x"\n4 '
    for chunk in (1, 2, 7, 100):
        got = list(client.iter_json_lines(echo(base_url, body, chunk, "application/json"), framing="concatenated"))
        assert got == [{"a": 1}, {"b": [2]}, [3], "x", 4], chunk


def test_json_lines_limits_and_acceptance(client, base_url):
    with pytest.raises(hc.TooLarge):
        list(client.iter_json_lines(echo(base_url, b'[1]\n"' + b"x" * 500 + b'"\n', 50, "application/x-ndjson"),
                                    max_record_size=100))
    with pytest.raises(hc.UnacceptableContentType):
        list(client.iter_json_lines(echo(base_url, b"1\n", 1, "text/html")))


def test_a_long_json_lines_stream_arrives_in_order_and_stopping_early_stops(client, base_url):
    count = 0
    for record in client.iter_json_lines(f"{base_url}/ndjson?n=50000"):
        assert record == {"i": count}
        count += 1
    assert count == 50000
    it = client.iter_json_lines(f"{base_url}/ndjson?n=1000000")
    assert next(it) == {"i": 0}
    it.close()


# -- a path and a schema per record -----------------------------------------------------------

SCHEMA = {"type": "object", "required": ["id", "at"],
          "properties": {"id": {"type": "integer", "minimum": 0}, "at": {"type": "string", "format": "date-time"}}}
RECORDS = [{"user": {"id": 1, "at": "2026-11-25T06:00:00Z"}}, {"user": {"id": -2, "at": "2026-11-25T06:00:00Z"}},
           {"other": 3}, {"user": {"id": 4, "at": "2026-11-25T07:00:00Z"}}, {"user": {"id": "5"}},
           {"user": {"id": 6, "at": "2026-11-25T08:00:00+01:00"}}]


def test_a_schema_per_record_agrees_with_jsonschema_and_reports_invalid_records(client, base_url):
    import datetime
    import jsonschema
    body = b"".join(json.dumps(r).encode() + b"\n" for r in RECORDS)
    offsets = [sum(len(json.dumps(r)) + 1 for r in RECORDS[:i]) for i in range(len(RECORDS))]
    validator = jsonschema.Draft202012Validator(SCHEMA)
    valid = [i for i, r in enumerate(RECORDS) if "user" in r and validator.is_valid(r["user"])]
    assert valid == [0, 3, 5]
    schema = hc.Schema(SCHEMA)
    for chunk in (1, 7, 50, len(body)):
        url = echo(base_url, body, chunk, "application/x-ndjson")
        skipped = []
        got = list(client.iter_json_lines(url, path="user", schema=schema, skip_invalid=True, on_skip=skipped.append))
        # Valid ones, the date-time format converted as hc.Schema does for any response.
        assert [g["id"] for g in got] == [RECORDS[i]["user"]["id"] for i in valid]
        assert got[0]["at"] == datetime.datetime(2026, 11, 25, 6, tzinfo=datetime.timezone.utc)
        assert [e.record_index for e in skipped] == [1, 2, 4] and [e.offset for e in skipped] == [offsets[i] for i in (1, 2, 4)]
        with pytest.raises(hc.SchemaError) as caught:
            list(client.iter_json_lines(url, path="user", schema=schema))
        assert caught.value.record_index == 1 and caught.value.offset == offsets[1]
        assert caught.value.instance_path == "/id" and caught.value.keyword == "minimum"
    # The handler, and a path alone: a record without it is a bad record, or skipped.
    url = echo(base_url, body, 9, "application/x-ndjson")
    seen, skipped = [], []
    r = client.get(url, handler=hc.JSONLines(seen.append, path="user.id", skip_invalid=True, on_skip=skipped.append))
    assert seen == [1, -2, 4, "5", 6] and r.content == 5 and [e.record_index for e in skipped] == [2]
    with pytest.raises(hc.DecodeError) as caught:
        list(client.iter_json_lines(url, path="user.id"))
    assert caught.value.record_index == 2 and "user.id" in str(caught.value)
    assert list(client.iter_json_lines(url, path="user.id", skip_invalid=True))[:2] == [1, -2]
    with pytest.raises(ValueError):
        hc.JSONLines(seen.append, skip_invalid=True)


def test_integers_beyond_64_bits_stay_exact_with_a_path_or_a_schema(client, base_url):
    # With a path or a schema each record crosses as a tree; its big integers must not be rounded
    # to floats on the way (json.loads keeps them exact, and so does the plain route).
    records = [{"user": {"id": 2**70, "n": -(2**64) - 1, "x": 1.5, "i": 9223372036854775807}},
               {"user": {"id": -(2**63), "n": 10**30, "x": 1e300, "i": 0}}]
    body = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    schema = hc.Schema({"type": "object", "properties": {"id": {"type": "integer"}, "n": {"type": "integer"}}})
    for chunk in (1, 5, len(body)):
        url = echo(base_url, body, chunk, "application/x-ndjson")
        expected = [r["user"] for r in records]
        assert list(client.iter_json_lines(url)) == records
        for got in (list(client.iter_json_lines(url, path="user")),
                    list(client.iter_json_lines(url, path="user", schema=schema))):
            assert got == expected
            assert [type(g["id"]) for g in got] == [int, int] and isinstance(got[0]["x"], float)
        assert list(client.iter_json_lines(url, path="user.n")) == [-(2**64) - 1, 10**30]
    # A big integer is still checked against the bounds.
    small = hc.Schema({"type": "object", "properties": {"id": {"maximum": 2**69}}})
    with pytest.raises(hc.SchemaError) as caught:
        list(client.iter_json_lines(echo(base_url, body, 7, "application/x-ndjson"), path="user", schema=small))
    assert caught.value.record_index == 0 and caught.value.instance_path == "/id"


def test_a_path_selects_inside_records_of_every_framing(client, base_url):
    for framing, ctype, body in [("seq", "application/json-seq", b"\x1e{\"a\":[10,{\"b\":1}]}\n\x1e{\"a\":[20,{\"b\":2}]}\n"),
                                 ("concatenated", "application/json", b'{"a":[10,{"b":1}]}{"a":[20,{"b":2}]}'),
                                 ("lines", "application/x-ndjson", b'{"a":[10,{"b":1}]}\n{"a":[20,{"b":2}]}\n')]:
        for chunk in (1, 5, len(body)):
            url = echo(base_url, body, chunk, ctype)
            assert list(client.iter_json_lines(url, framing=framing, path="a.1.b")) == [1, 2], (framing, chunk)
            assert list(client.iter_json_lines(url, framing=framing, path="a.0")) == [10, 20]


# -- Server-Sent Events ---------------------------------------------------------------------

def oracle_events(body: bytes, chunk: int) -> list[hc.ServerSentEvent]:
    """httpx-sse's decoder on the same bytes, cut the same way (its text decoding is httpx's:
    incremental UTF-8 with replacement; the standard's BOM skip is done here)."""
    text_decoder = codecs.getincrementaldecoder("utf-8")("replace")
    lines, sse, out = SSELineDecoder(), SSEDecoder(), []
    first = True
    for i in range(0, len(body), chunk):
        text = text_decoder.decode(body[i:i + chunk])
        if first and text:
            text, first = text.removeprefix("\ufeff"), False
        if text:
            for line in lines.decode(text):
                event = sse.decode(line)
                if event is not None:
                    out.append(hc.ServerSentEvent(event.event, event.data, event.id, event.retry))
    for line in lines.flush():
        sse.decode(line)  # an unterminated last line dispatches nothing
    return out


def random_stream(rng: random.Random) -> bytes:
    """Events that always carry data (httpx-sse also dispatches data-less events, the standard
    does not), with every line ending, comments, retry, ids, split multibyte characters."""
    out = "\ufeff" if rng.random() < 0.5 else ""
    for _ in range(rng.randint(1, 8)):
        fields = []
        if rng.random() < 0.3:
            fields.append(": keep-alive " + rng.choice(["", "x", "é"]))
        if rng.random() < 0.4:
            fields.append("event: " + rng.choice(["update", "ping", "ünï", ""]))
        if rng.random() < 0.4:
            fields.append("id: " + rng.choice(["1", "abc", "€", "", "a\0b"]))
        if rng.random() < 0.3:
            fields.append("retry: " + rng.choice(["10", "2500", "x1", ""]))
        for _ in range(rng.randint(1, 3)):
            value = rng.choice(["hello", "", " spaced", "😀 ünicode", "a:b"])
            fields.append(rng.choice(["data: ", "data:"]) + value if value else rng.choice(["data:", "data"]))
        if rng.random() < 0.2:
            fields.append("unknown: field")
        rng.shuffle(fields)
        ends = [rng.choice(["\n", "\r", "\r\n"]) for _ in fields]
        out += "".join(f + e for f, e in zip(fields, ends)) + rng.choice(["\n", "\r", "\r\n"])
    if rng.random() < 0.5:
        out += "data: never dispatched\n"
    return out.encode()


def test_sse_parser_matches_httpx_sse_on_identical_byte_streams(client, base_url):
    rng = random.Random(19)
    checked = 0
    for _ in range(25):
        body = random_stream(rng)
        for chunk in sorted({1, 2, 3, 5, 8, rng.randint(1, len(body)), len(body)}):
            want = oracle_events(body, chunk)
            got = list(client.iter_events(echo(base_url, body, chunk)))
            assert got == want, (body, chunk)
            checked += len(got)
    assert checked > 100


def test_sse_standard_cases_where_the_oracle_differs(client, base_url):
    # No data: no event (httpx-sse dispatches one); retry must be digits only; NUL in an id ignored.
    body = b"event: nodata\nid: 7\n\nretry: +5\ndata: a\n\nid: x\x00y\ndata: b\n\ndata\n\n:c\ndata: end"
    got = list(client.iter_events(echo(base_url, body, 1)))
    assert got == [hc.ServerSentEvent("message", "a", "7", None), hc.ServerSentEvent("message", "b", "7", None),
                   hc.ServerSentEvent("message", "", "7", None)]


def test_sse_comments_reach_the_keep_alive_hook_and_handler_counts(client, base_url):
    body = b": ping\n\ndata: x\n\n:pong\n"
    comments, events = [], []
    r = client.get(echo(base_url, body, 2), handler=hc.SSE(events.append, on_comment=comments.append))
    assert comments == [" ping", "pong"] and [e.data for e in events] == ["x"] and r.content == 1


def test_sse_reconnects_from_the_last_event_id_after_a_broken_stream(client, base_url):
    url = f"{base_url}/records/sse-resume?total=9&per=3&retry=20&mode=break"
    comments = []
    events = list(client.iter_events(url, reconnect=True, on_comment=comments.append))
    assert [e.id for e in events] == [str(i) for i in range(1, 10)]
    assert [e.data for e in events] == [f"event {i}" for i in range(1, 10)]
    assert comments == [" last-event-id=", " last-event-id=3", " last-event-id=6", ]
    # The 204 after the ninth event ended it; a clean end of each stream reconnects the same way.
    clean = list(client.iter_events(url.replace("break", "close"), reconnect=True))
    assert len(clean) == 9


def test_sse_without_reconnect_a_broken_stream_raises_after_its_events(client, base_url):
    url = f"{base_url}/records/sse-resume?total=9&per=3&mode=break"
    seen = []
    with pytest.raises(hc.TransportError):
        for event in client.iter_events(url):
            seen.append(event.id)
    assert seen == ["1", "2", "3"]


def test_sse_reconnects_are_bounded_and_errors_do_not_reconnect(client, base_url):
    url = f"{base_url}/records/sse-resume?total=100&per=1&retry=1&mode=close"
    assert len(list(client.iter_events(url, reconnect=True, max_reconnects=2))) == 3
    with pytest.raises(hc.UnacceptableStatus):
        list(client.iter_events(f"{base_url}/records/sse-status?status=503&ctype=text/event-stream", reconnect=True))
    with pytest.raises(hc.UnacceptableContentType):
        list(client.iter_events(f"{base_url}/records/sse-status?status=200&ctype=text/plain", reconnect=True))
    with pytest.raises(hc.TooLarge):
        list(client.iter_events(echo(base_url, b"data: " + b"x" * 300 + b"\n\n", 64), max_event_size=100))
    with pytest.raises(hc.TooLarge):
        list(client.iter_events(echo(base_url, b"data: " + b"x" * 300 + b"\n\n", 64), max_line_size=100))


def test_stopping_iteration_ends_a_reconnection_wait_at_once(client, base_url):
    url = f"{base_url}/records/sse-resume?total=100&per=1&retry=20000&mode=close"
    it = client.iter_events(url, reconnect=True, max_retry=60)
    assert next(it).id == "1"
    start = time.monotonic()
    it.close()
    assert time.monotonic() - start < 5


# -- aiter_events: on the event loop, no thread -----------------------------------------------

def client_threads():
    """The threads of this process but the in-process test server's (one per connection)."""
    import threading
    return {t for t in threading.enumerate() if "process_request" not in t.name}


def arun(coro):
    """Runs `coro`, checking that no thread (but the test server's) was started meanwhile."""
    before = client_threads()

    async def main():
        result = await coro
        assert client_threads() == before
        return result, asyncio.get_running_loop()._default_executor
    result, executor = asyncio.run(main())
    assert executor is None and client_threads() == before  # no asyncio.to_thread either
    return result


def test_aiter_events_reconnects_on_the_loop_with_no_thread(client, base_url):
    url = f"{base_url}/records/sse-resume?total=9&per=3&retry=20&mode=break"

    async def collect(**options):
        before, got = client_threads(), []
        async for event in client.aiter_events(url, **options):
            assert client_threads() == before   # while the stream runs, not only after
            got.append(event)
        return got
    comments = []
    events = arun(collect(reconnect=True, on_comment=comments.append))
    assert [e.id for e in events] == [str(i) for i in range(1, 10)]
    assert [e.data for e in events] == [f"event {i}" for i in range(1, 10)]
    assert events[0].retry is None and comments == [" last-event-id=", " last-event-id=3", " last-event-id=6"]
    assert len(arun(collect(reconnect=True, buffer=1))) == 9


def test_aiter_events_errors_and_bounds_as_iter_events(client, base_url):
    async def collect(url, **options):
        return [e.id async for e in client.aiter_events(url, **options)]

    async def seen_before_error(url, **options):
        seen = []
        with pytest.raises(hc.TransportError):
            async for event in client.aiter_events(url, **options):
                seen.append(event.id)
        return seen
    broken = f"{base_url}/records/sse-resume?total=9&per=3&retry=1&mode=break"
    assert arun(seen_before_error(broken)) == ["1", "2", "3"]
    # The last reconnection breaks too: its error is the outcome.
    assert arun(seen_before_error(broken, reconnect=True, max_reconnects=1)) == [str(i) for i in range(1, 7)]
    bounded = f"{base_url}/records/sse-resume?total=100&per=1&retry=1&mode=close"
    assert arun(collect(bounded, reconnect=True, max_reconnects=2)) == ["1", "2", "3"]
    with pytest.raises(hc.UnacceptableStatus):
        arun(collect(f"{base_url}/records/sse-status?status=503&ctype=text/event-stream", reconnect=True))
    with pytest.raises(hc.UnacceptableContentType):
        arun(collect(f"{base_url}/records/sse-status?status=200&ctype=text/plain", reconnect=True))
    with pytest.raises(hc.TooLarge):
        arun(collect(echo(base_url, b"data: " + b"x" * 300 + b"\n\n", 64), max_event_size=100))


def test_aiter_events_stops_reading_while_its_buffer_is_full(client, base_url, monkeypatch):
    import httpcontent.records as records
    pauses = []

    class Watched(records.LoopDriver):
        def pause(self):
            pauses.append(len(pauses))
            super().pause()
    monkeypatch.setattr(records, "LoopDriver", Watched)
    body = b"".join(b"id: %d\ndata: %s\n\n" % (i, b"x" * 100) for i in range(3000))

    async def slow():
        got = []
        async for event in client.aiter_events(f"{base_url}/records/echo?chunk=4096", method="POST",
                                               data=body, buffer=2):
            got.append(int(event.id))
            if len(got) % 500 == 0:
                await asyncio.sleep(0.02)
        return got
    assert arun(slow()) == list(range(3000))
    assert len(pauses) > 10   # the socket was left unread many times, yet nothing was lost


def test_cancelling_aiter_events_cancels_the_transfer_and_the_wait(client, base_url):

    async def cancel_after_first(url, **options):
        first = asyncio.Event()

        async def consume():
            async for _ in client.aiter_events(url, **options):
                first.set()
        task = asyncio.ensure_future(consume())
        await asyncio.wait_for(first.wait(), 10)
        await asyncio.sleep(0.2)
        start = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        took = time.monotonic() - start
        r = await client.arequest("GET", f"{base_url}/bytes/3")   # the client goes on serving
        assert r.content == bytes(range(3))
        return took
    # During a transfer that still has a minute to run, then during a 20 s reconnection wait.
    slow_stream = echo(base_url, b"".join(b"data: %d\n\n" % i for i in range(60)), 9) + "&delay=1"
    assert arun(cancel_after_first(slow_stream)) < 1
    waiting = f"{base_url}/records/sse-resume?total=100&per=1&retry=20000&mode=close"
    assert arun(cancel_after_first(waiting, reconnect=True, max_retry=60)) < 1
