"""The client's per-host connection limit (`hc.Client(host_limit=N)`, hc_client_set_host_limit)
counted where it shows: in the connections of a real nginx's access log (TLS, HTTP/1.1 only, so
that transfers cannot share a connection; Tests/server/h2server.py). The clients offer
http/1.1 only: offering h2, a batch's transfers wait (CURLOPT_PIPEWAIT) for the first connection
to say whether it multiplexes, and 1 KiB responses then often all come on that one connection,
limit or not. Skips, saying why, where nginx or openssl is missing."""

import asyncio

import pytest

import httpcontent as hc
import h2server  # Tests/server, on the path through conftest

N = 12


@pytest.fixture(scope="module")
def h1_server(tmp_path_factory):
    """(base URL, CA file, access log path) of an nginx offering http/1.1 only over TLS."""
    try:
        proc, port, ca, log = h2server.start(tmp_path_factory.mktemp("h1"), http2=False)
    except h2server.Unavailable as exc:
        pytest.skip(str(exc))
    yield f"https://127.0.0.1:{port}", ca, log
    h2server.stop(proc)


def connections(log, before: int) -> set[str]:
    lines = h2server.log_lines(log, before, N)
    assert len(lines) == N and {protocol for _, protocol, _ in lines} == {"HTTP/1.1"}
    return {conn for conn, _, _ in lines}


def requests(base: str) -> list[hc.Request]:
    return [hc.Request("GET", f"{base}/f{i}.bin") for i in range(N)]


def check_bodies(results) -> None:
    assert [r.content for r in results] == [bytes([i]) * (1000 + i) for i in range(N)]


def test_client_host_limit_bounds_the_connections_of_map(h1_server):
    base, ca, log = h1_server
    before = h2server.log_count(log)
    with hc.Client(ca_file=ca, http_version="1.1", host_limit=2) as client:
        check_bodies(client.map(requests(base), concurrency=N))
    assert 1 <= len(connections(log, before)) <= 2


def test_without_a_limit_the_same_map_opens_more_connections(h1_server):
    base, ca, log = h1_server
    before = h2server.log_count(log)
    with hc.Client(ca_file=ca, http_version="1.1") as client:
        check_bodies(client.map(requests(base), concurrency=N))
    assert len(connections(log, before)) > 2


def test_a_map_host_limit_of_zero_lifts_the_clients(h1_server):
    base, ca, log = h1_server
    before = h2server.log_count(log)
    with hc.Client(ca_file=ca, http_version="1.1", host_limit=1) as client:
        check_bodies(client.map(requests(base), concurrency=N, host_limit=0))
    assert len(connections(log, before)) > 2


def test_client_host_limit_bounds_asyncio_requests(h1_server):
    base, ca, log = h1_server
    before = h2server.log_count(log)

    async def run(client):
        return await asyncio.gather(*(client.arequest("GET", f"{base}/f{i}.bin") for i in range(N)))
    with hc.Client(ca_file=ca, http_version="1.1", host_limit=2) as client:
        check_bodies(asyncio.run(run(client)))
    assert 1 <= len(connections(log, before)) <= 2


def test_a_negative_host_limit_is_refused():
    with pytest.raises(ValueError):
        hc.Client(host_limit=-1)
