"""JSON from Python: whole documents to Python objects, path streaming, errors with offsets."""

import decimal
import gc
import json
import os
import resource
import signal
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

import httpcontent as hc

SUITE = Path(__file__).resolve().parents[3].parent / "shared" / "conformance" / "JSONTestSuite" / "test_parsing"


def doc_url(base_url, text, ctype=None):
    url = f"{base_url}/json?doc={urllib.parse.quote(text)}"
    return url + (f"&ctype={urllib.parse.quote(ctype)}" if ctype else "")


def test_document_becomes_plain_python_objects(client, base_url):
    doc = {"user": {"name": "Zoë", "followers": [{"name": "a"}, {"name": "b"}]}, "n": 12345678901234,
           "f": 1.5, "t": True, "z": None, "s": "a\u0000b"}
    assert client.get(doc_url(base_url, json.dumps(doc)), handler=hc.JSON()).content == doc


def test_remove_nulls_at_every_depth_including_inside_arrays(client, base_url):
    text = json.dumps({"a": None, "b": [1, {"c": None, "d": 2}], "e": {"f": None}})
    r = client.get(doc_url(base_url, text), handler=hc.JSON(remove_nulls=True))
    assert r.content == {"b": [1, {"d": 2}], "e": {}}


def test_keep_number_text_loses_no_precision(client, base_url):
    text = '{"big": 123456789012345678901234567890, "x": 0.1000000000000000055511151231257827}'
    r = client.get(doc_url(base_url, text), handler=hc.JSON(keep_number_text=True))
    assert r.content["big"] == 123456789012345678901234567890
    assert r.content["x"] == decimal.Decimal("0.1000000000000000055511151231257827")


def test_integers_beyond_64_bits_come_back_exact_as_json_loads_gives(client, base_url):
    text = ('{"big": 123456789012345678901234567890, "neg": -98765432109876543210987, '
            '"edge": [9223372036854775807, 9223372036854775808, -9223372036854775809], "f": 1.5e300}')
    got = client.get(doc_url(base_url, text), handler=hc.JSON()).content
    assert repr(got) == repr(json.loads(text))
    assert type(got["big"]) is int and got["big"] == 123456789012345678901234567890
    assert client.get(doc_url(base_url, "18446744073709551616"), handler=hc.JSON()).content == 2 ** 64
    long = "[" + "1" * 4300 + "]"  # Python's limit for int(): longer ones are refused, as json.loads does
    assert client.post(f"{base_url}/echo/raw", data=long.encode(), handler=hc.JSON(accept_types=[])).content == json.loads(long)


def test_malformed_document_reports_the_byte_offset(client, base_url):
    with pytest.raises(hc.DecodeError) as info:
        client.get(doc_url(base_url, '{"a": [1, 2,, 3]}'), handler=hc.JSON())
    assert info.value.offset == 12  # the second comma
    assert "byte 12" in str(info.value)
    assert info.value.body.startswith(b'{"a": [1, 2,')


@pytest.mark.parametrize("body", [b'[1, 2', b'{"a": 1} x', b'{"a": "\xff"}', b"// c\n[1]", b"\x0c[1]",
                                  b"[" + b"1" * 4301 + b"]"])
def test_bad_documents_are_decode_errors(client, base_url, body):
    with pytest.raises(hc.DecodeError):
        client.post(f"{base_url}/echo/raw", data=body, handler=hc.JSON(accept_types=[]))


def test_comments_when_allowed(client, base_url):
    assert client.get(doc_url(base_url, "/* c */ [1]"), handler=hc.JSON(allow_comments=True)).content == [1]


def test_deep_nesting_is_a_clear_error(client, base_url):
    with pytest.raises(hc.DecodeError, match="depth"):
        client.post(f"{base_url}/echo/raw", data=b"[" * 100_000, handler=hc.JSON(accept_types=[]))
    assert client.get(doc_url(base_url, "[" * 10 + "]" * 10), handler=hc.JSON(max_depth=10)).content


def test_empty_bodies(client, base_url):
    assert client.get(f"{base_url}/status/204", handler=hc.JSON()).content is None
    with pytest.raises(hc.DecodeError):
        client.get(doc_url(base_url, ""), handler=hc.JSON())
    assert client.get(doc_url(base_url, ""), handler=hc.JSON(allow_empty=True)).content is None


def test_content_types(client, base_url):
    assert client.get(doc_url(base_url, "[1]", "application/problem+json"), handler=hc.JSON()).content == [1]
    with pytest.raises(hc.UnacceptableContentType):
        client.get(doc_url(base_url, "[1]", "text/html"), handler=hc.JSON())


def test_server_message_from_a_json_error_document(client, base_url):
    with pytest.raises(hc.UnacceptableStatus) as info:
        client.get(f"{base_url}/status/401?json=1&message=Token%20expired", handler=hc.JSON())
    assert info.value.server_message == "Token expired"
    assert str(info.value) == "HTTP 401 Unauthorized: Token expired"


def test_multiple_values_ndjson(client, base_url):
    h = hc.JSON(multiple_values=True, accept_types=["application/x-ndjson"])
    assert client.get(f"{base_url}/ndjson?n=3", handler=h).content == [{"i": 0}, {"i": 1}, {"i": 2}]


