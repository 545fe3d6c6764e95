import sys
import threading
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest

SERVER_DIR = Path(__file__).resolve().parents[3] / "Tests" / "server"
sys.path.insert(0, str(SERVER_DIR))

from testserver import start_server  # noqa: E402


@pytest.fixture(scope="session")
def base_url():
    """The shared local test server, on 127.0.0.1 and a free port."""
    server, port = start_server()
    yield f"http://127.0.0.1:{port}"
    server.shutdown()


@pytest.fixture
def client():
    import httpcontent as hc
    with hc.Client(timeout=20) as c:
        yield c


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def httpbin_url():
    """httpbin (from the package index, a server nobody here wrote): its WSGI app under a
    threaded wsgiref server on 127.0.0.1 and a free port."""
    httpbin = pytest.importorskip("httpbin")
    server = make_server("127.0.0.1", 0, httpbin.app, server_class=_ThreadingWSGIServer,
                         handler_class=_QuietHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
