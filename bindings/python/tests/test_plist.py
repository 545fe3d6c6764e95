"""Property lists from Python, with plistlib as the oracle: every type, both formats, both
directions; hostile documents refused with the right error."""

import datetime
import plistlib
import urllib.parse

import pytest

import httpcontent as hc

BINARY, XML = plistlib.FMT_BINARY, plistlib.FMT_XML


def echo(client, base_url, body, ctype="application/x-plist", **query):
    q = urllib.parse.urlencode({"ctype": ctype, **query})
    return client.post(f"{base_url}/plist?{q}", data=body, handler=hc.Plist())


def every_type():
    """Every plist type, the extremes of each, dates far before 1970 and after 2038."""
    return {
        "ints": [-(1 << 63), (1 << 63) - 1, (1 << 64) - 1, 1 << 63, -1, 0, 1, 255, 256, 65536, -(1 << 31)],
        "reals": [0.1, 1e-300, 1.2345678901234567, 3.0, -2.5, 1e300, 0.0],
        "bools": [True, False],
        "dates": [datetime.datetime(1900, 1, 1), datetime.datetime(1960, 5, 6, 7, 8, 9),
                  datetime.datetime(1969, 12, 31, 23, 59, 59), datetime.datetime(2001, 1, 1),
                  datetime.datetime(2038, 1, 19, 3, 14, 8), datetime.datetime(2050, 1, 2, 3, 4, 5),
                  datetime.datetime(2100, 1, 1), datetime.datetime(1, 1, 1), datetime.datetime(9999, 12, 31, 23, 59, 59)],
        "data": [b"", bytes(range(256)), b"\x00" * 1000],
        "strings": ["", "ascii", "héllo ☺ 𝄞 日本語", "<&>\"'", "tab\tline\nend", "x" * 300],
        "nested": [[[[{"a": [{"b": []}]}]]], {}, []],
        "ключ ☺": "unicode key",
    }


def with_fractions(doc):
    """The binary format keeps microseconds."""
    doc = dict(doc)
    doc["fractional"] = [datetime.datetime(2050, 1, 2, 3, 4, 5, 250000), datetime.datetime(1960, 1, 1, 0, 0, 0, 1),
                         datetime.datetime(2000, 12, 31, 23, 59, 59, 500000), datetime.datetime(2001, 1, 1, 0, 0, 0, 123456)]
    doc["uids"] = [plistlib.UID(0), plistlib.UID(42), plistlib.UID(300), plistlib.UID(2**32 - 1)]
    return doc


def assert_same(got, want):
    """Equal, and of the same types all the way down (True is not 1, 3.0 is not 3)."""
    assert got == want
    assert type(got) is type(want), (got, want)
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            assert_same(got[k], want[k])
    elif isinstance(want, list):
        for a, b in zip(got, want):
            assert_same(a, b)


@pytest.mark.parametrize("fmt,ctype", [(BINARY, "application/x-bplist"), (XML, "application/x-plist"),
                                       (XML, "text/xml"), (BINARY, "application/plist"), (XML, "application/xml")])
def test_content_equals_plistlib_loads_for_every_type(client, base_url, fmt, ctype):
    doc = with_fractions(every_type()) if fmt == BINARY else every_type()
    body = plistlib.dumps(doc, fmt=fmt, sort_keys=False)
    r = echo(client, base_url, body, ctype)
    assert_same(r.content, plistlib.loads(body))
    assert_same(r.content, doc)


def test_scalar_and_empty_roots(client, base_url):
    for fmt in (BINARY, XML):
        for doc in ["x", 5, -(1 << 63), (1 << 64) - 1, 2.5, 3.0, True, b"", [], {},
                    datetime.datetime(1900, 1, 1)]:
            body = plistlib.dumps(doc, fmt=fmt)
            assert_same(echo(client, base_url, body).content, plistlib.loads(body))