def test_items_handler_delivers_each_value(client, base_url):
    seen = []
    r = client.get(f"{base_url}/big-json-array?n=5000", handler=hc.JSONItems("item", seen.append))
    assert r.content == 5000 and [v["id"] for v in seen] == list(range(5000))


def test_items_stop_early_and_limits(client, base_url):
    seen = []
    r = client.get(f"{base_url}/big-json-array?n=100000",
                   handler=hc.JSONItems("item", lambda v: seen.append(v) or len(seen) >= 10))
    assert 10 <= r.content < 100000 and len(seen) == 10
    r = client.get(f"{base_url}/big-json-array?n=100000", handler=hc.JSONItems("item", lambda v: None, limit=7))
    assert r.content == 7


def test_items_prefix_that_never_appears(client, base_url):
    with pytest.raises(hc.DecodeError):
        client.get(f"{base_url}/big-json-array?n=10",
                   handler=hc.JSONItems("results.item", lambda v: None, require_prefix=True))


def test_items_callback_exception_surfaces(client, base_url):
    def explode(_value):
        raise LookupError("stop")

    with pytest.raises(LookupError):
        client.get(f"{base_url}/big-json-array?n=10", handler=hc.JSONItems("item", explode))


def test_iter_json_yields_while_downloading_in_bounded_memory(client, base_url):
    assert sum(1 for _ in client.iter_json(f"{base_url}/big-json-array?n=20000", "item")) == 20000
    it = client.iter_json(f"{base_url}/big-json-array?n=1000000", "item")
    assert next(it)["id"] == 0
    it.close()  # stops the transfer
    gc.collect()


def test_iter_json_raises_the_transfer_error(client, base_url):
    with pytest.raises(hc.UnacceptableStatus):
        list(client.iter_json(f"{base_url}/status/500", "item"))


def test_iter_json_runs_on_the_callers_thread_and_stopping_stops_reading(client, base_url):
    # The transfer is stepped between the values taken (no worker thread), so leaving early
    # leaves the rest of a large body unread.
    received = [0]
    threads = set()

    def progress(info):
        received[0] = info["received"]
        threads.add(threading.get_ident())

    it = client.iter_json(f"{base_url}/big-json-array?n=1000000", "item", progress=progress)
    for i, value in enumerate(it):
        assert value["id"] == i
        if i == 1000:
            break
    it.close()
    assert threads == {threading.get_ident()}   # the transfer ran here
    seen = received[0]
    assert 0 < seen < 8 * 1024 * 1024   # of a body over 30 MB
    time.sleep(0.2)
    assert received[0] == seen           # nothing more was read once closed


def test_iter_json_yields_the_values_before_a_parse_error_then_raises_it(client, base_url):
    got = []
    with pytest.raises(hc.DecodeError):
        for value in client.iter_json(doc_url(base_url, "[1, 2, {\"a\": 3}, tru]"), "item"):
            got.append(value)
    assert got == [1, 2, {"a": 3}][:len(got)]


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_an_exception_from_a_signal_handler_during_iter_json_is_raised_not_lost(client, base_url):
    # The transfer runs on this (the main) thread, so a signal's handler may run inside one of
    # its callbacks, even at its first instruction: its exception must still end the loop (as
    # Ctrl-C's KeyboardInterrupt must), not be printed and dropped by ctypes.
    class Alarm(Exception):
        pass

    def ring(_signum, _frame):
        raise Alarm()

    previous = signal.signal(signal.SIGALRM, ring)
    try:
        for delay in (0.001, 0.002, 0.003, 0.005, 0.007, 0.01, 0.015, 0.02, 0.03, 0.05):
            count = 0
            it = client.iter_json(f"{base_url}/big-json-array?n=2000000", "item")
            assert next(it)["id"] == 0   # streaming (setup code, finalizers included, is done)
            try:
                with pytest.raises(Alarm):
                    signal.setitimer(signal.ITIMER_REAL, delay)
                    for _ in it:
                        count += 1
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            assert count < 2000000
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_iter_json_honours_the_request_timeout(client, base_url):
    start = time.monotonic()
    with pytest.raises(hc.Timeout):
        list(client.iter_json(f"{base_url}/stall?bytes=100", "item", timeout=0.5))
    assert time.monotonic() - start < 10


@pytest.mark.skipif(not SUITE.is_dir(), reason="../shared/conformance/JSONTestSuite is not beside the checkout")
def test_json_test_suite_through_the_python_front(client, base_url):
    h = hc.JSON(accept_types=[])
    wrong = []
    for path in sorted(SUITE.glob("[yn]_*.json")):
        try:
            client.post(f"{base_url}/echo/raw", data=path.read_bytes(), handler=h)
            ok = path.name.startswith("y_")
        except hc.DecodeError:
            ok = path.name.startswith("n_")
        except hc.Error as exc:
            ok = False
            wrong.append(f"{path.name}: {exc}")
            continue
        if not ok:
            wrong.append(path.name)
    assert wrong == []


