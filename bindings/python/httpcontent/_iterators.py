"""The streaming iterators of a client (`iter_*` on the caller's thread, `aiter_*` on the
running event loop): each hands the client to the module of its format, which owns the
handler, the stepping and the parsing. A mixin of `Client`, apart from sending."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, AsyncGenerator, Generator, Iterator

from . import chunks as _chunks
from . import records as _records
from .jsoncontent import aiter_json as _aiter_json
from .jsoncontent import iter_json as _iter_json
from .xmlcontent import aiter_xml as _aiter_xml
from .xmlcontent import iter_xml as _iter_xml

if TYPE_CHECKING:
    from ._aio import LoopDriver
    from .handlers import Handler


class StreamingMethods:
    """`iter_json`, `iter_lines`, `iter_json_lines`, `iter_events`, `iter_bytes`, `iter_xml`
    and their `aiter_*` twins."""

    if TYPE_CHECKING:  # what the mixin uses of Client
        def _check_open(self) -> None: ...

        async def _loop_send(self, handler: Handler, driver: LoopDriver, *, method: str,
                             url: str, **options: Any) -> Any: ...

    def iter_json(self, url: str, prefix: str = "item", **kwargs: Any) -> Iterator[Any]:
        """Yields each JSON value under the ijson `prefix` ("item": each element of a top-level
        array; "results.item": each element of the array at member "results"; "": each
        document of an NDJSON stream with `multiple_values=True`, which also accepts the NDJSON
        media types) while the body is still arriving, in bounded memory. Stopping early stops
        the transfer."""
        return _iter_json(self, url, prefix, **kwargs)

    def aiter_json(self, url: str, prefix: str = "item", **kwargs: Any) -> AsyncGenerator[Any, None]:
        """`iter_json` on the running event loop, with no thread: `async for value in
        client.aiter_json(url, "results.item")`. At most `buffer` (4) batches wait for you; the
        loop then stops reading the socket until you catch up. Leaving early stops the transfer."""
        self._check_open()
        return _aiter_json(self, self._loop_send, url, prefix, **kwargs)

    def iter_lines(self, url: str, **kwargs: Any) -> Iterator[str]:
        """Yields each text line (str, no terminator; empty lines and a last unterminated line
        kept) while the body arrives: `max_line_size=` (bytes, default 1 MiB), `strict=`, and
        the request options. Stopping early stops the transfer. See `hc.Lines`."""
        return _records.iter_lines(self, url, **kwargs)

    def iter_json_lines(self, url: str, **kwargs: Any) -> Iterator[Any]:
        """Yields each JSON record (RFC 7464 when the Content-Type is application/json-seq, else
        JSON Lines / NDJSON; `framing="lines"`, `"seq"` or `"concatenated"` (`{..}{..}`) to
        choose) as `json.loads` gives it, while the body arrives, in
        bounded memory. A bad record raises `hc.DecodeError` with `.record_index` and `.offset`,
        or with `skip_bad=True` goes to `on_skip(error)`. See `hc.JSONLines`."""
        return _records.iter_json_lines(self, url, **kwargs)

    def iter_events(self, url: str, **kwargs: Any) -> Iterator[Any]:
        """Yields each Server-Sent Event (`.event`, `.data`, `.id`, `.retry`) as it arrives;
        `reconnect=True, max_reconnects=, retry=, max_retry=, max_line_size=, max_event_size=,
        on_comment=` and the request options. See `hc.records.iter_events`."""
        return _records.iter_events(self, url, **kwargs)

    def aiter_events(self, url: str, **kwargs: Any) -> AsyncGenerator[Any, None]:
        """`iter_events` on the running event loop, with no thread: `async for event in
        client.aiter_events(url, reconnect=True)`. At most `buffer` (16) events wait for you;
        the loop then stops reading the socket until you catch up. Leaving early, or cancelling
        the task, stops the stream (also during a reconnection wait)."""
        self._check_open()
        return _records.aiter_events(self, self._loop_send, url, **kwargs)

    def aiter_lines(self, url: str, **kwargs: Any) -> AsyncGenerator[str, None]:
        """`iter_lines` on the running event loop, with no thread, the same options: `async for
        line in client.aiter_lines(url)`. At most `buffer` (4) batches wait for you; the loop
        then stops reading the socket. Leaving early (`break`, `aclose()`) or cancelling the
        task stops the transfer."""
        self._check_open()
        return _records.aiter_lines(self, self._loop_send, url, **kwargs)

    def aiter_json_lines(self, url: str, **kwargs: Any) -> AsyncGenerator[Any, None]:
        """`iter_json_lines` on the running event loop, with no thread, the same options
        (`framing`, `skip_bad`, `on_skip`, `path`, `schema`, ...); bounded and stopped as
        `aiter_lines`."""
        self._check_open()
        return _records.aiter_json_lines(self, self._loop_send, url, **kwargs)

    def iter_bytes(self, url: str, chunk_size: int | None = None, **kwargs: Any) -> Generator[bytes, None, None]:
        """Yields the body's chunks as they arrive (requests' `iter_content`, httpx's
        `iter_bytes`); with `chunk_size`, cut again into chunks of exactly that many bytes, the
        last one shorter. Stepped on your thread: nothing is read while you hold it. Stopping
        early stops the transfer. `accept_status=`, `accept_types=`, `max_size=` and the
        request options."""
        return _chunks.iter_bytes(self, url, chunk_size, **kwargs)

    def aiter_bytes(self, url: str, chunk_size: int | None = None, **kwargs: Any) -> AsyncGenerator[bytes, None]:
        """`iter_bytes` on the running event loop, with no thread. At most `buffer` (8) chunks
        wait for you; the loop then stops reading the socket. Leaving early or cancelling the
        task stops the transfer."""
        self._check_open()
        return _chunks.aiter_bytes(self, self._loop_send, url, chunk_size, **kwargs)

    def iter_xml(self, url: str, path: str, **kwargs: Any) -> Iterator[Any]:
        """Yields each `xml.etree.ElementTree.Element` matching `path` ("feed/entry": steps from
        the root element, local names or "{namespace}name") as soon as its end tag arrives, in
        flat memory however large the document. A generator: closing it stops the transfer.
        Depth and entity limits raise `hc.DecodeError`."""
        return _iter_xml(self, url, path, **kwargs)

    def aiter_xml(self, url: str, path: str, **kwargs: Any) -> AsyncGenerator[Any, None]:
        """`iter_xml` on the running event loop, with no thread, the same options. At most
        `buffer` (4) batches wait for you; the loop then stops reading the socket. Leaving early
        or cancelling the task stops the transfer."""
        self._check_open()
        return _aiter_xml(self, self._loop_send, url, path, **kwargs)


__all__ = ["StreamingMethods"]