def test_big_unicode_nested_document(client, base_url):
    doc = {"items": [{"id": i, "name": f"item {i} ☺", "score": i * 1.25, "ok": i % 2 == 0,
                      "when": datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=i),
                      "blob": bytes([i % 256]) * 8, "tags": ["a", "b"], "neg": -i}
                     for i in range(20000)]}
    for fmt in (BINARY, XML):
        body = plistlib.dumps(doc, fmt=fmt)
        r = echo(client, base_url, body, chunked="1")
        assert r.content == plistlib.loads(body)


def test_binary_read_straight_equals_plistlib_and_the_tree_path(client, base_url):
    """Without a schema a binary plist is read straight into the pickle, no value tree: shared
    keys and strings past the 256 short memo slots, shared data, long strings and data, UTF-16
    with surrogate pairs, deep nesting, every type. Equal to plistlib and to the tree path (a
    handler with a schema accepting anything)."""
    keys = [f"k{i}" for i in range(600)]
    doc = with_fractions(every_type())
    doc["shared"] = [{k: k for k in keys} for _ in range(3)]
    doc["long"] = ["☺𝄞" * 200, "x" * 70000, b"\x01" * 300, b"\x02" * 70000]
    doc["blobs"] = [b"same"] * 5 + [b""] * 3
    deep: list = []
    for _ in range(100):
        deep = [{"k0": deep}, 1]
    doc["deep"] = deep
    body = plistlib.dumps(doc, fmt=BINARY, sort_keys=False)
    got = echo(client, base_url, body).content
    assert_same(got, plistlib.loads(body))
    with hc.Schema({}) as anything:
        tree = client.post(f"{base_url}/plist?ctype=application/x-bplist", data=body,
                           handler=hc.Plist(schema=anything)).content
    assert_same(got, tree)


@pytest.mark.parametrize("plist_format,fmt_name", [("xml", "application/x-plist"), ("binary", "application/x-bplist")])
def test_post_plist_bytes_on_the_wire_read_back_equal_by_plistlib(client, base_url, plist_format, fmt_name):
    doc = every_type() if plist_format == "xml" else with_fractions(every_type())
    r = client.post(f"{base_url}/echo/raw", plist=doc, plist_format=plist_format)
    assert r.headers["x-request-content-type"] == fmt_name
    body = r.content
    assert body.startswith(b"bplist00" if plist_format == "binary" else b"<?xml")
    assert_same(plistlib.loads(body), doc)


def test_post_plist_round_trips_through_the_handler(client, base_url):
    doc = with_fractions(every_type())
    r = client.post(f"{base_url}/plist?ctype=application/x-bplist", plist=doc, plist_format="binary",
                    handler=hc.Plist())
    assert_same(r.content, doc)


def test_post_plist_aware_datetime_is_converted_to_utc(client, base_url):
    aware = datetime.datetime(2020, 1, 1, 12, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    r = client.post(f"{base_url}/echo/raw", plist=[aware], plist_format="binary")
    assert plistlib.loads(r.content) == [datetime.datetime(2020, 1, 1, 10, 0)]


def test_post_plist_refuses_what_plists_cannot_hold(client, base_url):
    for bad, exc in [({"a": None}, TypeError), ({1: "x"}, TypeError), ([1 << 64], OverflowError),
                     ("a\x00b", hc.InvalidArgument), ({"x": set()}, TypeError)]:
        with pytest.raises(exc):
            client.post(f"{base_url}/echo/raw", plist=bad, plist_format="binary")
    with pytest.raises(hc.InvalidArgument):
        client.post(f"{base_url}/echo/raw", plist=["bell\x07"], plist_format="xml")
    with pytest.raises(hc.InvalidArgument):
        client.post(f"{base_url}/echo/raw", plist=[1], plist_format="json")
    with pytest.raises(hc.InvalidArgument):
        client.post(f"{base_url}/echo/raw", plist=[1], json=[1])
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError):
        client.post(f"{base_url}/echo/raw", plist=loop)


