"""The session layers from Python: cookies, auth, retries; checked against the local test server
and against httpbin (a server nobody here wrote, from the package index, started locally)."""

import json
import multiprocessing
import os
import threading
import time
import uuid

import pytest

import httpcontent as hc


def body(r):
    return json.loads(r.content)


def key():
    return uuid.uuid4().hex


@pytest.fixture
def other(base_url):
    """The same server under another host name: what a redirect to another host reaches."""
    return base_url.replace("127.0.0.1", "localhost")


# httpbin_url (httpbin started locally): conftest.py


# ---------------------------------------------------------------- cookies

def test_cookies_are_kept_between_requests_by_default(base_url):
    with hc.Client() as client:
        client.get(f"{base_url}/cookie?set=session=abc")
        assert body(client.get(f"{base_url}/cookie"))["cookie"] == "session=abc"
        assert client.cookies["session"] == "abc"
        assert "session" in client.cookies
        assert client.cookies.get("missing") is None


def test_cookies_off_keeps_nothing_and_the_view_raises(base_url):
    with hc.Client(cookies=False) as client:
        client.get(f"{base_url}/cookie?set=session=abc")
        assert body(client.get(f"{base_url}/cookie"))["cookie"] is None
        with pytest.raises(hc.InvalidArgument):
            client.cookies.jar()


def test_cookie_set_clear_and_per_request_cookies(base_url):
    with hc.Client() as client:
        client.cookies.set("theme", "dark", domain="127.0.0.1")
        assert body(client.get(f"{base_url}/cookie"))["cookie"] == "theme=dark"
        sent = body(client.get(f"{base_url}/cookie", cookies={"once": "1"}))["cookie"]
        assert sorted(sent.split("; ")) == ["once=1", "theme=dark"]
        assert "once" not in client.cookies  # a per-request cookie is not stored
        client.cookies.clear()
        assert len(client.cookies) == 0
        assert body(client.get(f"{base_url}/cookie"))["cookie"] is None
        with pytest.raises(TypeError):
            client.cookies["x"] = "y"
        with pytest.raises(hc.InvalidArgument):
            client.cookies.set("bad;name", "v", domain="127.0.0.1")


def test_cookie_rules_are_libcurls_host_path_and_expiry(base_url, other):
    # (Secure cookies go over http to loopback too: libcurl counts it a secure context.)
    with hc.Client() as client:
        client.get(f"{base_url}/cookie?set=host=only")
        assert body(client.get(f"{other}/cookie"))["cookie"] is None  # another host
        client.cookies.set("p", "1", domain="127.0.0.1", path="/elsewhere")
        client.cookies.set("old", "1", domain="127.0.0.1", expires=int(time.time()) - 10)
        assert body(client.get(f"{base_url}/cookie"))["cookie"] == "host=only"
        assert "old" not in client.cookies


def test_cookie_file_is_loaded_and_saved(base_url, tmp_path):
    path = tmp_path / "jar.txt"
    with hc.Client(cookie_file=str(path)) as client:
        client.get(f"{base_url}/cookie?set=kept=1")
        client.cookies.set("long", "lived", domain="127.0.0.1", expires=int(time.time()) + 3600)
        client.cookies.save()
    text = path.read_text()
    assert "kept\t1" in text and "long\tlived" in text and "Netscape" in text
    with hc.Client(cookie_file=str(path)) as again:
        assert again.cookies["long"] == "lived"
        assert "kept=1" in body(again.get(f"{base_url}/cookie"))["cookie"]
    with hc.Client() as third:
        third.cookies.load(str(path))
        assert third.cookies["kept"] == "1"
        with pytest.raises(hc.LocalIOError):
            third.cookies.load(str(tmp_path / "missing.txt"))


def test_batch_transfers_share_the_jar(base_url):
    with hc.Client() as client:
        client.get(f"{base_url}/cookie?set=batch=yes")
        results = client.map([hc.Request("GET", f"{base_url}/cookie") for _ in range(6)])
        assert all(body(r)["cookie"] == "batch=yes" for r in results)
        client.map([hc.Request("GET", f"{base_url}/cookie?set=from_batch=1")])
        assert client.cookies["from_batch"] == "1"


