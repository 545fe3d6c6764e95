"""XML: whole documents parsed by libxml2 as the bytes arrive, given as
`xml.etree.ElementTree.Element`s, and path streaming that yields elements one by one in bounded
memory. (Named xmlcontent, not xml, so the package never shadows the standard library's `xml`.)

The library writes the elements as a pickle while it parses, and one `pickle.loads` (in C) makes
every Element, driving the C `ET.TreeBuilder`: no Python code runs per element. The bytes come from the library, never from the
document itself (strings are length-prefixed), so a document cannot inject pickle opcodes."""

from __future__ import annotations

import collections
import ctypes
import pickle
import xml.etree.ElementTree as ET
from typing import Any, AsyncGenerator, Callable, Generator, Iterable, Iterator

from . import _feed, _ffi
from . import _constants as _c
from ._aio import Send, loop_items
from ._feed import LoopFeed
from ._handle import Handle
from .errors import check
from .handlers import Handler
from .models import Request

_BATCH_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                             ctypes.c_size_t, ctypes.c_size_t)
_STOP = _c.HC_XML_STOP
_START_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                             ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.c_size_t)
_TEXT_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                            ctypes.c_size_t)
_END_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t)
_COMMENT_CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)


class _Callbacks(ctypes.Structure):
    """hc_xml_callbacks (HC_XML_CALLBACKS_VERSION 1); a field left unset is NULL."""
    _fields_ = [("version", ctypes.c_uint), ("start_element", _START_CB), ("text", _TEXT_CB),
                ("end_element", _END_CB), ("comment", _COMMENT_CB)]

for _name, _res, _args in [
    ("hc_xml_options_new", ctypes.c_void_p, []),
    ("hc_xml_options_free", None, [ctypes.c_void_p]),
    ("hc_xml_options_set", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64]),
    ("hc_handler_xml_pickle_new", ctypes.c_void_p, [ctypes.c_void_p]),
    ("hc_handler_xml_events_new", ctypes.c_void_p, [ctypes.c_void_p, ctypes.POINTER(_Callbacks), ctypes.c_void_p]),
    ("hc_handler_xml_batches_pickle_new", ctypes.c_void_p, [ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                                            ctypes.c_void_p, _BATCH_CB, ctypes.c_void_p]),
    ("hc_response_xml_pickle", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                              ctypes.POINTER(ctypes.c_size_t)]),
    ("hc_response_xml_elements", ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                                                ctypes.POINTER(ctypes.c_int)]),
]:
    _ffi.declare(_name, _res, _args)

_OPTIONS = {"keep_comments": 1, "max_depth": 3, "max_size": 4, "max_entity_expansion": 5,
            "allow_empty": 6, "limit": 7, "batch_bytes": 8}


class _Options(Handle):
    @staticmethod
    def _free(ptr: int) -> None:
        _ffi.lib().hc_xml_options_free(ptr)

    def __init__(self, **values: Any) -> None:
        super().__init__(_ffi.lib().hc_xml_options_new())
        for name, value in values.items():
            if value is None:
                continue
            if name not in _OPTIONS:
                raise TypeError(f"unknown XML option {name!r}")
            check(_ffi.lib().hc_xml_options_set(self, _OPTIONS[name], int(value)))


def _loads(data: int, size: int) -> Any:
    # Read in place: the bytes belong to the response (or the callback), alive during this call.
    return pickle.loads((ctypes.c_char * size).from_address(data))


class XML(Handler):
    """Parses the body as XML with libxml2 while it arrives and gives the root as an
    `xml.etree.ElementTree.Element` (tag `{ns}name`, attrib, text, tail, children), as
    `ET.fromstring(body)` would. Comments are dropped unless `keep_comments` (then `ET.Comment`
    elements); CDATA joins the text. Secure by default: no DTD or external entity is loaded,
    entity expansion is bounded (`max_entity_expansion`, 1 MiB beyond the document's size), depth
    is at most `max_depth` (256): a hostile document raises `hc.DecodeError`. The encoding is the
    Content-Type charset, else the byte order mark or the declaration. `allow_empty` gives None
    for an empty body (as a 204 or HEAD always does). Accepts 200-299 and application/xml,
    text/xml, */*+xml."""

    _any_type_by_default = False
    _may_raise = False

    def __init__(self, *, keep_comments: bool = False, max_depth: int | None = None,
                 max_entity_expansion: int | None = None, allow_empty: bool = False,
                 **options: Any) -> None:
        super().__init__(**options)
        self._options = dict(keep_comments=keep_comments, max_depth=max_depth,
                             max_entity_expansion=max_entity_expansion, allow_empty=allow_empty)

    def _new_native(self) -> int | None:
        with _Options(**self._options) as opts:
            native: int | None = _ffi.lib().hc_handler_xml_pickle_new(opts)
            return native

    def _content(self, response_ptr: int) -> ET.Element | None:
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        check(_ffi.lib().hc_response_xml_pickle(response_ptr, ctypes.byref(data), ctypes.byref(size)))
        if not data.value:
            return None
        root: ET.Element = _loads(data.value, size.value)
        return root


