"""JSON from Python: whole documents to Python objects, path streaming, errors with offsets."""

import decimal
import gc
import json
import os
import resource
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


def test_malformed_document_reports_the_byte_offset(client, base_url):
    with pytest.raises(hc.DecodeError) as info:
        client.get(doc_url(base_url, '{"a": [1, 2,, 3]}'), handler=hc.JSON())
    assert info.value.offset == 12  # the second comma
    assert "byte 12" in str(info.value)
    assert info.value.body.startswith(b'{"a": [1, 2,')


@pytest.mark.parametrize("body", [b'[1, 2', b'{"a": 1} x', b'{"a": "\xff"}', b"// c\n[1]", b"\x0c[1]",
                                  b"[" + b"1" * 400 + b"]"])
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