def test_httpbin_cookies_set_and_read_back(httpbin_url):
    with hc.Client() as client:
        r = client.get(f"{httpbin_url}/cookies/set?flavour=oat&n=2")  # 302 to /cookies
        assert body(r)["cookies"] == {"flavour": "oat", "n": "2"}
        client.get(f"{httpbin_url}/cookies/delete?flavour")
        assert body(client.get(f"{httpbin_url}/cookies"))["cookies"] == {"n": "2"}
        assert "flavour" not in client.cookies


# ---------------------------------------------------------------- auth

def test_basic_bearer_digest_against_the_test_server(base_url):
    with hc.Client() as client:
        assert body(client.get(f"{base_url}/basic-auth/u/p", auth=("u", "p")))["user"] == "u"
        assert body(client.get(f"{base_url}/bearer/tok", auth=hc.BearerAuth("tok")))["token"] == "tok"
        assert body(client.get(f"{base_url}/digest-auth/u/p", auth=hc.DigestAuth("u", "p")))["user"] == "u"
        with pytest.raises(hc.UnacceptableStatus) as info:
            client.get(f"{base_url}/basic-auth/u/p", auth=("u", "wrong"))
        assert info.value.status == 401
    with hc.Client(auth=hc.BearerAuth("tok")) as client:  # the client's, for every request
        assert body(client.get(f"{base_url}/bearer/tok"))["authenticated"] is True


def test_httpbin_basic_digest_bearer(httpbin_url):
    with hc.Client() as client:
        assert body(client.get(f"{httpbin_url}/basic-auth/ann/pw", auth=("ann", "pw")))["user"] == "ann"
        r = client.get(f"{httpbin_url}/digest-auth/auth/ann/pw", auth=hc.DigestAuth("ann", "pw"))
        assert body(r) == {"authenticated": True, "user": "ann"}
        assert body(client.get(f"{httpbin_url}/bearer", auth=hc.BearerAuth("t0k")))["token"] == "t0k"
        with pytest.raises(hc.UnacceptableStatus):
            client.get(f"{httpbin_url}/basic-auth/ann/pw", auth=("ann", "nope"))


@pytest.mark.parametrize("auth", [("u", "p"), hc.BearerAuth("secret"), hc.DigestAuth("u", "p"),
                                  lambda refresh: {"Authorization": "Bearer hook"}],
                         ids=["basic", "bearer", "digest", "hook"])
def test_credentials_are_not_forwarded_to_another_host_on_redirect(base_url, other, auth):
    with hc.Client() as client:
        same = client.get(f"{base_url}/redirect-to?url=/auth-check", auth=auth)
        target = f"{other}/auth-check"
        moved = client.get(f"{base_url}/redirect-to?url={target}", auth=auth)
        assert moved.url == target
        assert body(moved)["authorization"] is None
        if not isinstance(auth, hc.DigestAuth):  # digest answers challenges only
            assert body(same)["authorization"] is not None


def test_auth_hook_refreshes_once_on_401(base_url):
    calls = []

    def hook(refresh):
        calls.append(refresh)
        return {"Authorization": "Bearer " + ("fresh" if refresh else "stale")}

    with hc.Client(auth=hook) as client:
        assert body(client.get(f"{base_url}/bearer/fresh"))["token"] == "fresh"
        assert calls == [False, True]
        calls.clear()
        with pytest.raises(hc.UnacceptableStatus):
            client.get(f"{base_url}/bearer/never")
        assert calls == [False, True]  # once, not forever


def test_auth_hook_exception_is_raised(base_url):
    def hook(refresh):
        raise RuntimeError("no token")

    with hc.Client() as client:
        with pytest.raises(RuntimeError, match="no token"):
            client.get(f"{base_url}/bearer/x", auth=hook)


# ---------------------------------------------------------------- retries

def test_retry_after_503_until_success(base_url):
    k = key()
    with hc.Client(retries=hc.Retry(total=4, backoff=0.01)) as client:
        start = time.monotonic()
        r = client.get(f"{base_url}/flaky?key={k}&fail=2&retry_after=1")
        assert body(r) == {"attempts": 3}
        assert time.monotonic() - start >= 1.9  # Retry-After: 1, twice


