"""Links that misbehave (issue 31): the test server behind Tests/server/faultproxy.py, a TCP
proxy that caps bandwidth, adds latency and jitter, stalls, resets after N bytes and drips the
response head byte by byte. Downloads resume to the exact bytes, event streams reconnect with
nothing lost or repeated, time limits fire as configured, and each failure has its own error."""

import hashlib
import time
from urllib.parse import urlsplit

import pytest

import httpcontent as hc
from faultproxy import FaultProxy  # Tests/server, on the path through conftest

CURLE_RECV_ERROR = 56


def expected(n: int) -> bytes:
    """The test server's /bytes/<n> and /range/<n> body: byte i is i % 251."""
    return bytes(i % 251 for i in range(n))


@pytest.fixture
def upstream(base_url):
    return urlsplit(base_url).port


def test_a_reset_download_resumes_to_the_exact_bytes(upstream, tmp_path):
    n = 3_000_000
    target = tmp_path / "big.bin"
    with FaultProxy(upstream, reset_after=1_200_000, faulty=1) as proxy:
        url = f"http://127.0.0.1:{proxy.start()}/range/{n}"
        with hc.Client(timeout=30) as client:
            with pytest.raises(hc.TransportError) as e:
                client.get(url, handler=hc.File(target, resume=True))
            assert e.value.curl_code == CURLE_RECV_ERROR and not isinstance(e.value, hc.Timeout)
            assert not target.exists()                      # nothing half-written in its place
            kept = (tmp_path / "big.bin.part").stat().st_size
            assert 0 < kept < n
            r = client.get(url, handler=hc.File(target, resume=True))   # the second connection is clean
        assert r.status == 206 and proxy.resets == 1
    assert hashlib.sha256(target.read_bytes()).digest() == hashlib.sha256(expected(n)).digest()


def test_an_event_stream_reconnects_after_a_reset_with_nothing_lost_or_repeated(base_url, upstream):
    with FaultProxy(upstream, reset_after=260, faulty=1) as proxy:
        url = f"http://127.0.0.1:{proxy.start()}/records/sse-resume?total=8&per=8&mode=close&retry=10"
        with hc.Client(timeout=30) as client:
            events = list(client.iter_events(url, reconnect=True, max_reconnects=3))
        assert proxy.resets == 1 and proxy.connections >= 2
    assert [e.id for e in events] == [str(i) for i in range(1, 9)]
    assert [e.data for e in events] == [f"event {i}" for i in range(1, 9)]


def test_a_stall_fires_the_read_timeout_as_configured(upstream):
    with FaultProxy(upstream, stall_after=20_000, stall=5.0) as proxy:
        url = f"http://127.0.0.1:{proxy.start()}/bytes/200000"
        with hc.Client(read_timeout=0.5) as client:
            start = time.monotonic()
            with pytest.raises(hc.Timeout):
                client.get(url)
            waited = time.monotonic() - start
    assert 0.4 < waited < 4.0   # the 0.5 s limit, not the 5 s stall


def test_a_total_timeout_fires_on_a_capped_link(upstream):
    with FaultProxy(upstream, rate=100_000) as proxy:
        url = f"http://127.0.0.1:{proxy.start()}/bytes/1000000"   # 10 s at the cap
        with hc.Client(timeout=0.7) as client, pytest.raises(hc.Timeout):
            client.get(url)


def test_a_bandwidth_cap_slows_the_body_and_keeps_it_whole(upstream):
    with FaultProxy(upstream, rate=400_000) as proxy:
        url = f"http://127.0.0.1:{proxy.start()}/bytes/200000"
        with hc.Client(timeout=30) as client:
            start = time.monotonic()
            r = client.get(url)
            took = time.monotonic() - start
    assert r.content == expected(200_000)
    assert took >= 0.4   # 200 kB at 400 kB/s


def test_latency_and_jitter_keep_every_body_whole(upstream):
    with FaultProxy(upstream, latency=0.002, jitter=0.01) as proxy:
        port = proxy.start()
        with hc.Client(timeout=30) as client:
            for n in (1, 5000, 70000, 300000):
                assert client.get(f"http://127.0.0.1:{port}/bytes/{n}").content == expected(n)


def test_a_response_head_dripped_byte_by_byte_is_read_whole(upstream):
    with FaultProxy(upstream, drip_headers=0.002) as proxy:
        url = f"http://127.0.0.1:{proxy.start()}/bytes/1000"
        with hc.Client(timeout=30) as client:
            r = client.get(url)
    assert r.status == 200 and r.headers["content-length"] == "1000" and r.content == expected(1000)


def test_a_dripping_head_past_the_time_limit_is_a_timeout_not_a_bad_response(upstream):
    with FaultProxy(upstream, drip_headers=0.05) as proxy:   # ~150 header bytes: several seconds
        url = f"http://127.0.0.1:{proxy.start()}/bytes/10"
        with hc.Client(timeout=0.5) as client, pytest.raises(hc.Timeout):
            client.get(url)


def test_a_reset_mid_body_is_a_transport_error_with_the_response_kept(upstream):
    with FaultProxy(upstream, reset_after=50_000) as proxy:
        url = f"http://127.0.0.1:{proxy.start()}/bytes/500000"
        with hc.Client(timeout=30) as client, pytest.raises(hc.TransportError) as e:
            client.get(url)
    assert not isinstance(e.value, hc.Timeout)
    assert e.value.curl_code == CURLE_RECV_ERROR
    assert e.value.status == 200   # the head had arrived: the error says which response broke
