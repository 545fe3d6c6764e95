"""The HTTP cache from Python: hc.Cache, hc.Client(cache=...), r.cache_status / r.from_cache,
against the test server's counting origin (/cached/<key>, Tests/server/cacheroutes.py)."""

import json
import os
import sqlite3
import uuid
from urllib.parse import quote

import pytest

import httpcontent as hc


def _key():
    return uuid.uuid4().hex


def _url(base, key, *fields, **query):
    parts = [f"h={quote(f, safe='')}" for f in fields]
    parts += [f"{k}={quote(str(v), safe='')}" for k, v in query.items()]
    return f"{base}/cached/{key}?" + "&".join(parts)


def _count(base, key):
    with hc.Client() as c:
        return json.loads(c.get(f"{base}/cache-count/{key}").content)["count"]


@pytest.mark.parametrize("where", ["memory", "file"])
def test_a_fresh_response_is_a_hit_through_any_handler(base_url, tmp_path, where):
    cache = hc.Cache(tmp_path / "c.sqlite" if where == "file" else None)
    key = _key()
    url = _url(base_url, key, "Cache-Control: max-age=60", body='{"a": [1, 2]}', type="application/json")
    with hc.Client(cache=cache) as client:
        first = client.get(url, handler=hc.JSON())
        assert (first.cache_status, first.from_cache) == ("miss", False)
        second = client.get(url, handler=hc.JSON())
        assert (second.cache_status, second.from_cache) == ("hit", True)
        assert second.content == {"a": [1, 2]}
        assert "age" in second.headers
        assert client.get(url).content == b'{"a": [1, 2]}'  # the bytes fast path, a hit too
    assert _count(base_url, key) == 1


def test_revalidation_replays_the_stored_body(base_url):
    key = _key()
    url = _url(base_url, key, "Cache-Control: no-cache", etag='"v1"', body="kept")
    with hc.Client(cache=hc.Cache()) as client:
        assert client.get(url, handler=hc.Text()).cache_status == "miss"
        r = client.get(url, handler=hc.Text())
        assert (r.cache_status, r.status, r.content) == ("revalidated", 200, "kept")
    assert _count(base_url, key) == 2


def test_no_cache_means_no_status(base_url):
    with hc.Client() as client:
        r = client.get(_url(base_url, _key(), "Cache-Control: max-age=60"))
        assert r.cache_status is None and not r.from_cache


def test_errors_carry_the_cache_status(base_url):
    key = _key()
    with hc.Client(cache=hc.Cache()) as client:
        with pytest.raises(hc.UnacceptableStatus) as info:
            client.get(_url(base_url, key, status=503))
        assert info.value.cache_status == "miss" and info.value.status == 503
        # stale-if-error: the stored response answers for an origin that fails.
        url = _url(base_url, key + "s", "Cache-Control: max-age=0, stale-if-error=60", fail_after=1, body="old")
        client.get(url)
        r = client.get(url)
        assert (r.cache_status, r.content) == ("stale", b"old")


def test_clients_and_processes_share_a_file(base_url, tmp_path):
    path = tmp_path / "shared.sqlite"
    key = _key()
    url = _url(base_url, key, "Cache-Control: max-age=60", n=300000)
    with hc.Client(cache=hc.Cache(path)) as a:
        assert a.get(url).cache_status == "miss"
    code = ("import httpcontent as hc, sys\n"
            "with hc.Client(cache=hc.Cache(sys.argv[1])) as c:\n"
            "    r = c.get(sys.argv[2])\n"
            "    sys.exit(0 if r.cache_status == 'hit' and len(r.content) == 300000 else 1)\n")
    import subprocess
    import sys
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(hc.__file__))}
    done = subprocess.run([sys.executable, "-c", code, str(path), url], timeout=60, env=env)
    assert done.returncode == 0
    assert _count(base_url, key) == 1
    assert hc.Cache(path, max_bytes=10**6).size == 300000


def test_max_bytes_evicts_and_a_foreign_file_is_refused(base_url, tmp_path):
    cache = hc.Cache(max_bytes=1000)
    with hc.Client(cache=cache) as client:
        url = _url(base_url, _key(), "Cache-Control: max-age=60", n=5000)
        client.get(url)
        assert client.get(url).cache_status == "miss"  # too large to keep
    assert cache.size == 0
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("create table t(x)")
    with pytest.raises(hc.LocalIOError, match="another application"):
        hc.Cache(other)
    with pytest.raises(hc.InvalidArgument):
        hc.Cache(max_bytes=-1)