def test_retry_after_http_date_is_honoured(base_url):
    k = key()
    with hc.Client() as client:
        start = time.monotonic()
        r = client.get(f"{base_url}/flaky?key={k}&fail=1&retry_date=2", retries=hc.Retry(2, backoff=0))
        assert body(r) == {"attempts": 2}
        assert time.monotonic() - start >= 0.9  # a date with one-second precision, ~2 s ahead


def test_final_error_tells_the_attempts(base_url):
    with hc.Client() as client:
        with pytest.raises(hc.UnacceptableStatus) as info:
            client.get(f"{base_url}/flaky?key={key()}&fail=9", retries=hc.Retry(3, backoff=0.01))
        assert info.value.attempts == 3
        assert "after 3 attempts" in str(info.value)
        with pytest.raises(hc.UnacceptableStatus) as once:
            client.get(f"{base_url}/status/500")
        assert once.value.attempts == 1


def test_retry_after_beyond_the_cap_ends_the_retries(base_url):
    with hc.Client() as client:
        start = time.monotonic()
        with pytest.raises(hc.UnacceptableStatus) as info:
            client.get(f"{base_url}/flaky?key={key()}&fail=9&retry_after=3600",
                       retries=hc.Retry(5, backoff=0.01, cap=1))
        assert info.value.attempts == 1
        assert time.monotonic() - start < 5


def test_post_is_not_retried_unless_told(base_url):
    k = key()
    with hc.Client(retries=hc.Retry(3, backoff=0.01)) as client:
        with pytest.raises(hc.UnacceptableStatus):
            client.post(f"{base_url}/flaky?key={k}&fail=1", data=b"x")
        assert body(client.get(f"{base_url}/attempts?key={k}"))["attempts"] == 1
        r = client.post(f"{base_url}/flaky?key={k}&fail=1", data=b"x",
                        retries=hc.Retry(3, backoff=0.01, all_methods=True))
        assert body(r) == {"attempts": 2}


def test_connection_resets_are_retried(base_url):
    with hc.Client(retries=hc.Retry(3, backoff=0.01)) as client:
        assert body(client.get(f"{base_url}/flaky-reset?key={key()}&fail=2")) == {"attempts": 3}
        with pytest.raises(hc.TransportError):
            client.get(f"{base_url}/flaky-reset?key={key()}&fail=2",
                       retries=hc.Retry(3, backoff=0.01, connection_errors=False))


def test_statuses_not_listed_are_not_retried(base_url):
    k = key()
    with hc.Client(retries=hc.Retry(3, backoff=0.01, statuses=(429,))) as client:
        with pytest.raises(hc.UnacceptableStatus) as info:
            client.get(f"{base_url}/flaky?key={k}&fail=1&status=503")
        assert info.value.attempts == 1


def test_a_retried_download_resumes_from_its_part_file(base_url, tmp_path):
    target = tmp_path / "big.bin"
    k = key()
    with hc.Client(retries=hc.Retry(3, backoff=0.01)) as client:
        r = client.get(f"{base_url}/versioned/300000?key={k}&reset_after=100000",
                       handler=hc.File(target, resume=True))
    # The first attempt is reset after 100000 bytes; the second asks for the rest (and, since
    # the test server resets every response after 100000 bytes of it, a third the rest again).
    assert r.content.resumed
    assert r.content.size == 300000
    from sessionroutes import versioned_bytes
    assert target.read_bytes() == versioned_bytes(300000, 1)
    assert not (tmp_path / "big.bin.part").exists()


# ---------------------------------------------------------------- fork safety

def _child_request(url, queue):
    import httpcontent as child_hc
    with child_hc.Client() as fresh:
        queue.put(fresh.get(url).status)


def test_a_forked_child_can_drop_and_recreate_a_client(base_url):
    parent = hc.Client()
    parent.get(f"{base_url}/cookie?set=p=1")
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def child(url, q):
        parent.close()  # the parent's client, dropped in the child
        _child_request(url, q)

    proc = ctx.Process(target=child, args=(f"{base_url}/bytes/10", queue))
    proc.start()
    proc.join(30)
    assert proc.exitcode == 0
    assert queue.get(timeout=5) == 200
    assert parent.get(f"{base_url}/bytes/10").status == 200  # the parent's is untouched
    parent.close()


# ---------------------------------------------------------------- downloads you can trust

def _sha256(data):
    import hashlib
    return hashlib.sha256(data).hexdigest()


