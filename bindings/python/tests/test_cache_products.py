"""The HTTP cache's product cache from Python: `hc.JSON()` keeps its marshal bytes beside a
stored body (the `products` rows of the SQLite file), and a later hit is those bytes read back
instead of the body parsed again. What a hit gives must be what a replay of the body gives."""

import ast
import json
import subprocess
import sys
import uuid
from urllib.parse import quote

import pytest

import httpcontent as hc

DOCUMENTS = [
    '{"a": [1, 2, 3], "b": {"c": null, "d": true, "e": false}}',
    '[]', '{}', '""', '0', '-0', '-0.0', 'null', 'true',
    '"caf\\u00e9 \\ud83d\\ude00 \\u0000 tab\\t nl\\n quote\\" slash\\\\"',
    '{"\u00e9t\u00e9": "\u65e5\u672c\u8a9e", "emoji": "\U0001F600", "mixed": ["\u00ff", "\u0100", "\U00010000"]}',
    '[1.5, -2.25e-7, 1e308, 5e-324, 2.2250738585072014e-308, 0.1, 1E+2, 123456789.123456789]',
    '[9223372036854775807, -9223372036854775808, 9223372036854775808, 1180591620717411303424, '
    '-340282366920938463463374607431768211456, 2147483647, -2147483649]',
    '{"k": 1, "k": 2, "other": [{"k": 3}, {"k": 4}]}',
    '[' * 300 + '1' + ']' * 300,
    '{"a":' * 200 + '"deep"' + '}' * 200,
    json.dumps([{"id": i, "name": f"item {i}", "score": i / 7, "tags": ["x", "y"]} for i in range(150)]),
]


def _url(base, key, body, *fields):
    parts = [f"h={quote(f, safe='')}" for f in ("Cache-Control: max-age=600",) + fields]
    parts += [f"body={quote(body, safe='')}", "type=application/json"]
    return f"{base}/cached/{key}?" + "&".join(parts)


_QUERY = ("import ast, sqlite3, sys; p, q, a = ast.literal_eval(sys.stdin.read()); "
          "c = sqlite3.connect(p, timeout=10, isolation_level=None); print(repr(c.execute(q, a).fetchall())); c.close()")


class _Rows(list):  # type: ignore[type-arg]
    def fetchall(self) -> list:  # type: ignore[type-arg]
        return list(self)

    def fetchone(self):  # type: ignore[no-untyped-def]
        return self[0] if self else None


class _Db:
    """The cache's database, read and written from another process. The installed wheel carries
    its own SQLite, and two copies of SQLite in one process drop each other's POSIX locks
    (closing a file in one releases the other's): this process's sqlite3 must not open a file the
    library has open."""

    def __init__(self, path) -> None:  # type: ignore[no-untyped-def]
        self.path = str(path)

    def __enter__(self) -> "_Db":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, sql: str, params: tuple = ()) -> _Rows:  # type: ignore[type-arg]
        out = subprocess.run([sys.executable, "-c", _QUERY], input=repr((self.path, sql, tuple(params))),
                             capture_output=True, text=True, check=True, timeout=60).stdout
        return _Rows(ast.literal_eval(out))


def _db(path) -> _Db:  # type: ignore[no-untyped-def]
    return _Db(path)


def _products(path, key):
    """(entry id, fingerprint, size) of the products of the live entries whose URL holds key."""
    with _db(path) as db:
        return db.execute("SELECT p.entry, p.fingerprint, p.size FROM products p JOIN entries e ON e.id = p.entry "
                          "WHERE e.done = 1 AND e.url LIKE ?", (f"%{key}%",)).fetchall()


def _same(a, b):
    """Equal as json.loads results, types included (1 is not 1.0, -0.0 is not 0.0)."""
    return type(a) is type(b) and repr(a) == repr(b)