class XMLElements(Handler):
    """Path streaming: calls `on_element(element)` (or `on_element(path, element)` with several
    paths) with each element matching `path` (`feed/entry`: steps from the root element, each a
    local name in any namespace, `{uri}name`, `{}name` or `*`), complete, as soon as its end tag
    arrives; the library then forgets it. `on_element` may return True to stop early. `limit`
    stops after that many. Content: the number of elements delivered."""

    _any_type_by_default = False
    _shared = True

    def __init__(self, path: str | Iterable[str], on_element: Callable[..., Any], *,
                 limit: int | None = None, keep_comments: bool = False,
                 max_depth: int | None = None, max_entity_expansion: int | None = None,
                 **options: Any) -> None:
        super().__init__(**options)
        self.paths = [path] if isinstance(path, str) else list(path)
        if not self.paths:
            raise ValueError("XMLElements needs at least one path")
        self.on_element = on_element
        self._options = dict(limit=limit, keep_comments=keep_comments, max_depth=max_depth,
                             max_entity_expansion=max_entity_expansion)

    def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
        several = len(self.paths) > 1

        def on_batch(_userdata: int | None, path_index: int, data: int, size: int, _count: int) -> int:
            def run() -> int:
                for element in _loads(data, size):
                    stop = (self.on_element(self.paths[path_index], element) if several
                            else self.on_element(element))
                    if stop is True:
                        return _STOP
                return 0
            return self._guard(run, sink)

        self._keep = _BATCH_CB(on_batch)
        names = (ctypes.c_char_p * len(self.paths))(*[p.encode() for p in self.paths])
        with _Options(**self._options) as opts:
            native: int | None = _ffi.lib().hc_handler_xml_batches_pickle_new(
                names, len(self.paths), opts, self._keep, None)
            return native

    def _content(self, response_ptr: int) -> int:
        count = ctypes.c_size_t()
        check(_ffi.lib().hc_response_xml_elements(response_ptr, ctypes.byref(count), None))
        return count.value


class XMLEvents(Handler):
    """The document's events, for handlers of one's own, while the body arrives (the parse,
    security and limits of `XML`): `on_start(tag, attrib)` at each start tag (`tag` as
    ElementTree writes it, `{uri}name` or `name`; `attrib` a dict with keys in the same form),
    `on_text(text)` with the character data between two tags (entities replaced, CDATA joined;
    text outside the root element is not reported), `on_end(tag)` at each end tag, and
    `on_comment(text)` for comments (giving it keeps them). Nothing is kept between events.

    `target=` takes an object with any of `start`, `data`, `end`, `comment` and `close` (an
    `xml.etree.ElementTree.TreeBuilder` fits, as for `ET.XMLParser(target=...)`); the content is
    then `target.close()`, else None. Any callback may return True to stop the transfer early,
    with success. Accepts 200-299 and application/xml, text/xml, */*+xml."""

    _any_type_by_default = False
    _shared = True

    def __init__(self, on_start: Callable[[str, dict[str, str]], Any] | None = None,
                 on_text: Callable[[str], Any] | None = None, on_end: Callable[[str], Any] | None = None,
                 on_comment: Callable[[str], Any] | None = None, *, target: Any = None,
                 max_depth: int | None = None, max_entity_expansion: int | None = None,
                 allow_empty: bool = False, **options: Any) -> None:
        super().__init__(**options)
        self.target = target
        self.on_start = on_start if on_start is not None else getattr(target, "start", None)
        self.on_text = on_text if on_text is not None else getattr(target, "data", None)
        self.on_end = on_end if on_end is not None else getattr(target, "end", None)
        self.on_comment = on_comment if on_comment is not None else getattr(target, "comment", None)
        self._options = dict(keep_comments=self.on_comment is not None, max_depth=max_depth,
                             max_entity_expansion=max_entity_expansion, allow_empty=allow_empty)

    def _new_native(self, sink: list[BaseException] | None = None) -> int | None:
        tags: dict[tuple[bytes, bytes | None], str] = {}  # names repeat: one str each

        def tag_of(name: bytes, ns: bytes | None) -> str:
            tag = tags.get((name, ns))
            if tag is None:
                tag = name.decode() if ns is None else "{" + ns.decode() + "}" + name.decode()
                if len(tags) < 4096:
                    tags[(name, ns)] = tag
            return tag

        def verdict(result: Any) -> int:
            return _STOP if result is True else 0

        callbacks = _Callbacks(1)
        on_start, on_text, on_end, on_comment = self.on_start, self.on_text, self.on_end, self.on_comment
        if on_start is not None:
            start_cb = on_start

            def start(_u: int | None, name: bytes, ns: bytes | None, _prefix: bytes | None,
                      attributes: Any, count: int, _depth: int) -> int:
                def run() -> int:
                    attrib: dict[str, str] = {}
                    for i in range(count):
                        value: bytes = attributes[3 * i + 2]
                        attrib[tag_of(attributes[3 * i], attributes[3 * i + 1])] = value.decode()
                    return verdict(start_cb(tag_of(name, ns), attrib))
                return self._guard(run, sink)
            callbacks.start_element = _START_CB(start)
        if on_text is not None:
            text_cb = on_text

            def text(_u: int | None, data: int, size: int, _cdata: int, _depth: int) -> int:
                return self._guard(lambda: verdict(text_cb(ctypes.string_at(data, size).decode())), sink)
            callbacks.text = _TEXT_CB(text)
        if on_end is not None:
            end_cb = on_end

            def end(_u: int | None, name: bytes, ns: bytes | None, _depth: int) -> int:
                return self._guard(lambda: verdict(end_cb(tag_of(name, ns))), sink)
            callbacks.end_element = _END_CB(end)
        if on_comment is not None:
            comment_cb = on_comment

            def comment(_u: int | None, data: int, size: int, _depth: int) -> int:
                return self._guard(lambda: verdict(comment_cb(ctypes.string_at(data, size).decode())), sink)
            callbacks.comment = _COMMENT_CB(comment)
        self._keep = callbacks
        with _Options(**self._options) as opts:
            native: int | None = _ffi.lib().hc_handler_xml_events_new(opts, ctypes.byref(callbacks), None)
            return native

    def _content(self, response_ptr: int) -> Any:
        close = getattr(self.target, "close", None)
        return close() if close is not None else None


