"""httpcontent: send HTTP requests and decide, per request, what becomes of the response body.

    import httpcontent as hc
    with hc.Client(timeout=10) as client:
        r = client.get(url, handler=hc.Bytes())
        r.status, r.headers["content-type"], r.url, r.content
"""

from ._lib import lib as _library
from ._types import (FormInput, HeadersInput, Metrics, ProgressInfo, RequestOptions, SendOptions,
                     StatusSpec)
from .bodies import BytesPart, Field, FilePart, form_encode
from .cache import Cache
from .transport import ConnectionShare
from .client import Client, default_concurrency
from .models import CancelToken, Headers, Request, Response
from ._history import HistoryEntry
from .errors import (CallbackError, Cancelled, ChecksumMismatch, ConnectError, DecodeError, Error,
                     InvalidArgument, LocalIOError, Timeout, TooLarge, TooManyRedirects, TransportError,
                     UnacceptableContentType, UnacceptableStatus)
from .session import AuthHook, BasicAuth, BearerAuth, Cookie, Cookies, DigestAuth, Retry
from .errors import RequestSchemaError, SchemaError
from .json import JSON, JSONItems
from .image import DecodedImage, DecodedImageContent, Image, ImageContent
from .records import SSE, JSONLines, Lines, ServerSentEvent
from .xml import XML, XMLElements, XMLEvents
from .plist import Plist
from .schema import Schema
from .handlers import (Bytes, Compound, Discard, Download, File, Handler,
                       ResponseHead, Stream, Text, reset_defaults, set_default_accept_status,
                       set_default_accept_types, set_server_message_paths)

__version__ = "0.1.0"


def library_version() -> str:
    """The version of the loaded libhttpcontent."""
    version: bytes = _library().hc_version()
    return version.decode()


__all__ = ["Client", "Cache", "ConnectionShare", "Request", "Response", "Headers", "CancelToken", "HistoryEntry", "Handler", "ResponseHead", "Discard",
           "default_concurrency",
           "Bytes", "Text", "Image", "ImageContent", "Stream", "File", "Download", "Compound",
           "JSON", "JSONItems", "Plist", "DecodedImage", "DecodedImageContent", "Lines", "JSONLines", "SSE", "ServerSentEvent", "XML", "XMLElements", "XMLEvents",
           "Schema", "SchemaError", "RequestSchemaError",
           "set_default_accept_status", "set_default_accept_types",
           "set_server_message_paths", "reset_defaults", "form_encode", "Field", "FilePart",
           "BytesPart",
           "Error", "InvalidArgument", "TransportError", "Timeout", "ConnectError", "TooManyRedirects",
           "UnacceptableStatus", "UnacceptableContentType", "DecodeError", "TooLarge",
           "Cancelled", "LocalIOError", "CallbackError", "library_version",
           "ChecksumMismatch", "Cookie", "Cookies", "BasicAuth", "BearerAuth", "DigestAuth",
           "AuthHook", "Retry"]


# The types of options and callbacks, for typed code (see examples/python/typed_example.py).
__all__ += ["RequestOptions", "SendOptions", "ProgressInfo", "Metrics", "HeadersInput", "FormInput",
            "StatusSpec"]


def live_handles() -> int:
    """How many library handles are alive (a leak check for tests)."""
    return int(_library().hc_live_handles())
