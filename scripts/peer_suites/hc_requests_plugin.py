"""pytest plugin (`-p hc_requests_plugin`): every requests.Session mounts httpcontent's
RequestsAdapter. Session.__init__ calls the name `requests.sessions.HTTPAdapter`; that name
becomes a factory returning our adapter. Tests that build an HTTPAdapter themselves, or mount
one explicitly, keep it (requests.adapters.HTTPAdapter is left as it is)."""

import requests.sessions

from httpcontent.adapters import RequestsAdapter


def _adapter(*args, **kwargs):
    # HTTPAdapter's pool arguments (pool_connections, pool_maxsize, max_retries, pool_block)
    # have no meaning for libcurl's pool; Session.__init__ passes none.
    return RequestsAdapter()


def pytest_configure(config):
    requests.sessions.HTTPAdapter = _adapter