def iter_xml(client: Any, url: str, path: str, *, method: str = "GET", buffer: int = 4,
             **kwargs: Any) -> Iterator[ET.Element]:
    """Yields each `Element` matching `path` while the body is still arriving. The transfer runs
    on your thread, a step at a time while you take the elements (nothing is read while you
    hold the iterator), so memory stays flat however large the document; `buffer` is unused
    (kept for compatibility). Closing the iterator (or leaving the loop) stops the transfer."""
    del buffer
    waiting: collections.deque[bytes] = collections.deque()
    handler = _batches_handler(path, waiting.append, _pop_options(kwargs), watched=True)
    return _feed.chained(_element_batches(client._stepped(Request(method, url, handler=handler, **kwargs)),
                                          waiting, handler))


def aiter_xml(client: Any, send: Send, url: str, path: str, *, method: str = "GET", buffer: int = 4,
              **kwargs: Any) -> AsyncGenerator[ET.Element, None]:
    """`iter_xml` on the running event loop, with no thread (`send` runs the transfer, see
    Client.aiter_xml). When `buffer` batches wait for you, the loop stops reading the socket
    until you catch up. Leaving early, or cancelling the task, stops the transfer."""
    options = _pop_options(kwargs)

    def handler_of(feed: LoopFeed[bytes]) -> XMLElements:
        return _batches_handler(path, feed.put, options, watched=False)

    return loop_items(client, send, handler_of, pickle.loads, buffer=buffer, method=method, url=url,
                      options=kwargs)


def _pop_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The XMLElements options among a streaming iterator's keyword arguments (the rest are the
    request's)."""
    return {k: kwargs.pop(k) for k in list(kwargs) if k in (
        "limit", "keep_comments", "max_depth", "max_entity_expansion", "max_size",
        "accept_status", "accept_types")}


def _batches_handler(path: str, put: Callable[[bytes], object], options: dict[str, Any], *,
                     watched: bool) -> XMLElements:
    """An XMLElements for one `path` whose batches, each a pickled list of elements, go to
    `put` as the library writes them. `watched`: its callback runs on the consumer's thread
    (stepped), where a signal's exception may come at its first instruction (_feed.watch)."""
    class _Collector(XMLElements):
        def _new_native(self, sink: list[BaseException] | None = None) -> int | None:  # never raises
            def on_batch(_userdata: int | None, _path_index: int, data: int, size: int, _count: int) -> int:
                def run() -> int:
                    put(ctypes.string_at(data, size))
                    return 0
                # Guarded: a signal's exception (KeyboardInterrupt) raised here stops the
                # transfer and is raised by the iterator.
                return self._guard(run, sink)
            if watched:
                _feed.watch(on_batch, sink)   # and before the guard's `try`
            self._keep = _BATCH_CB(on_batch)
            names = (ctypes.c_char_p * 1)(path.encode())
            with _Options(**self._options) as opts:
                native: int | None = _ffi.lib().hc_handler_xml_batches_pickle_new(names, 1, opts, self._keep, None)
                return native

    return _Collector(path, _ignore, **options)


def _ignore(_element: ET.Element) -> None:
    return None


def _element_batches(steps: Generator[None, None, Any], waiting: collections.deque[bytes],
                     handler: Handler) -> Generator[list[ET.Element], None, None]:
    """Each batch's elements (one pickle.loads), as the transfer's steps leave them."""
    try:
        for raw in _feed.drained(steps, waiting):
            elements: list[ET.Element] = pickle.loads(raw)
            yield elements
    finally:
        handler.close()


__all__ = ["XML", "XMLElements", "XMLEvents", "iter_xml", "aiter_xml"]
