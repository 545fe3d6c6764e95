"""The client, as the public module: `Client` (from _client.py) and the values it sends and
returns (Headers, Request, Response, CancelToken, from models.py), re-exported here for code
that imported them from this module."""

from __future__ import annotations

from ._aclient import default_concurrency
from ._client import Client
from .errors import CallbackError
from .models import CancelToken, Headers, Request, Response

__all__ = ["Client", "Request", "Response", "Headers", "CancelToken", "CallbackError", "default_concurrency"]
