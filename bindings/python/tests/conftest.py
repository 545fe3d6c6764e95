import sys
from pathlib import Path

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
