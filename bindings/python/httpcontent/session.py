"""The session layers: cookies, authentication and retries (the C header's "Session" section)."""

from __future__ import annotations

from ctypes import CFUNCTYPE, POINTER, c_char_p, c_int, c_int64, c_size_t, c_uint, c_void_p
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Tuple, Union, cast

from . import _ffi
from . import _constants as _c
from .errors import check

COOKIE_CB = CFUNCTYPE(c_int, c_void_p, c_char_p, c_char_p, c_char_p, c_char_p, c_uint, c_int64)
AUTH_CB = CFUNCTYPE(c_int, c_void_p, c_void_p, c_int)

for _name, _res, _args in [
    ("hc_client_set_cookies", c_int, [c_void_p, c_int, c_char_p]),
    ("hc_client_cookies", c_int, [c_void_p, COOKIE_CB, c_void_p]),
    ("hc_client_cookie_set", c_int, [c_void_p, c_char_p, c_char_p, c_char_p, c_char_p, c_uint, c_int64]),
    ("hc_client_cookies_clear", c_int, [c_void_p]),
    ("hc_client_cookies_save", c_int, [c_void_p, c_char_p]),
    ("hc_client_cookies_load", c_int, [c_void_p, c_char_p]),
    ("hc_request_add_cookie", c_int, [c_void_p, c_char_p, c_char_p]),
    ("hc_client_set_auth", c_int, [c_void_p, c_int, c_char_p, c_char_p, AUTH_CB, c_void_p]),
    ("hc_request_set_auth", c_int, [c_void_p, c_int, c_char_p, c_char_p, AUTH_CB, c_void_p]),
    ("hc_auth_request_set_header", c_int, [c_void_p, c_char_p, c_char_p]),
    ("hc_client_set_retry", c_int, [c_void_p, c_int, c_int, c_int, POINTER(c_int), c_size_t, c_uint]),
    ("hc_request_set_retry", c_int, [c_void_p, c_int, c_int, c_int, POINTER(c_int), c_size_t, c_uint]),
    ("hc_error_attempts", c_int, [c_void_p]),
    ("hc_default_retry_total", c_int, []),
    ("hc_default_retry_backoff_ms", c_int, []),
    ("hc_default_retry_cap_ms", c_int, []),
    ("hc_default_retry_statuses", c_size_t, [POINTER(c_int), c_size_t]),
]:
    _ffi.declare(_name, _res, _args)

_SECURE, _HTTPONLY, _SUBDOMAINS = _c.HC_COOKIE_SECURE, _c.HC_COOKIE_HTTPONLY, _c.HC_COOKIE_SUBDOMAINS


# ---------------------------------------------------------------- cookies

@dataclass(frozen=True)
class Cookie:
    """One cookie of a client's jar."""
    name: str
    value: str
    domain: str
    path: str = "/"
    secure: bool = False
    http_only: bool = False
    subdomains: bool = False
    expires: int = 0  # seconds since 1970; 0: a session cookie