def test_expected_sha256_is_checked_while_streaming(base_url, tmp_path):
    from sessionroutes import versioned_bytes
    data = versioned_bytes(5000, 1)
    with hc.Client() as client:
        r = client.get(f"{base_url}/versioned/5000?key={key()}", handler=hc.File(tmp_path / "a", sha256=_sha256(data)))
        assert r.digest == "sha256:" + _sha256(data)
        assert r.content.digest == r.digest
        import hashlib
        r = client.get(f"{base_url}/versioned/5000?key={key()}",
                       handler=hc.File(tmp_path / "m", md5=hashlib.md5(data).hexdigest()))
        assert r.digest == "md5:" + hashlib.md5(data).hexdigest()
        with pytest.raises(hc.ChecksumMismatch):
            client.get(f"{base_url}/versioned/5000?key={key()}", handler=hc.File(tmp_path / "b", sha512="00" * 64))
        assert not (tmp_path / "b").exists()
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".b")] == []
        with pytest.raises(hc.InvalidArgument):
            client.get(f"{base_url}/versioned/10", handler=hc.File(tmp_path / "c", sha256="xyz"))


@pytest.mark.parametrize("kind", ["repr", "content", "legacy"])
def test_server_digest_headers_are_verified(base_url, tmp_path, kind):
    with hc.Client() as client:
        r = client.get(f"{base_url}/versioned/3000?key={key()}&digest={kind}", handler=hc.File(tmp_path / "ok"))
        assert r.digest is not None and r.digest.startswith("sha256:")


def test_a_wrong_server_digest_leaves_no_file_and_no_part(base_url, tmp_path):
    target = tmp_path / "bad.bin"
    with hc.Client() as client:
        with pytest.raises(hc.ChecksumMismatch) as info:
            client.get(f"{base_url}/versioned/3000?key={key()}&digest=wrong", handler=hc.File(target, resume=True))
    assert isinstance(info.value, hc.Error)
    assert "Repr-Digest" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_resume_keeps_validators_and_uses_if_range(base_url, tmp_path):
    from sessionroutes import versioned_bytes
    target = tmp_path / "v.bin"
    k = key()
    with hc.Client() as client:
        with pytest.raises(hc.TransportError):
            client.get(f"{base_url}/versioned/200000?key={k}&reset_after=50000", handler=hc.File(target, resume=True))
        meta = (tmp_path / "v.bin.part.meta").read_text()
        assert 'etag: "v1"' in meta
        r = client.get(f"{base_url}/versioned/200000?key={k}",
                       handler=hc.File(target, resume=True, sha256=_sha256(versioned_bytes(200000, 1))))
    assert r.content.resumed
    assert target.read_bytes() == versioned_bytes(200000, 1)
    assert not (tmp_path / "v.bin.part").exists() and not (tmp_path / "v.bin.part.meta").exists()


def test_a_file_changed_between_attempts_restarts_from_zero_and_the_checksum_passes(base_url, tmp_path):
    from sessionroutes import versioned_bytes
    target = tmp_path / "changing.bin"
    k = key()
    with hc.Client() as client:
        # The first attempt is cut after 60000 bytes, and the file changes on the server.
        with pytest.raises(hc.TransportError):
            client.get(f"{base_url}/versioned/200000?key={k}&reset_after=60000&bump=1",
                       handler=hc.File(target, resume=True))
        assert (tmp_path / "changing.bin.part").stat().st_size == 60000
        new = versioned_bytes(200000, 2)
        r = client.get(f"{base_url}/versioned/200000?key={k}",
                       handler=hc.File(target, resume=True, sha256=_sha256(new)))
    assert not r.content.resumed  # If-Range failed: the whole new version, from byte 0
    assert r.content.size == 200000
    assert target.read_bytes() == new


def test_a_200_to_a_range_request_restarts_cleanly(base_url, tmp_path):
    target = tmp_path / "norange.bin"
    (tmp_path / "norange.bin.part").write_bytes(b"\xff" * 1000)
    with hc.Client() as client:
        r = client.get(f"{base_url}/range/5000?norange=1", handler=hc.File(target, resume=True))
    assert not r.content.resumed
    assert target.read_bytes() == bytes(i % 251 for i in range(5000))