# -- the paths that do not block: arequest, amap (the loop's keyed queue) and map (hc_batch_add)

def test_arequest_misses_then_hits_then_revalidates(base_url):
    import asyncio
    key, stale_key = _key(), _key()
    url = _url(base_url, key, "Cache-Control: max-age=60", body="async body")
    stale = _url(base_url, stale_key, "Cache-Control: no-cache", etag='"a1"', body="kept")

    async def main(client):
        first = await client.arequest("GET", url)                      # the one-call fetch path
        second = await client.arequest("GET", url, handler=hc.Text())  # a request of its own
        third = await client.arequest("GET", url, headers={"X-Any": "1"})
        await client.arequest("GET", stale, handler=hc.Text())
        again = await client.arequest("GET", stale, handler=hc.Text())
        return first, second, third, again

    with hc.Client(cache=hc.Cache()) as client:
        first, second, third, again = asyncio.run(main(client))
    assert (first.cache_status, first.from_cache, first.content) == ("miss", False, b"async body")
    assert (second.cache_status, second.from_cache, second.content) == ("hit", True, "async body")
    assert third.cache_status == "hit" and "age" in third.headers
    assert (again.cache_status, again.status, again.content) == ("revalidated", 200, "kept")
    assert _count(base_url, key) == 1
    assert _count(base_url, stale_key) == 2


def test_amap_and_map_answer_from_the_cache(base_url):
    import asyncio
    keys = [_key() for _ in range(3)]
    urls = [_url(base_url, k, "Cache-Control: max-age=60", body=f"item {i}") for i, k in enumerate(keys)]
    with hc.Client(cache=hc.Cache()) as client:
        misses = client.map([hc.Request("GET", u) for u in urls])
        hits = client.map([hc.Request("GET", u, handler=hc.Text()) for u in urls])

        async def main():
            return await client.amap([hc.Request("GET", u, handler=hc.Text()) for u in urls])
        ahits = asyncio.run(main())
    assert [r.cache_status for r in misses] == ["miss"] * 3
    assert [(r.cache_status, r.from_cache) for r in hits] == [("hit", True)] * 3
    assert [(r.cache_status, r.content) for r in ahits] == [("hit", f"item {i}") for i in range(3)]
    assert [_count(base_url, k) for k in keys] == [1, 1, 1]


def test_amap_revalidates_a_stale_entry_and_serves_stale_if_error(base_url):
    import asyncio
    key, down = _key(), _key()
    stale = _url(base_url, key, "Cache-Control: max-age=0", etag='"s"', body="stored")
    failing = _url(base_url, down, "Cache-Control: max-age=0, stale-if-error=60", fail_after=1, body="old")
    with hc.Client(cache=hc.Cache()) as client:
        async def main():
            return await client.amap([hc.Request("GET", stale), hc.Request("GET", failing)])
        first = asyncio.run(main())
        second = asyncio.run(main())
    assert [r.cache_status for r in first] == ["miss", "miss"]
    assert [(r.cache_status, r.content) for r in second] == [("revalidated", b"stored"), ("stale", b"old")]
    assert _count(base_url, key) == 2


def test_a_conditional_request_is_answered_304_from_a_fresh_entry_on_every_path(base_url):
    import asyncio
    key = _key()
    url = _url(base_url, key, "Cache-Control: max-age=60", etag='"t1"', body="full")
    anything = hc.Bytes(accept_status=[(100, 599)])
    with hc.Client(cache=hc.Cache()) as client:
        client.get(url)
        blocking = client.get(url, headers={"If-None-Match": '"t1"'}, handler=anything)
        other = client.get(url, headers={"If-None-Match": '"t0"'}, handler=hc.Text())
        batched = client.map([hc.Request("GET", url, headers={"If-None-Match": 'W/"t1"'}, handler=anything)])[0]

        async def main():
            return await client.arequest("GET", url, headers={"If-None-Match": '"t1"'}, handler=anything)
        awaited = asyncio.run(main())
    for r in (blocking, batched, awaited):
        assert (r.status, r.cache_status, r.content, r.headers.get("etag")) == (304, "hit", b"", '"t1"')
    assert (other.status, other.cache_status, other.content) == (200, "hit", "full")
    assert _count(base_url, key) == 1
