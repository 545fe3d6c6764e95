"""TLS session resumption (issue 31): a new connection to a server the client has talked to
resumes its TLS session instead of a full handshake, on every handle of the client. The server
is a real nginx (Tests/server/h2server.py) that closes each connection after its response
(keepalive_timeout 0), so every request makes a new TLS connection, and logs per request whether
its session was resumed ("r") or not ("."); the tests skip, saying why, where nginx or openssl
is missing."""


import pytest

import httpcontent as hc
import h2server  # Tests/server, on the path through conftest


def _server(tmp_path_factory, name: str, protocols: str):
    try:
        # http/1.1: nginx 1.22 ends an h2 connection with keepalive_timeout 0 abruptly, and
        # OpenSSL 3.0 then marks its session not resumable (h2server.py).
        proc, port, ca, log = h2server.start(tmp_path_factory.mktemp(name), keepalive_timeout="0",
                                             protocols=protocols, log_sessions=True, http2=False)
    except h2server.Unavailable as exc:
        pytest.skip(str(exc))
    return proc, f"https://127.0.0.1:{port}", ca, log


@pytest.fixture(scope="module")
def tls12_server(tmp_path_factory):
    """(base URL, CA file, access log) of an nginx offering TLS 1.2 only, with no session-ID
    cache (nginx's default): it resumes only sessions a client holds a ticket for."""
    proc, base, ca, log = _server(tmp_path_factory, "tls12", "TLSv1.2")
    yield base, ca, log
    h2server.stop(proc)


@pytest.fixture(scope="module")
def tls13_server(tmp_path_factory):
    proc, base, ca, log = _server(tmp_path_factory, "tls13", "TLSv1.2 TLSv1.3")
    yield base, ca, log
    h2server.stop(proc)


def _resumed(log, after: int, count: int) -> list[str]:
    """The resumption field ("r" or ".") of each request logged after line `after`."""
    return [fields[3] for fields in h2server.log_lines(log, after, count)]


_count = h2server.log_count


@pytest.mark.parametrize("server", ["tls12_server", "tls13_server"])
def test_each_new_connection_after_the_first_resumes_the_tls_session(server, request):
    base, ca, log = request.getfixturevalue(server)
    before = _count(log)
    with hc.Client(ca_file=ca) as client:
        for _ in range(4):
            assert client.get(f"{base}/f1.bin").content == bytes([1]) * 1001
    # Four connections (the server closed each): a full handshake, then three resumed.
    assert _resumed(log, before, 4) == [".", "r", "r", "r"]


def test_handles_of_one_client_share_its_tls_sessions(tls12_server):
    """A batch of transfers at once takes new easy handles from the client's pool: they resume
    the session the client's first request left, as its own handle does."""
    base, ca, log = tls12_server
    start = _count(log)
    with hc.Client(ca_file=ca) as client:
        assert client.get(f"{base}/f2.bin").status == 200
        # nginx logs a request after its response: wait for the first one's line, so that it is
        # not counted among the batch's.
        assert len(_resumed(log, start, 1)) == 1
        before = start + 1
        results = client.map([hc.Request("GET", f"{base}/f{i}.bin") for i in range(6)], concurrency=6)
    assert [r.content for r in results] == [bytes([i]) * (1000 + i) for i in range(6)]
    assert _resumed(log, before, 6) == ["r"] * 6


def test_a_new_client_makes_a_full_handshake(tls12_server):
    """Sessions belong to a client (its share): another client does not resume them."""
    base, ca, log = tls12_server
    before = _count(log)
    for _ in range(2):
        with hc.Client(ca_file=ca) as client:
            assert client.get(f"{base}/f3.bin").status == 200
    assert _resumed(log, before, 2) == [".", "."]


def test_clients_given_one_connection_share_resume_each_others_sessions(tls12_server):
    base, ca, log = tls12_server
    before = _count(log)
    share = hc.ConnectionShare()
    with hc.Client(ca_file=ca, cookies=False, connection_share=share) as first, \
            hc.Client(ca_file=ca, cookies=False, connection_share=share) as second:
        share.close()  # the clients hold their own references
        assert first.get(f"{base}/f4.bin").status == 200
        assert second.get(f"{base}/f4.bin").status == 200   # a new connection, the first's session
    assert _resumed(log, before, 2) == [".", "r"]


def test_a_client_with_cookies_refuses_another_share():
    with hc.ConnectionShare() as share, pytest.raises(hc.InvalidArgument, match="cookie jar"):
        hc.Client(connection_share=share)