def test_a_resume_across_processes_continues_the_part(base_url, tmp_path):
    import subprocess
    import sys
    from sessionroutes import versioned_bytes
    target = tmp_path / "proc.bin"
    k = key()
    script = (
        "import sys, httpcontent as hc\n"
        "c = hc.Client()\n"
        "try:\n"
        "    r = c.get(sys.argv[1], handler=hc.File(sys.argv[2], resume=True))\n"
        "    print('done', r.content.resumed)\n"
        "except hc.TransportError:\n"
        "    print('cut')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    first = subprocess.run([sys.executable, "-c", script, f"{base_url}/versioned/100000?key={k}&reset_after=30000",
                            str(target)], capture_output=True, text=True, timeout=60, env=env)
    assert first.stdout.strip() == "cut"
    second = subprocess.run([sys.executable, "-c", script, f"{base_url}/versioned/100000?key={k}", str(target)],
                            capture_output=True, text=True, timeout=60, env=env)
    assert second.stdout.strip() == "done True"
    assert target.read_bytes() == versioned_bytes(100000, 1)


# ---------------------------------------------------------------- retries and the hook in batches

def _batch_of_retries(base_url):
    slow = [hc.Request("GET", f"{base_url}/flaky?key={key()}&fail=1&retry_after=2") for _ in range(2)]
    failing = hc.Request("GET", f"{base_url}/flaky?key={key()}&fail=9&retry_after=0")
    plain = [hc.Request("GET", f"{base_url}/bytes/10") for _ in range(3)]
    return slow + [failing] + plain


def _check_batch_of_retries(results, elapsed):
    assert [body(r) for r in results[:2]] == [{"attempts": 2}, {"attempts": 2}]
    failed = results[2]
    assert isinstance(failed, hc.UnacceptableStatus) and failed.status == 503
    assert failed.attempts == 3 and "after 3 attempts" in str(failed)
    assert [r.content for r in results[3:]] == [bytes(range(10))] * 3
    # Both slow requests waited their Retry-After of 2 s at the same time, not one after the
    # other (which takes 4 s): the waits hold up nothing.
    assert 1.9 <= elapsed < 3.5


def test_map_retries_without_holding_the_other_requests(base_url):
    with hc.Client(retries=hc.Retry(total=3, backoff=0.01)) as client:
        start = time.monotonic()
        results = client.map(_batch_of_retries(base_url))
        _check_batch_of_retries(results, time.monotonic() - start)


def test_amap_retries_without_holding_the_other_requests(base_url):
    import asyncio

    async def main():
        with hc.Client(retries=hc.Retry(total=3, backoff=0.01)) as client:
            start = time.monotonic()
            results = await client.amap(_batch_of_retries(base_url))
            return results, time.monotonic() - start

    _check_batch_of_retries(*asyncio.run(main()))


def test_a_requests_own_retry_policy_applies_in_map(base_url):
    with hc.Client() as client:
        ok, once = client.map([
            hc.Request("GET", f"{base_url}/flaky?key={key()}&fail=2&retry_after=0", retries=hc.Retry(3, backoff=0)),
            hc.Request("GET", f"{base_url}/flaky?key={key()}&fail=2&retry_after=0")])
    assert body(ok) == {"attempts": 3}
    assert isinstance(once, hc.UnacceptableStatus) and once.attempts == 1


def test_auth_hook_refreshes_once_on_401_in_map_and_amap(base_url):
    import asyncio
    calls = []

    def hook(refresh):
        calls.append(refresh)
        return {"Authorization": "Bearer " + ("fresh" if refresh else "stale")}

    with hc.Client(auth=hook) as client:
        [r] = client.map([hc.Request("GET", f"{base_url}/bearer/fresh")])
        assert body(r)["token"] == "fresh" and calls == [False, True]
        calls.clear()

        async def main():
            return await client.amap([hc.Request("GET", f"{base_url}/bearer/fresh")])
        [r] = asyncio.run(main())
        assert body(r)["token"] == "fresh" and calls == [False, True]


def test_retry_defaults_are_the_librarys():
    r = hc.Retry()
    assert (r.total, r.backoff, r.cap, r.statuses) == (3, 0.1, 30.0, (429, 502, 503, 504))
    assert hc.Retry(statuses=[503]).statuses == (503,) and hc.Retry(2).total == 2
    with pytest.raises(ValueError):
        hc.Retry(0)