def test_malformed_plist_is_a_decode_error_with_the_body(client, base_url):
    bad = b"<plist><dict><key>a</key></plist>"
    with pytest.raises(hc.DecodeError) as e:
        echo(client, base_url, bad)
    assert e.value.body == bad
    with pytest.raises(hc.DecodeError):
        echo(client, base_url, b"bplist00" + b"\x00" * 10)
    with pytest.raises(hc.DecodeError):
        echo(client, base_url, b"")


def test_empty_bodies(client, base_url):
    assert client.post(f"{base_url}/plist", data=b"", handler=hc.Plist(allow_empty=True)).content is None
    r = client.post(f"{base_url}/plist?status=204", data=b"", handler=hc.Plist(accept_types=[]))
    assert r.content is None


def test_acceptance(client, base_url):
    body = plistlib.dumps([1])
    with pytest.raises(hc.UnacceptableContentType):
        echo(client, base_url, body, "application/json")
    with pytest.raises(hc.UnacceptableStatus):
        echo(client, base_url, body, status="500")
    r = client.post(f"{base_url}/plist?ctype=application/json", data=body, handler=hc.Plist(accept_types=["*/*"]))
    assert r.content == [1]


def test_deep_nesting_is_a_decode_error(client, base_url):
    depth = 100_000
    xml = b"<plist>" + b"<array>" * depth + b"</array>" * depth + b"</plist>"
    with pytest.raises(hc.DecodeError, match="depth"):
        echo(client, base_url, xml)
    ok = plistlib.dumps(eval("[" * 40 + "]" * 40), fmt=BINARY)
    assert echo(client, base_url, ok).content == eval("[" * 40 + "]" * 40)
    with pytest.raises(hc.DecodeError, match="depth"):
        client.post(f"{base_url}/plist", data=ok, handler=hc.Plist(max_depth=10))


def _shared_reference_bomb(levels=40, fanout=5):
    """`levels` arrays, each `fanout` references to the next: fanout**levels values expanded."""
    objects = [bytes([0xA0 | fanout]) + bytes([i + 1]) * fanout for i in range(levels)] + [b"\x10\x07"]
    out, offsets = bytearray(b"bplist00"), []
    for o in objects:
        offsets.append(len(out))
        out += o
    table = len(out)
    out += bytes(offsets)
    out += bytes(6) + bytes([1, 1]) + len(objects).to_bytes(8, "big") + bytes(8) + table.to_bytes(8, "big")
    return bytes(out)


def test_huge_counts_are_too_large(client, base_url):
    bomb = _shared_reference_bomb()
    assert len(bomb) < 1000
    with pytest.raises(hc.TooLarge):
        echo(client, base_url, bomb)
    many = plistlib.dumps([True] * 1000, fmt=BINARY)
    with pytest.raises(hc.TooLarge):
        client.post(f"{base_url}/plist", data=many, handler=hc.Plist(max_objects=500))
    with pytest.raises(hc.TooLarge):
        client.post(f"{base_url}/plist", data=many, handler=hc.Plist(max_size=100))


def test_entities_are_never_resolved(client, base_url):
    hits_before = client.get(f"{base_url}/plist/canary?count=1", handler=hc.JSON()).content["hits"]
    doc = (f'<?xml version="1.0"?><!DOCTYPE plist [<!ENTITY x SYSTEM "{base_url}/plist/canary">]>'
           '<plist><string>&x;</string></plist>').encode()
    with pytest.raises(hc.DecodeError):
        echo(client, base_url, doc)
    laughs = (b'<?xml version="1.0"?><!DOCTYPE plist [<!ENTITY a "aaaaaaaaaa">'
              b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
              b'<plist><string>&c;&c;&c;&c;</string></plist>')
    with pytest.raises(hc.DecodeError):
        echo(client, base_url, laughs)
    hits_after = client.get(f"{base_url}/plist/canary?count=1", handler=hc.JSON()).content["hits"]
    assert hits_after == hits_before