class Cookies:
    """`client.cookies`: a live, mapping-like view of the client's cookie jar (libcurl's engine).
    `cookies["name"]` is the value of the first cookie of that name; `"name" in cookies`;
    `cookies.get(name, default, domain=None)`; `cookies.set(name, value, domain=...)` (a cookie
    needs the host it is sent to); `cookies.clear()`; `cookies.save(path=None)`;
    `cookies.load(path)`; `list(cookies.jar())` gives every `Cookie`."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def jar(self) -> list[Cookie]:
        found: list[Cookie] = []

        def each(_userdata: int | None, name: bytes, value: bytes, domain: bytes, path: bytes,
                 flags: int, expires: int) -> int:
            found.append(Cookie(name.decode("utf-8", "replace"), value.decode("utf-8", "replace"),
                                domain.decode("utf-8", "replace"), path.decode("utf-8", "replace"),
                                bool(flags & _SECURE), bool(flags & _HTTPONLY),
                                bool(flags & _SUBDOMAINS), int(expires)))
            return 0

        callback = COOKIE_CB(each)
        check(_ffi.lib().hc_client_cookies(self._client, callback, None))
        return found

    def get(self, name: str, default: str | None = None, domain: str | None = None) -> str | None:
        for cookie in self.jar():
            if cookie.name == name and (domain is None or cookie.domain == domain):
                return cookie.value
        return default

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __setitem__(self, name: str, value: str) -> None:
        raise TypeError("a cookie needs the host it is sent to: cookies.set(name, value, domain=...)")

    def __contains__(self, name: object) -> bool:
        return any(cookie.name == name for cookie in self.jar())

    def __iter__(self) -> Iterator[str]:
        return iter([cookie.name for cookie in self.jar()])

    def __len__(self) -> int:
        return len(self.jar())

    def items(self) -> list[tuple[str, str]]:
        return [(cookie.name, cookie.value) for cookie in self.jar()]

    def set(self, name: str, value: str, *, domain: str, path: str = "/", secure: bool = False,
            http_only: bool = False, subdomains: bool = False, expires: int = 0) -> None:
        flags = (_SECURE if secure else 0) | (_HTTPONLY if http_only else 0) | (_SUBDOMAINS if subdomains else 0)
        check(_ffi.lib().hc_client_cookie_set(self._client, _ffi.text(name), _ffi.text(value), _ffi.text(domain),
                                              _ffi.text(path), flags, int(expires)))

    def clear(self) -> None:
        check(_ffi.lib().hc_client_cookies_clear(self._client))

    def save(self, path: str | None = None) -> None:
        check(_ffi.lib().hc_client_cookies_save(self._client, _ffi.text(path)))

    def load(self, path: str) -> None:
        check(_ffi.lib().hc_client_cookies_load(self._client, _ffi.text(path)))

    def __repr__(self) -> str:
        return f"<Cookies {dict(self.items())!r}>"


def cookie_pairs(cookies: Union[Mapping[str, str], Iterable[Tuple[str, str]]]) -> list[tuple[str, str]]:
    if isinstance(cookies, Mapping):
        mapping = cast("Mapping[str, str]", cookies)
        return [(str(k), str(v)) for k, v in mapping.items()]
    return [(str(k), str(v)) for k, v in cookies]


# ---------------------------------------------------------------- authentication

_NONE, _BASIC, _BEARER, _DIGEST, _CUSTOM = (_c.HC_AUTH_NONE, _c.HC_AUTH_BASIC, _c.HC_AUTH_BEARER,
                                            _c.HC_AUTH_DIGEST, _c.HC_AUTH_CUSTOM)


class BasicAuth:
    """HTTP Basic; `auth=("user", "pass")` is the same."""

    def __init__(self, user: str, password: str) -> None:
        self.user, self.password = user, password


class BearerAuth:
    """`Authorization: Bearer <token>`."""

    def __init__(self, token: str) -> None:
        self.token = token


class DigestAuth:
    """HTTP Digest, answered by libcurl."""

    def __init__(self, user: str, password: str) -> None:
        self.user, self.password = user, password


class AuthHook:
    """Custom authentication: `hook(refresh)` returns the headers to set on each request (a
    dict); after a 401 it is called once more with `refresh=True` and the request is sent again.
    A plain callable given as `auth=` is wrapped in one."""

    def __init__(self, hook: Callable[[bool], Mapping[str, str]]) -> None:
        self.hook = hook


def auth_args(auth: Any, raised: list[BaseException]) -> tuple[int, bytes | None, bytes | None, Any]:
    """(kind, a, b, callback) for hc_*_set_auth; the callback must be kept alive by the caller."""
    if auth is None:
        return _NONE, None, None, AUTH_CB()
    if isinstance(auth, tuple):
        user, password = cast("Tuple[str, str]", auth)
        auth = BasicAuth(user, password)
    if isinstance(auth, BasicAuth):
        return _BASIC, _ffi.text(auth.user), _ffi.text(auth.password), AUTH_CB()
    if isinstance(auth, DigestAuth):
        return _DIGEST, _ffi.text(auth.user), _ffi.text(auth.password), AUTH_CB()
    if isinstance(auth, BearerAuth):
        return _BEARER, _ffi.text(auth.token), None, AUTH_CB()
    if callable(auth) and not isinstance(auth, AuthHook):
        auth = AuthHook(cast("Callable[[bool], Mapping[str, str]]", auth))
    if isinstance(auth, AuthHook):
        hook = auth.hook

        def call(_userdata: int | None, request: int | None, refresh: int) -> int:
            try:
                for name, value in dict(hook(bool(refresh)) or {}).items():
                    if _ffi.lib().hc_auth_request_set_header(request, _ffi.text(name), _ffi.text(value)) != 0:
                        from .errors import last_error
                        raise last_error()
                return 0
            except BaseException as exc:  # noqa: BLE001 - re-raised after the send
                raised.append(exc)
                return 1

        return _CUSTOM, None, None, AUTH_CB(call)
    raise TypeError(f"auth must be (user, password), BasicAuth, BearerAuth, DigestAuth or a hook, not {auth!r}")


# ---------------------------------------------------------------- retries

_ALL_METHODS, _NO_CONNECTION_ERRORS, _NO_TIMEOUTS, _IGNORE_RETRY_AFTER = (
    _c.HC_RETRY_ALL_METHODS, _c.HC_RETRY_NO_CONNECTION_ERRORS, _c.HC_RETRY_NO_TIMEOUTS,
    _c.HC_RETRY_IGNORE_RETRY_AFTER)


def _default_statuses() -> tuple[int, ...]:
    lib = _ffi.lib()
    out = (c_int * lib.hc_default_retry_statuses(None, 0))()
    lib.hc_default_retry_statuses(out, len(out))
    return tuple(out)


class Retry:
    """An opt-in retry policy. `total` counts all attempts (the first included); before attempt
    n+1 the client waits a random time up to min(`cap`, `backoff` * 2**(n-1)) seconds, or what a
    Retry-After header asks (a longer ask than `cap` ends the retries). `statuses` are the
    rejected statuses retried; connection errors and timeouts are retried unless turned off;
    only idempotent methods unless `all_methods`; only bodies that can be sent again. A setting
    left None is the library's default (`hc_default_retry_*`: 3 attempts, 0.1 s, 30 s, 429, 502,
    503 and 504)."""

    def __init__(self, total: int | None = None, backoff: float | None = None, *, cap: float | None = None,
                 statuses: Iterable[int] | None = None, connection_errors: bool = True,
                 timeouts: bool = True, all_methods: bool = False, respect_retry_after: bool = True) -> None:
        lib = _ffi.lib()
        self.total = int(lib.hc_default_retry_total() if total is None else total)
        self.backoff = float(lib.hc_default_retry_backoff_ms() / 1000 if backoff is None else backoff)
        self.cap = float(lib.hc_default_retry_cap_ms() / 1000 if cap is None else cap)
        if self.total < 1:
            raise ValueError("total counts every attempt: at least 1")
        self.statuses = _default_statuses() if statuses is None else tuple(int(s) for s in statuses)
        self.connection_errors, self.timeouts = connection_errors, timeouts
        self.all_methods, self.respect_retry_after = all_methods, respect_retry_after

    def args(self) -> tuple[int, int, int, Any, int, int]:
        """The arguments of hc_client_set_retry / hc_request_set_retry after the handle."""
        flags = ((_ALL_METHODS if self.all_methods else 0)
                 | (0 if self.connection_errors else _NO_CONNECTION_ERRORS)
                 | (0 if self.timeouts else _NO_TIMEOUTS)
                 | (0 if self.respect_retry_after else _IGNORE_RETRY_AFTER))
        statuses = (c_int * len(self.statuses))(*self.statuses)
        return (self.total, int(self.backoff * 1000), int(self.cap * 1000), statuses, len(self.statuses), flags)

    def __repr__(self) -> str:
        return f"Retry(total={self.total}, backoff={self.backoff}, statuses={self.statuses})"


__all__ = ["Cookie", "Cookies", "BasicAuth", "BearerAuth", "DigestAuth", "AuthHook", "Retry"]
