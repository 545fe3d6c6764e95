"""Where connections go and how TLS is set up (issue 31): the keywords `hc.Client` passes here
(`resolve`, `unix_socket`, `ca_pem`, `cert_pem`, `cert_p12`, `min_tls`, `ciphers`,
`pinned_public_key`, `happy_eyeballs_timeout`, `tls_session_tickets`, `http_version`,
`host_limit`, `connection_share`), `ConnectionShare` and `Response.timings`.
Each is one setter of include/httpcontent/transport.h; the core checks the values.
"""

from __future__ import annotations

import ctypes
from typing import Any, Sequence, TypedDict

from . import _constants as _c
from . import _ffi
from ._handle import Handle
from .errors import check

for _name, _res, _args in [
    ("hc_client_set_resolve", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]),
    ("hc_client_set_unix_socket", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    ("hc_client_set_ca_pem", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    ("hc_client_set_client_cert_pem", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]),
    ("hc_client_set_client_cert_p12", ctypes.c_int,
     [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]),
    ("hc_client_set_min_tls", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    ("hc_client_set_ciphers", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]),
    ("hc_client_set_pinned_public_key", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    ("hc_client_set_happy_eyeballs_ms", ctypes.c_int, [ctypes.c_void_p, ctypes.c_long]),
    ("hc_client_set_tls_session_tickets", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    ("hc_client_set_http_version", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    ("hc_client_set_host_limit", ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t]),
    ("hc_response_timing", ctypes.c_double, [ctypes.c_void_p, ctypes.c_int]),
    ("hc_connection_share_new", ctypes.c_void_p, []),
    ("hc_connection_share_free", None, [ctypes.c_void_p]),
    ("hc_client_set_connection_share", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
]:
    _ffi.declare(_name, _res, _args)

HTTP_VERSIONS = {"1.1": _c.HC_HTTP_1_1, "2": _c.HC_HTTP_2, "2-prior-knowledge": _c.HC_HTTP_2_PRIOR_KNOWLEDGE}
TLS_VERSIONS = {"1.0": _c.HC_TLS_1_0, "1.1": _c.HC_TLS_1_1, "1.2": _c.HC_TLS_1_2, "1.3": _c.HC_TLS_1_3}


class ConnectionShare(Handle):
    """TLS sessions and DNS entries for several clients (`hc.Client(connection_share=...)`,
    with `cookies=False`): each client resumes the TLS sessions the others made. A client with
    cookies on shares its cookie jar's instead (libcurl gives a transfer one share), so giving
    it one raises `hc.InvalidArgument`. Clients hold their own reference: closing the share
    early is safe."""

    __slots__ = ()

    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_connection_share_free(ptr)

    def __init__(self) -> None:
        super().__init__(_ffi.lib().hc_connection_share_new())


class Timings(TypedDict):
    """`Response.timings`: when each phase ended, in seconds from the transfer's start, as
    libcurl measured it (a phase a kept connection skipped ends when the one before it did)."""
    dns: float
    connect: float
    tls: float
    pretransfer: float
    first_byte: float
    total: float
    redirect: float


def _text(value: str | None) -> bytes | None:
    return None if value is None else _ffi.text(value)


def configure(client: Any, *, resolve: Sequence[str] | None = None, unix_socket: str | None = None,
              ca_pem: bytes | None = None, cert_pem: bytes | tuple[bytes, bytes] | None = None,
              cert_p12: bytes | tuple[bytes, str] | None = None, min_tls: str | None = None,
              ciphers: str | tuple[str | None, str | None] | None = None,
              pinned_public_key: str | None = None, happy_eyeballs_timeout: float | None = None,
              tls_session_tickets: bool = True, http_version: str | None = None,
              host_limit: int | None = None,
              connection_share: ConnectionShare | None = None) -> None:
    """Applies the transport keywords of `hc.Client` to its native client (the defaults set
    nothing). `host_limit`: most connections to one host for `map`, `amap` and the asyncio
    requests (`hc_client_set_host_limit`; 0 or None: no limit)."""
    lib = _ffi.lib()
    if resolve:
        entries = (ctypes.c_char_p * len(resolve))(*(_ffi.text(e) for e in resolve))
        check(lib.hc_client_set_resolve(client, entries, len(resolve)))
    if unix_socket is not None:
        check(lib.hc_client_set_unix_socket(client, _ffi.text(unix_socket)))
    if ca_pem is not None:
        check(lib.hc_client_set_ca_pem(client, bytes(ca_pem), len(ca_pem)))
    if cert_pem is not None:
        cert, key = (cert_pem, None) if isinstance(cert_pem, (bytes, bytearray)) else cert_pem
        check(lib.hc_client_set_client_cert_pem(client, bytes(cert), len(cert),
                                                None if key is None else bytes(key), 0 if key is None else len(key)))
    if cert_p12 is not None:
        bundle, password = (cert_p12, None) if isinstance(cert_p12, (bytes, bytearray)) else cert_p12
        check(lib.hc_client_set_client_cert_p12(client, bytes(bundle), len(bundle), _text(password)))
    if min_tls is not None:
        if min_tls not in TLS_VERSIONS:
            raise ValueError(f"min_tls must be one of {', '.join(TLS_VERSIONS)}, not {min_tls!r}")
        check(lib.hc_client_set_min_tls(client, TLS_VERSIONS[min_tls]))
    if ciphers is not None:
        tls12, tls13 = (ciphers, None) if isinstance(ciphers, str) else ciphers
        check(lib.hc_client_set_ciphers(client, _text(tls12), _text(tls13)))
    if pinned_public_key is not None:
        check(lib.hc_client_set_pinned_public_key(client, _ffi.text(pinned_public_key)))
    if happy_eyeballs_timeout is not None:
        check(lib.hc_client_set_happy_eyeballs_ms(client, int(happy_eyeballs_timeout * 1000)))
    if http_version is not None:
        if http_version not in HTTP_VERSIONS:
            raise ValueError(f"http_version must be one of {', '.join(HTTP_VERSIONS)}, not {http_version!r}")
        check(lib.hc_client_set_http_version(client, HTTP_VERSIONS[http_version]))
    if not tls_session_tickets:
        check(lib.hc_client_set_tls_session_tickets(client, 0))
    if host_limit is not None:
        if host_limit < 0:
            raise ValueError(f"host_limit must be 0 (no limit) or more, not {host_limit!r}")
        check(lib.hc_client_set_host_limit(client, int(host_limit)))
    if connection_share is not None:
        check(lib.hc_client_set_connection_share(client, connection_share))


def timings(native: Any) -> Timings:
    """The per-phase timings of a native response."""
    at = _ffi.lib().hc_response_timing
    return Timings(dns=float(at(native, 0)), connect=float(at(native, 1)), tls=float(at(native, 2)),
                   pretransfer=float(at(native, 3)), first_byte=float(at(native, 4)),
                   total=float(at(native, 5)), redirect=float(at(native, 6)))
