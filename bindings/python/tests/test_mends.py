"""Issue 28 ("Mends"): where the binding used to decide on its own, the library decides, and
Python only translates."""

import inspect
import socket
import urllib.parse

import pytest

import httpcontent as hc


def _q(text):
    return urllib.parse.quote(text, safe="")


# -- raise_for_status raises what a refused response raises

def test_raise_for_status_raises_the_error_a_rejected_response_carries(client, base_url):
    url = f"{base_url}/status/404?json=1&message=nothing+here"
    with pytest.raises(hc.UnacceptableStatus) as rejected:
        client.get(url)
    r = client.get(url, handler=hc.Bytes(accept_status=[]))
    with pytest.raises(hc.UnacceptableStatus) as raised:
        r.raise_for_status()
    a, b = rejected.value, raised.value
    assert str(b) == str(a) == "HTTP 404 Not Found: nothing here"
    assert (b.status, b.method, b.url, b.server_message) == (a.status, a.method, a.url, a.server_message) \
        == (404, "GET", url, "nothing here")
    assert b.body == a.body and b.headers["Content-Type"] == "application/json"
    client.get(f"{base_url}/status/201", handler=hc.Bytes(accept_status=[])).raise_for_status()


# -- Errors are also the built-in exceptions except clauses expect

def test_errors_are_also_the_builtin_exceptions(client, base_url):
    assert issubclass(hc.DecodeError, ValueError) and issubclass(hc.Timeout, TimeoutError)
    with pytest.raises(ValueError):
        client.get(f"{base_url}/json?doc=%7B", handler=hc.JSON())
    with pytest.raises(TimeoutError):
        client.get(f"{base_url}/slow?bytes=10&delay=1", timeout=0.2)
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with pytest.raises(ConnectionError) as refused:
        client.get(f"http://127.0.0.1:{port}/")
    assert isinstance(refused.value, hc.TransportError) and type(refused.value) is hc.ConnectError
    with pytest.raises(ConnectionError):
        client.get(f"{base_url}/reset?bytes=1000", handler=hc.Discard())


