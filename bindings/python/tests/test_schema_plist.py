"""Schemas on property lists: hc.Plist(schema=...), plist= request bodies with schema=, schemas
written as plist files. A plist date is a string holding its RFC 3339 date-time (so "format":
"date-time" matches it), data a string holding its base64 text, and in a plist "contentEncoding":
"base64" asserts data. Verdicts on the same documents seen as JSON are checked against the
jsonschema package."""

import base64
import datetime as dt
import json
import plistlib
import socket
import uuid

import jsonschema
import pytest

import httpcontent as hc

SCHEMA = {
    "type": "object",
    "required": ["when", "blob"],
    "properties": {
        "when": {"type": "string", "format": "date-time"},
        "blob": {"type": "string", "contentEncoding": "base64", "maxLength": 12},
        "id": {"type": "string", "format": "uuid"},
        "n": {"type": "integer", "maximum": 9},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}

WHEN = dt.datetime(2024, 5, 1, 12, 0, 0)
GOOD = {"when": WHEN, "blob": b"hello", "id": "00000000-0000-0000-0000-000000000001", "n": 3, "tags": ["a"]}


def _url(base_url, doc, fmt=plistlib.FMT_XML):
    return f"{base_url}/plist?hex={plistlib.dumps(doc, fmt=fmt).hex()}"


def _as_json(v):
    """A plist as the validator sees it (the oracle's input)."""
    if isinstance(v, dict):
        return {k: _as_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_as_json(x) for x in v]
    if isinstance(v, dt.datetime):
        return v.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(v, bytes):
        return base64.b64encode(v).decode()
    return v


@pytest.fixture(params=["dict", "xml file", "binary file"])
def schema(request, tmp_path):
    """The same schema given as a dict and as plist files, with format asserted."""
    if request.param == "dict":
        s = hc.Schema(SCHEMA, assert_format=True)
    else:
        path = tmp_path / "schema.plist"
        path.write_bytes(plistlib.dumps(SCHEMA, fmt=plistlib.FMT_XML if request.param == "xml file"
                                        else plistlib.FMT_BINARY))
        s = hc.Schema(path, assert_format=True)
        assert s.document == SCHEMA
    with s:
        yield s


@pytest.mark.parametrize("fmt", [plistlib.FMT_XML, plistlib.FMT_BINARY])
def test_plist_response_is_validated_and_transformed(client, base_url, schema, fmt):
    value = client.get(_url(base_url, GOOD, fmt), handler=hc.Plist(schema=schema)).content
    # A date under date-time comes back aware (UTC); a uuid string as uuid.UUID; data as bytes.
    assert value["when"] == WHEN.replace(tzinfo=dt.timezone.utc)
    assert value["id"] == uuid.UUID(int=1)
    assert value["blob"] == b"hello" and value["n"] == 3
    # Without a schema, plistlib's content exactly.
    assert client.get(_url(base_url, GOOD, fmt), handler=hc.Plist()).content == GOOD


@pytest.mark.parametrize("change,pointer,keyword", [
    ({"blob": "aGVsbG8="}, "/blob", "contentEncoding"),   # a string where data is expected
    ({"when": "yesterday"}, "/when", "format"),            # not a date-time
    ({"when": b"\x01"}, "/when", "format"),                # data is its base64 text: not a date-time
    ({"when": 5}, "/when", "type"),
    ({"blob": b"x" * 10}, "/blob", "maxLength"),           # 16 base64 characters
    ({"n": 10}, "/n", "maximum"),
    ({"tags": ["a", WHEN]}, None, None),                    # a date is a string: valid
    ({"tags": ["a", b"\x00"]}, None, None),                 # data is a string: valid
])
def test_plist_violations_name_the_place(client, base_url, schema, change, pointer, keyword):
    doc = {**GOOD, **change}
    handler = hc.Plist(schema=schema)
    if pointer is None:
        assert client.get(_url(base_url, doc), handler=handler).content["tags"][0] == "a"
        return
    with pytest.raises(hc.SchemaError) as info:
        client.get(_url(base_url, doc), handler=handler)
    err = info.value
    assert isinstance(err, hc.DecodeError)
    assert (err.instance_path, err.keyword) == (pointer, keyword)
    assert err.status == 200 and err.body.startswith(b"<?xml")


def test_all_errors_on_a_plist_response(client, base_url, schema):
    doc = {"when": "x", "blob": "y", "n": 99}
    with pytest.raises(hc.SchemaError) as info:
        client.get(_url(base_url, doc), handler=hc.Plist(schema=schema, all_errors=True))
    found = {(e["instance_path"], e["keyword"]) for e in info.value.errors}
    assert found == {("/when", "format"), ("/blob", "contentEncoding"), ("/n", "maximum")}


@pytest.mark.parametrize("doc", [
    GOOD, {**GOOD, "n": 10}, {**GOOD, "when": 3}, {"blob": b""}, {**GOOD, "tags": [1]},
    {**GOOD, "when": dt.datetime(1969, 12, 31, 23, 59, 59)}, {**GOOD, "extra": [WHEN, b"\xff"]},
])
def test_verdicts_agree_with_jsonschema_on_the_json_view(client, base_url, doc):
    """Without contentEncoding (an annotation to jsonschema), the plist verdict is the
    jsonschema package's on the document seen as JSON."""
    plain = json.loads(json.dumps(SCHEMA))
    del plain["properties"]["blob"]["contentEncoding"]
    expected = jsonschema.Draft202012Validator(
        plain, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).is_valid(_as_json(doc))
    with hc.Schema(plain, assert_format=True) as s:
        try:
            client.get(_url(base_url, doc), handler=hc.Plist(schema=s))
            got = True
        except hc.SchemaError:
            got = False
    assert got == expected


def test_plist_request_body_is_validated_before_anything_is_sent(client, base_url, schema):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.3)
        port = listener.getsockname()[1]
        with pytest.raises(hc.RequestSchemaError) as info:
            client.post(f"http://127.0.0.1:{port}/x", plist={"when": WHEN, "blob": "not data"}, schema=schema)
        with pytest.raises(socket.timeout):
            listener.accept()  # nothing was sent: no connection was even made
    err = info.value
    assert isinstance(err, hc.InvalidArgument)
    assert (err.instance_path, err.keyword) == ("/blob", "contentEncoding")
    # Valid: typed values written back as text by the transformers (uuid.UUID -> its string).
    aware = dt.datetime(2024, 5, 1, 14, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    for fmt in ("xml", "binary"):
        r = client.post(f"{base_url}/echo/raw", plist={"when": aware, "blob": b"hi", "id": uuid.UUID(int=1)},
                        plist_format=fmt, schema=schema)
        assert plistlib.loads(r.content) == {"when": WHEN, "blob": b"hi", "id": "00000000-0000-0000-0000-000000000001"}
    with pytest.raises(hc.InvalidArgument):
        client.post(f"{base_url}/echo/raw", data=b"x", schema=schema)


def test_bad_plist_schema_files(tmp_path):
    bad = tmp_path / "bad.plist"
    bad.write_bytes(plistlib.dumps({"type": "nope"}))
    with pytest.raises(hc.InvalidArgument):
        hc.Schema(bad)
    broken = tmp_path / "broken.plist"
    broken.write_bytes(b"<plist><dict><key>type</key></plist>")
    with pytest.raises(Exception):
        hc.Schema(broken)
