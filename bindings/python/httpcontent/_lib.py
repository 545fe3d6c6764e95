"""Loading libhttpcontent and declaring its C functions, once, in one place.

This is the bottom of the package: it imports nothing from it, so every other module may import
it. `_ffi` re-exports it with the helpers that raise `hc.Error`s.

The library is found without any environment variable: next to this package (a wheel built by
setup.py puts it there), in the build folder of a source checkout, or where `cmake --install`
puts it. `HTTPCONTENT_LIBRARY` overrides the search with an exact path.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from ctypes import (CFUNCTYPE, POINTER, c_char_p, c_double, c_int, c_int64, c_long, c_size_t,
                    c_ubyte, c_uint64, c_void_p)
from pathlib import Path
from typing import Any, Sequence

SONAME = "libhttpcontent.so.0"

# Callback types, kept here so every module uses the same ones.
PROGRESS_CB = CFUNCTYPE(c_int, c_void_p, c_int64, c_int64, c_int64, c_int64, c_int64)
WRITE_CB = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t)
ACCEPT_CB = CFUNCTYPE(c_int, c_void_p, c_void_p)
FINISH_CB = CFUNCTYPE(c_int, c_void_p)
CLEANUP_CB = CFUNCTYPE(None, c_void_p, c_int)
ALLOC_CB = CFUNCTYPE(c_void_p, c_void_p, c_size_t)
RELEASE_CB = CFUNCTYPE(None, c_void_p, c_void_p)
DONE_CB = CFUNCTYPE(None, c_void_p, c_int, c_void_p)
READ_CB = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, POINTER(c_size_t))
SOCKET_WATCH_CB = CFUNCTYPE(None, c_void_p, c_int, c_int)
TIMER_WATCH_CB = CFUNCTYPE(None, c_void_p, c_long)


class HandlerVTable(ctypes.Structure):
    """hc_handler_vtable."""
    _fields_ = [("version", ctypes.c_uint), ("accept", ACCEPT_CB), ("consume", WRITE_CB),
                ("finish", FINISH_CB), ("cleanup", CLEANUP_CB)]

c_ubyte_p = POINTER(c_ubyte)


class FetchResult(ctypes.Structure):
    """hc_fetch_result. `bytes` is a char pointer: slicing it (`bytes[:n]`) copies the body into
    a bytes object in one step, the cheapest copy ctypes has."""
    _fields_ = [("response", c_void_p), ("status", c_int), ("bytes", POINTER(ctypes.c_char)),
                ("bytes_len", c_size_t)]


def fetch_slot() -> tuple[FetchResult, Any]:
    """A FetchResult with the pointer to it that `client_fetch` takes."""
    result = FetchResult()
    return result, ctypes.byref(result)


# (name, restype, argtypes) for every function the binding uses.
_DECLARATIONS: list[tuple[str, Any, Sequence[Any]]] = [
    ("hc_version", c_char_p, []),
    ("hc_code_name", c_char_p, [c_int]),
    ("hc_error_last", c_void_p, []),
    ("hc_error_clear", None, []),
    ("hc_error_copy", c_void_p, [c_void_p]),
    ("hc_error_free", None, [c_void_p]),
    ("hc_error_code", c_int, [c_void_p]),
    ("hc_error_message", c_char_p, [c_void_p]),
    ("hc_error_curl_code", c_int, [c_void_p]),
    ("hc_error_status", c_int, [c_void_p]),
    ("hc_error_offset", c_int64, [c_void_p]),
    ("hc_error_record_index", c_int64, [c_void_p]),
    ("hc_error_body", c_int, [c_void_p, POINTER(c_ubyte_p), POINTER(c_size_t)]),
    ("hc_error_server_message", c_char_p, [c_void_p]),
    ("hc_error_schema_count", c_size_t, [c_void_p]),
    ("hc_error_schema_instance_path", c_char_p, [c_void_p, c_size_t]),
    ("hc_error_schema_path", c_char_p, [c_void_p, c_size_t]),
    ("hc_error_schema_keyword", c_char_p, [c_void_p, c_size_t]),
    ("hc_error_schema_message", c_char_p, [c_void_p, c_size_t]),
    ("hc_error_header", c_char_p, [c_void_p, c_char_p]),
    ("hc_error_header_count", c_size_t, [c_void_p]),
    ("hc_error_header_at", c_int, [c_void_p, c_size_t, POINTER(c_char_p), POINTER(c_char_p)]),
    ("hc_error_url", c_char_p, [c_void_p]),
    ("hc_error_method", c_char_p, [c_void_p]),
    ("hc_error_connection_failed", c_int, [c_void_p]),
    ("hc_error_history_count", c_size_t, [c_void_p]),
    ("hc_error_history_at", c_int, [c_void_p, c_size_t, POINTER(c_int), POINTER(c_char_p), POINTER(c_char_p)]),
    ("hc_response_history_count", c_size_t, [c_void_p]),
    ("hc_response_history_at", c_int, [c_void_p, c_size_t, POINTER(c_int), POINTER(c_char_p), POINTER(c_char_p)]),
    ("hc_cancel_new", c_void_p, []),
    ("hc_cancel_cancel", c_int, [c_void_p]),
    ("hc_cancel_is_cancelled", c_int, [c_void_p]),
    ("hc_cancel_free", None, [c_void_p]),
    ("hc_handler_discard_new", c_void_p, []),
    ("hc_handler_bytes_new", c_void_p, [c_size_t]),
    ("hc_handler_free", None, [c_void_p]),
    ("hc_handler_accept_any_status", c_int, [c_void_p]),
    ("hc_handler_accept_status", c_int, [c_void_p, c_int, c_int]),
    ("hc_handler_accept_type", c_int, [c_void_p, c_char_p]),
    ("hc_handler_accept_any_type", c_int, [c_void_p]),
    ("hc_request_new", c_void_p, [c_char_p, c_char_p]),
    ("hc_request_free", None, [c_void_p]),
    ("hc_request_add_header", c_int, [c_void_p, c_char_p, c_char_p]),
    ("hc_request_set_body", c_int, [c_void_p, c_char_p, c_size_t, c_char_p]),
    ("hc_request_set_handler", c_int, [c_void_p, c_void_p]),
    ("hc_request_set_timeout_ms", c_int, [c_void_p, c_long]),
    ("hc_request_set_connect_timeout_ms", c_int, [c_void_p, c_long]),
    ("hc_request_set_read_timeout_ms", c_int, [c_void_p, c_long]),
    ("hc_request_set_follow_redirects", c_int, [c_void_p, c_int]),
    ("hc_request_set_proxy", c_int, [c_void_p, c_char_p]),
    ("hc_request_set_progress", c_int, [c_void_p, PROGRESS_CB, c_void_p]),
    ("hc_request_set_cancel", c_int, [c_void_p, c_void_p]),
    ("hc_client_new", c_void_p, []),
    ("hc_client_free", None, [c_void_p]),
    ("hc_client_set_timeout_ms", c_int, [c_void_p, c_long]),
    ("hc_client_set_connect_timeout_ms", c_int, [c_void_p, c_long]),
    ("hc_client_set_read_timeout_ms", c_int, [c_void_p, c_long]),
    ("hc_client_set_low_speed", c_int, [c_void_p, c_long, c_long]),
    ("hc_client_set_redirects", c_int, [c_void_p, c_int, c_int]),
    ("hc_client_set_user_agent", c_int, [c_void_p, c_char_p]),
    ("hc_client_add_header", c_int, [c_void_p, c_char_p, c_char_p]),
    ("hc_client_set_verify_tls", c_int, [c_void_p, c_int]),
    ("hc_client_set_ca_file", c_int, [c_void_p, c_char_p]),
    ("hc_client_set_client_cert", c_int, [c_void_p, c_char_p, c_char_p]),
    ("hc_client_set_compressed", c_int, [c_void_p, c_int]),
    ("hc_client_send", c_int, [c_void_p, c_void_p, POINTER(c_void_p)]),
    ("hc_response_free", None, [c_void_p]),
    ("hc_response_free_many", None, [c_void_p, c_size_t]),
    ("hc_response_status", c_int, [c_void_p]),
    ("hc_response_url", c_char_p, [c_void_p]),
    ("hc_response_reason", c_char_p, [c_void_p]),
    ("hc_response_http_version", c_char_p, [c_void_p]),
    ("hc_response_header", c_char_p, [c_void_p, c_char_p]),
    ("hc_response_headers_raw", c_int, [c_void_p, POINTER(c_ubyte_p), POINTER(c_size_t)]),
    ("hc_response_media_type", c_char_p, [c_void_p]),
    ("hc_response_charset", c_char_p, [c_void_p]),
    ("hc_response_bytes", c_int, [c_void_p, POINTER(c_ubyte_p), POINTER(c_size_t)]),
    ("hc_response_metrics", c_int, [c_void_p, POINTER(c_int64), POINTER(c_int64), POINTER(c_double)]),
    ("hc_response_check_status", c_int, [c_void_p]),
    ("hc_response_link_count", c_size_t, [c_void_p]),
    ("hc_response_link_at", c_int, [c_void_p, c_size_t, POINTER(c_char_p), POINTER(c_size_t)]),
    ("hc_response_link_param_at", c_int, [c_void_p, c_size_t, c_size_t, POINTER(c_char_p), POINTER(c_char_p)]),
    ("hc_text_decode", c_int, [c_char_p, c_size_t, c_char_p, c_int, c_int, POINTER(c_void_p), POINTER(c_size_t)]),
    ("hc_handler_set_max_size", c_int, [c_void_p, c_size_t]),
    ("hc_defaults_accept_status", c_int, [POINTER(c_int), c_size_t]),
    ("hc_defaults_reset", None, []),
    ("hc_defaults_accept_types", c_int, [POINTER(c_char_p), c_size_t]),
    ("hc_defaults_server_message_paths", c_int, [POINTER(c_char_p), c_size_t]),
    ("hc_handler_empty_statuses", c_int, [c_void_p, POINTER(c_int), c_size_t]),
    ("hc_handler_empty_methods", c_int, [c_void_p, POINTER(c_char_p), c_size_t]),
    ("hc_client_set_rejected_body_limit", c_int, [c_void_p, c_size_t]),
    ("hc_client_set_proxy", c_int, [c_void_p, c_char_p]),
    ("hc_client_set_buffer_sizes", c_int, [c_void_p, c_size_t, c_size_t]),
    ("hc_client_set_no_proxy", c_int, [c_void_p, c_char_p]),
    ("hc_client_set_trust_env", c_int, [c_void_p, c_int]),
    ("hc_handler_text_new", c_void_p, [c_int, c_int]),
    ("hc_handler_image_new", c_void_p, []),
    ("hc_handler_stream_cb_new", c_void_p, [WRITE_CB, c_void_p]),
    ("hc_handler_file_new", c_void_p, [c_char_p, ctypes.c_uint]),
    ("hc_handler_compound_new", c_void_p, [POINTER(c_void_p), c_size_t]),
    ("hc_handler_custom_new", c_void_p, [POINTER(HandlerVTable), c_void_p]),
    ("hc_response_text", c_int, [c_void_p, POINTER(c_void_p), POINTER(c_size_t)]),
    ("hc_response_image", c_int, [c_void_p, POINTER(c_int), POINTER(c_int64), POINTER(c_int64)]),
    ("hc_response_file", c_int, [c_void_p, POINTER(c_char_p), POINTER(c_int64), POINTER(c_int64),
                                 POINTER(c_int)]),
    ("hc_response_streamed", c_int64, [c_void_p]),
    ("hc_response_handler_index", c_int, [c_void_p]),
    ("hc_handler_bytes_set_allocator", c_int, [c_void_p, c_size_t, ALLOC_CB, RELEASE_CB, c_void_p]),
    ("hc_batch_new", c_void_p, [c_void_p]),
    ("hc_batch_free", None, [c_void_p]),
    ("hc_batch_set_concurrency", c_int, [c_void_p, c_size_t]),
    ("hc_batch_default_concurrency", c_size_t, []),
    ("hc_batch_set_host_limit", c_int, [c_void_p, c_size_t]),
    ("hc_batch_add", c_int, [c_void_p, c_void_p, DONE_CB, c_void_p]),
    ("hc_batch_run", c_int, [c_void_p]),
    ("hc_batch_perform", c_int, [c_void_p, POINTER(c_size_t)]),
    ("hc_batch_wait", c_int, [c_void_p, c_int]),
    ("hc_batch_pending", c_size_t, [c_void_p]),
    ("hc_batch_watch", c_int, [c_void_p, SOCKET_WATCH_CB, TIMER_WATCH_CB, c_void_p]),
    ("hc_batch_socket_action", c_int, [c_void_p, c_int, c_int, POINTER(c_size_t)]),
    ("hc_batch_poll_fd", c_int, [c_void_p, POINTER(c_int)]),
    ("hc_batch_add_queued", c_int, [c_void_p, c_void_p, c_uint64]),
    ("hc_batch_fetch_queued", c_int, [c_void_p, c_char_p, c_char_p, c_void_p, c_uint64]),
    ("hc_batch_fetch_queued_many", c_int, [c_void_p, c_size_t, c_void_p, c_void_p, c_void_p, c_void_p]),
    ("hc_batch_cancel_queued", c_int, [c_void_p, c_uint64]),
    ("hc_batch_step", c_int, [c_void_p, c_size_t, c_void_p, c_void_p, c_void_p, c_void_p, c_void_p]),
    ("hc_live_handles", c_int64, []),
]

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None

# The functions of the per-request path, set when the library is loaded: a module attribute is
# cheaper than a lookup on the CDLL. `client_fetch` (hc_client_fetch) has no argtypes, so ctypes
# calls no converter: callers pass C values already, in the C order (client and handler as
# as_arg(c_void_p, ...), bytes method and url, timeout_ms as a c_long, follow_redirects as an
# int, a fetch_slot's pointer).
client_fetch: Any = None
response_free: Any = None


def as_arg(ctype: Any, value: Any) -> Any:
    """`value` converted once for `client_fetch`: from_param's result is what ctypes passes to C
    as is (a c_void_p or c_long instance would be converted again on every call)."""
    return ctype.from_param(value)


def _candidates() -> list[str]:
    override = os.environ.get("HTTPCONTENT_LIBRARY")
    if override:
        return [override]
    here = Path(__file__).resolve().parent
    paths = [here / SONAME, here.parents[2] / "build" / SONAME]
    paths += [Path(d) / SONAME for d in ("/usr/local/lib", "/usr/local/lib64", "/usr/lib",
                                         "/usr/lib/x86_64-linux-gnu", "/usr/lib64")]
    found = [str(p) for p in paths if p.exists()]
    system = ctypes.util.find_library("httpcontent")
    if system:
        found.append(system)
    return found


def lib() -> ctypes.CDLL:
    """The loaded library, with every function declared. Loaded on first use."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            _lib = _load()
    return _lib