# hc.JSON() without keep_number_text writes Python's marshal format straight from the parse; it
# must give exactly what the tree (hc_json_parse + hc_json_serialize + json.loads) gives, numbers
# read from their text as json.loads reads them (the tree keeps the texts for the reference).
_DIFF_DOCS = [
    '{"a": 1, "b": [1, 2.5, -0.0, 1e300, true, false, null], "a": 3, "k": {}, "l": []}',
    '{"min": -9223372036854775808, "max": 9223372036854775807, "over": 9223372036854775808}',
    '{"i32": 2147483647, "o32": 2147483648, "n32": -2147483648, "u": -2147483649, "e": 1E2, "f": 0.1}',
    '[12345678901234567890123, -1e-400, 123.456e-789, 5e-324, 1.7976931348623157e308]',
    '{"s": "h\\u00e9llo \\u0000 \\ud83d\\ude00", "long": "' + "x" * 300 + '", "": ""}',
    '{"' + "k" * 17 + '": 1, "' + "k" * 17 + '": 2, "same": {"same": {"same": null}}}',
    '[{"id": 1, "v": null, "n": {"v": null}}, {"id": 2, "v": null}, null, [null]]',
    '"text"', '1', '-0', 'null', 'true', '[]', '{}', '[[[[[[]]]]]]',
    '{"a": null, "b": null}', '{"x": [1, {"y": null, "z": [null, {"w": null}]}]}',
]
_DIFF_OPTIONS = [{}, {"remove_nulls": True}, {"strict_utf8": False}, {"allow_comments": True}]


def _tree_reference(text: bytes, options: dict):
    import ctypes
    from httpcontent import _ffi, json as jsoncontent
    lib = _ffi.lib()
    lib.hc_json_parse.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p,
                                  ctypes.POINTER(ctypes.c_void_p)]
    lib.hc_json_free.argtypes = [ctypes.c_void_p]
    with jsoncontent._Options(**options, keep_number_text=True) as opts:
        root = ctypes.c_void_p()
        if lib.hc_json_parse(text, len(text), opts, ctypes.byref(root)) != 0:
            return "error"
    try:
        out, size = ctypes.c_void_p(), ctypes.c_size_t()
        if lib.hc_json_serialize(root, 0, ctypes.byref(out), ctypes.byref(size)) != 0:
            return "too deep"
        try:
            return json.loads(ctypes.string_at(out, size.value))
        finally:
            lib.hc_buffer_free(out)
    finally:
        lib.hc_json_free(root)


def _marshal_path(client, base_url, text: bytes, options: dict):
    url = f"{base_url}/json?doc={urllib.parse.quote(text)}"
    try:
        return client.get(url, handler=hc.JSON(**options)).content
    except hc.DecodeError:
        return "error"


def _diff_cases():
    docs = [d.encode() for d in _DIFF_DOCS]
    if SUITE.is_dir():
        docs += [p.read_bytes() for p in sorted(SUITE.glob("y_*.json"))]
        docs += [p.read_bytes() for p in sorted(SUITE.glob("i_*.json"))]
    # The test server reads the document from the query as text: valid UTF-8 only.
    def utf8(d):
        try:
            d.decode("utf-8")
            return True
        except UnicodeDecodeError:
            return False
    return [d for d in docs if utf8(d)]


def test_marshal_path_equals_the_tree_path(client, base_url):
    checked = 0
    for text in _diff_cases():
        for options in _DIFF_OPTIONS:
            want = _tree_reference(text, options)
            if want == "too deep":
                continue
            got = _marshal_path(client, base_url, text, options)
            assert repr(got) == repr(want), (text[:80], options)
            checked += 1
    assert checked > 40


def test_marshal_path_multiple_values_and_empty(client, base_url):
    text = b'{"a": 1}\n[2, null]\n"x"\n'
    assert _marshal_path(client, base_url, text, {"multiple_values": True}) == [{"a": 1}, [2, None], "x"]
    assert _marshal_path(client, base_url, b"", {"multiple_values": True, "allow_empty": True}) is None
    assert _marshal_path(client, base_url, b" ", {"multiple_values": True}) == []
    assert _marshal_path(client, base_url, b'{"a": 1} x', {}) == "error"


def test_items_batches_give_what_json_loads_gives(client, base_url):
    # The batches cross in marshal's format; the values must be json.loads's, numbers included.
    texts = [
        '[12345678901234567890123, -98765432109876543210, 1e400, -1e400, -0, -0.0, 0.1, 1E2, 5e-324]',
        '[9223372036854775807, 9223372036854775808, -9223372036854775808, -9223372036854775809]',
        '[2147483647, 2147483648, -2147483648, -2147483649, 1' + '0' * 400 + ']',
        '[{"a": {"b": [1, "x", null, true]}, "a": 2}, "h\\u00e9", [], {}, {"k": {"k": {"k": 1}}}]',
    ]
    for text in texts:
        seen = []
        client.get(doc_url(base_url, text), handler=hc.JSONItems("item", seen.append))
        assert repr(seen) == repr(json.loads(text)), text
        assert repr(list(client.iter_json(doc_url(base_url, text), "item"))) == repr(json.loads(text))