@pytest.mark.parametrize("text", DOCUMENTS)
def test_a_product_hit_gives_what_a_replay_gives(base_url, tmp_path, text):
    path = tmp_path / "c.sqlite"
    key = uuid.uuid4().hex
    url = _url(base_url, key, text)
    expected = json.loads(text)
    with hc.Client(cache=hc.Cache(path)) as client:
        assert client.get(url).cache_status == "miss"  # bytes: stored, no product
        assert _products(path, key) == []
        replayed = client.get(url, handler=hc.JSON())  # the body replayed through yajl
        assert replayed.cache_status == "hit"
        assert len(_products(path, key)) == 1
        product = client.get(url, handler=hc.JSON())
        assert product.cache_status == "hit"
        assert _same(replayed.content, expected) and _same(product.content, expected)
        assert product.headers.get("content-type") == replayed.headers.get("content-type")


def test_a_miss_stores_the_product_and_a_hit_reads_it_not_the_body(base_url, tmp_path):
    path = tmp_path / "c.sqlite"
    key = uuid.uuid4().hex
    text = DOCUMENTS[0]
    url = _url(base_url, key, text)
    with hc.Client(cache=hc.Cache(path)) as client:
        assert client.get(url, handler=hc.JSON()).cache_status == "miss"
        [(entry, fingerprint, size)] = _products(path, key)
        assert fingerprint.startswith("json-pymarshal/") and size > 0
        assert hc.Cache(path).size == len(text) + size  # products count against max_bytes
        # The stored body spoilt (same length): only the product can still give the document.
        with _db(path) as db:
            db.execute("UPDATE chunks SET data = zeroblob(length(data)) WHERE entry = ?", (entry,))
        r = client.get(url, handler=hc.JSON())
        assert (r.cache_status, r.content) == ("hit", json.loads(text))
        # Other settings, another product: this one replays the spoilt body and fails.
        with pytest.raises(hc.DecodeError):
            client.get(url, handler=hc.JSON(remove_nulls=True))


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "garbage"])
def test_a_damaged_product_falls_back_to_the_body(base_url, tmp_path, damage):
    path = tmp_path / "c.sqlite"
    key = uuid.uuid4().hex
    text = DOCUMENTS[12]
    url = _url(base_url, key, text)
    spoil = {"flip": lambda b: b[:100] + bytes([b[100] ^ 0x01]) + b[101:],
             "truncate": lambda b: b[:-1],
             "empty": lambda b: b"",
             "garbage": lambda b: bytes(range(256)) * (len(b) // 256)}[damage]
    with hc.Client(cache=hc.Cache(path)) as client:
        client.get(url, handler=hc.JSON())
        with _db(path) as db:
            [(data,)] = db.execute("SELECT data FROM products").fetchall()
            db.execute("UPDATE products SET data = ?", (spoil(data),))
        r = client.get(url, handler=hc.JSON())
        assert r.cache_status == "hit" and _same(r.content, json.loads(text))
        assert len(_products(path, key)) == 1  # dropped, then kept again from the replay
        assert _same(client.get(url, handler=hc.JSON()).content, json.loads(text))


def test_products_go_with_their_entry(base_url, tmp_path):
    path = tmp_path / "c.sqlite"
    text = DOCUMENTS[12]
    keys = [uuid.uuid4().hex for _ in range(3)]
    with hc.Client(cache=hc.Cache(path)) as client:
        client.get(_url(base_url, keys[0], text), handler=hc.JSON())
        [(_, _, product)] = _products(path, keys[0])
    one = len(text) + product
    with hc.Client(cache=hc.Cache(path, max_bytes=one * 2 + 10)) as client:
        # Eviction: a third entry pushes the least recently used one out, product and all.
        client.get(_url(base_url, keys[1], text), handler=hc.JSON())
        client.get(_url(base_url, keys[2], text), handler=hc.JSON())
        assert _products(path, keys[0]) == [] and len(_products(path, keys[2])) == 1
        assert hc.Cache(path).size <= one * 2 + 10
        # Invalidation: an unsafe method on the URL removes the entry and its product.
        url = _url(base_url, keys[2], text)
        client.post(url, data=b"x")
        assert _products(path, keys[2]) == []
        assert client.get(url, handler=hc.JSON()).cache_status == "miss"
    with _db(path) as db:
        orphans = db.execute("SELECT count(*) FROM products WHERE entry NOT IN (SELECT id FROM entries)").fetchone()
    assert orphans == (0,)


def test_a_newer_response_and_each_variant_have_their_own_product(base_url, tmp_path):
    path = tmp_path / "c.sqlite"
    key = uuid.uuid4().hex
    text = DOCUMENTS[0]
    url = _url(base_url, key, text, "Vary: X-Variant").replace("max-age%3D600", "max-age%3D0")
    with hc.Client(cache=hc.Cache(path)) as client:
        for variant in ("a", "b", "a"):  # max-age=0, no validator: each a miss replacing its variant
            r = client.get(url, handler=hc.JSON(), headers={"X-Variant": variant})
            assert r.cache_status == "miss" and r.content == json.loads(text)
    products = _products(path, key)
    assert len(products) == 2  # one per live variant; the replaced one's is not counted
    with _db(path) as db:
        live = db.execute("SELECT id FROM entries WHERE done = 1 AND url LIKE ?", (f"%{key}%",)).fetchall()
    assert sorted(e for e, _, _ in products) == sorted(i for (i,) in live)
    assert hc.Cache(path).size == sum(len(text) + size for _, _, size in products)


def test_number_texts_keep_the_trees_tape_and_a_schema_keeps_none(base_url, tmp_path):
    # Number texts need the library's JSON tree (not marshal bytes): its product is its tape.
    path = tmp_path / "c.sqlite"
    key, checked = uuid.uuid4().hex, uuid.uuid4().hex
    url = _url(base_url, key, '{"a": 1.10, "b": ["x", 2]}')
    with hc.Client(cache=hc.Cache(path)) as client:
        client.get(url, handler=hc.JSON(keep_number_text=True))
        [(_, fingerprint, size)] = _products(path, key)
        assert fingerprint.startswith("json-tape/") and size > 0
        # Every stored body spoilt (same length): only the tape can still give the document.
        with _db(path) as db:
            db.execute("UPDATE chunks SET data = zeroblob(length(data))")
        r = client.get(url, handler=hc.JSON(keep_number_text=True))
        assert r.cache_status == "hit" and str(r.content["a"]) == "1.10" and list(r.content["b"]) == ["x", 2]
        # With a schema, the check runs on every response: no product is kept.
        with hc.Schema({"type": "object"}) as schema:
            client.get(_url(base_url, checked, '{"a": 1}'), handler=hc.JSON(schema=schema))
            r = client.get(_url(base_url, checked, '{"a": 1}'), handler=hc.JSON(schema=schema))
        assert r.cache_status == "hit" and r.content == {"a": 1}
        assert _products(path, checked) == []


def test_every_path_reads_the_product_a_revalidation_too(base_url, tmp_path):
    import asyncio
    path = tmp_path / "c.sqlite"
    key, stale_key = uuid.uuid4().hex, uuid.uuid4().hex
    text = DOCUMENTS[0]
    url = _url(base_url, key, text)
    stale = _url(base_url, stale_key, text).replace("max-age%3D600", "no-cache") + "&etag=%22p1%22"
    with hc.Client(cache=hc.Cache(path)) as client:
        client.get(url, handler=hc.JSON())
        client.get(stale, handler=hc.JSON())
        # Every stored body spoilt (same length): only the products can still give the document.
        with _db(path) as db:
            db.execute("UPDATE chunks SET data = zeroblob(length(data))")
        [mapped] = client.map([hc.Request("GET", url, handler=hc.JSON())])

        async def main():
            return (await client.arequest("GET", url, handler=hc.JSON()),
                    await client.amap([hc.Request("GET", url, handler=hc.JSON())]))
        awaited, [amapped] = asyncio.run(main())
        revalidated = client.get(stale, handler=hc.JSON())
    for r in (mapped, awaited, amapped):
        assert (r.cache_status, r.content) == ("hit", json.loads(text))
    assert (revalidated.cache_status, revalidated.content) == ("revalidated", json.loads(text))