def _load() -> ctypes.CDLL:
    candidates = _candidates()
    errors: list[str] = []
    for path in candidates:
        try:
            loaded = ctypes.CDLL(path)
            loaded.hc_version  # probe one symbol: is this really our library?
        except (OSError, AttributeError) as exc:
            errors.append(f"{path}: {exc}")
            continue
        for name, restype, argtypes in _DECLARATIONS:
            fn = getattr(loaded, name)
            fn.restype = restype
            fn.argtypes = argtypes
        global client_fetch, response_free
        client_fetch = loaded._FuncPtr(("hc_client_fetch", loaded))
        client_fetch.restype = c_int
        response_free = loaded.hc_response_free
        return loaded
    tried = "; ".join(errors) if errors else "no candidate found"
    raise ImportError(
        f"httpcontent: cannot load {SONAME} ({tried}). Build it with "
        "`cmake -S . -B build -G Ninja && cmake --build build` in the source checkout, "
        "install it with `cmake --install build`, or point HTTPCONTENT_LIBRARY at it.")


def declare(name: str, restype: Any, argtypes: Any) -> None:
    """Adds declarations from feature modules (JSON, bodies) to the one table. `argtypes` is a
    list of ctypes types (typed Any: a loop over mixed declarations infers `object`)."""
    _DECLARATIONS.append((name, restype, argtypes))
    if _lib is not None:
        fn = getattr(_lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


def borrowed(getter: Any, handle: Any) -> bytes | None:
    """Copies a (pointer, length) pair the library lends out into Python bytes; None when the
    getter fails (`_ffi.borrowed_bytes` raises the library's error instead)."""
    data = c_ubyte_p()
    size = c_size_t()
    if getter(handle, ctypes.byref(data), ctypes.byref(size)) != 0:
        return None
    if not size.value:
        return b""
    return ctypes.string_at(data, size.value)
