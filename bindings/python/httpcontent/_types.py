"""Type aliases and typed dicts shared by the package's modules.

It imports nothing from the package at run time (the classes it names are imported only while
type checking), so any module may import it.
"""

from __future__ import annotations

import enum
import os
from typing import TYPE_CHECKING, Any, Callable, Final, Iterable, Mapping, Tuple, TypedDict, Union

if TYPE_CHECKING:
    from .handlers import Handler
    from .models import CancelToken
    from .session import Retry

#: Headers given to a request or a client: a mapping, or (name, value) pairs (names may repeat).
HeadersInput = Union[Mapping[str, str], Iterable[Tuple[str, str]]]
#: Form fields and query parameters: a mapping or (name, value) pairs; values may be str, bytes,
#: numbers, booleans, None, lists and dicts (nested with the form's array and dict encodings).
FormInput = Union[Mapping[Any, Any], Iterable[Tuple[Any, Any]]]
#: One status code, a range, a (low, high) pair or a "200-299" string.
StatusSpec = Union[int, range, Tuple[int, int], str]
#: A file system path.
PathLike = Union[str, "os.PathLike[str]"]


class _Unset(enum.Enum):
    """A keyword left out (where None means something: `timeout=None` lifts the client's limit)."""
    token = 0


UNSET: Final = _Unset.token


class ProgressInfo(TypedDict):
    """What a progress callback receives (byte counts; -1 where unknown)."""
    received: int
    expected: int
    decoded: int
    sent: int
    to_send: int


#: A progress callback: returning a true value cancels the transfer.
Progress = Callable[[ProgressInfo], Any]


class Metrics(TypedDict):
    """`Response.metrics`."""
    wire_bytes: int
    decoded_bytes: int
    total_seconds: float


class SendOptions(TypedDict, total=False):
    """The keyword options of `Client.request` but the handler (`Client.get` names it apart)."""
    headers: HeadersInput | None
    data: Any
    content_type: str | None
    params: FormInput | None
    form: FormInput | None
    json: Any
    plist: Any
    plist_format: str
    multipart: Iterable[Any] | None
    files: Any  # requests' shapes: {"name": file} or {"name": (filename, content, type)}
    arrays: str | None  # list values in params/form/data: None (the library's default), "brackets", "repeat", "indexed"
    timeout: float | None  # seconds; None: no limit (lifts the client's); left out: the client's
    connect_timeout: float | None
    read_timeout: float | None
    follow_redirects: bool | None
    proxy: str | None
    progress: Progress | None
    cancel: CancelToken | None
    cookies: HeadersInput | None
    auth: Any
    retries: Retry | None
    schema: Any  # an hc.Schema for the json= body


class RequestOptions(SendOptions, total=False):
    """The keyword options of `Client.request` (and `head`, `post`, ... and `Request`)."""
    handler: Handler | None


#: The names RequestOptions allows (checked at run time by Request and Client.map).
REQUEST_OPTION_NAMES = frozenset(RequestOptions.__annotations__)

__all__ = ["HeadersInput", "FormInput", "StatusSpec", "PathLike", "ProgressInfo", "Progress",
           "Metrics", "SendOptions", "RequestOptions", "REQUEST_OPTION_NAMES"]
