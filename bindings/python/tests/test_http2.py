"""HTTP/2 from the batch executor: many transfers multiplexed on one connection when the server
speaks h2. The server is a real nginx (TLS, ALPN h2, Tests/server/h2server.py) on 127.0.0.1 with
a certificate made for the test; the test skips, saying why, where nginx (with http_v2) or
openssl is missing."""

import pytest

import httpcontent as hc
import h2server  # Tests/server, on the path through conftest


@pytest.fixture(scope="module")
def h2_server(tmp_path_factory):
    """(base URL, CA file, access log path) of an nginx serving files over HTTP/2 and TLS."""
    try:
        proc, port, ca, log = h2server.start(tmp_path_factory.mktemp("h2"))
    except h2server.Unavailable as exc:
        pytest.skip(str(exc))
    yield f"https://127.0.0.1:{port}", ca, log
    h2server.stop(proc)


def test_a_batch_multiplexes_its_transfers_on_one_h2_connection(h2_server):
    base, ca, log = h2_server
    before = h2server.log_count(log)
    with hc.Client(ca_file=ca) as client:
        results = client.map([hc.Request("GET", f"{base}/f{i}.bin") for i in range(40)],
                             concurrency=40)
    assert [r.content for r in results] == [bytes([i]) * (1000 + i) for i in range(40)]
    lines = h2server.log_lines(log, before, 40)
    assert len(lines) == 40
    assert {protocol for _, protocol, _ in lines} == {"HTTP/2.0"}
    # All 40 at once on one connection: the later transfers waited for the first connection to
    # say it multiplexes instead of opening their own.
    assert len({conn for conn, _, _ in lines}) == 1


def test_sequential_requests_negotiate_h2_and_verify_the_certificate(h2_server):
    base, ca, _ = h2_server
    with hc.Client(ca_file=ca) as client:
        r = client.get(f"{base}/f3.bin")
        assert r.status == 200 and r.content == bytes([3]) * 1003
    with hc.Client() as untrusting:  # the system's CAs do not know the test's certificate
        with pytest.raises(hc.TransportError):
            untrusting.get(f"{base}/f3.bin")


def test_maps_one_after_another_reuse_the_h2_connection(h2_server):
    base, ca, log = h2_server
    before = h2server.log_count(log)
    with hc.Client(ca_file=ca) as client:
        for _ in range(3):
            results = client.map([hc.Request("GET", f"{base}/f{i}.bin") for i in range(20)], concurrency=20)
            assert [r.content for r in results] == [bytes([i]) * (1000 + i) for i in range(20)]
    lines = h2server.log_lines(log, before, 60)
    assert len(lines) == 60
    # The second and third map found the first one's connection open: no new TLS handshake.
    assert len({conn for conn, _, _ in lines}) == 1
