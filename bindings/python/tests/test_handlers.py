"""Every content handler from Python, against the local server, with its bad inputs."""

import io
import os
import subprocess
import sys

import pytest

import httpcontent as hc


_ENV = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(hc.__file__)))  # the package under test


def expected_bytes(n, start=0):
    return bytes((start + i) % 251 for i in range(n))


# -- Text

def test_text_uses_charset_then_bom_then_utf8(client, base_url):
    assert client.get(f"{base_url}/text?charset=iso-8859-1&text=caf%C3%A9", handler=hc.Text()).content == "café"
    assert client.get(f"{base_url}/text?nocharset=1&raw_hex=fffe68006900", handler=hc.Text()).content == "hi"
    assert client.get(f"{base_url}/text?nocharset=1&raw_hex=efbbbf6869", handler=hc.Text()).content == "hi"
    assert client.get(f"{base_url}/text?charset=windows-1252&raw_hex=80", handler=hc.Text()).content == "€"
    assert client.get(f"{base_url}/text?charset=utf-16be&raw_hex=d83dde00", handler=hc.Text()).content == "😀"
    assert client.get(f"{base_url}/text?nocharset=1&raw_hex=c3a9", handler=hc.Text()).content == "é"


def test_explicit_encoding_wins_over_the_charset(client, base_url):
    r = client.get(f"{base_url}/text?charset=utf-8&raw_hex=e9", handler=hc.Text(encoding="latin-1"))
    assert r.content == "é"


def test_strict_text_reports_the_offset_of_the_bad_byte(client, base_url):
    with pytest.raises(hc.DecodeError) as info:
        client.get(f"{base_url}/text?charset=utf-8&raw_hex=616263ff6465", handler=hc.Text())
    assert info.value.offset == 3
    with pytest.raises(hc.DecodeError):
        client.get(f"{base_url}/text?charset=us-ascii&raw_hex=41c3", handler=hc.Text())
    with pytest.raises(hc.DecodeError):
        client.get(f"{base_url}/text?charset=x-unknown&raw_hex=41", handler=hc.Text())


def test_lenient_text_substitutes_replacement_characters(client, base_url):
    r = client.get(f"{base_url}/text?charset=utf-8&raw_hex=616263ff6465", handler=hc.Text(errors="replace"))
    assert r.content == "abc\ufffdde"


def test_text_decodes_across_chunk_boundaries(client, base_url):
    # 5000 multi-byte sequences over a 60 KB body: libcurl's chunks split some of them.
    text = "é€😀" * 5000
    body = text.encode("utf-8")
    r = client.post(f"{base_url}/echo/raw", data=body, content_type="text/plain; charset=utf-8",
                    handler=hc.Text(encoding="utf-8"))
    assert r.content == text


def test_unknown_encoding_name_is_refused():
    with pytest.raises(ValueError):
        hc.Text(encoding="klingon")
    with pytest.raises(ValueError):
        hc.Text(errors="ignore")


# -- Image

@pytest.mark.parametrize("fmt", ["png", "jpeg", "gif", "webp", "bmp"])
def test_image_format_and_size_come_from_the_bytes(client, base_url, fmt):
    image = client.get(f"{base_url}/image/{fmt}", handler=hc.Image()).content
    assert (image.format, image.width, image.height) == (fmt, 3, 2)
    assert len(image.data) > 10


def test_image_whose_bytes_are_not_the_declared_type_is_a_decode_error(client, base_url):
    with pytest.raises(hc.DecodeError):
        client.get(f"{base_url}/image/jpeg?ctype=image/png", handler=hc.Image())


def test_image_whose_header_lies_about_its_size_is_refused(client, base_url):
    with pytest.raises(hc.DecodeError, match="100000x100000"):
        client.get(f"{base_url}/image/lying-png", handler=hc.Image())


def test_image_handler_refuses_non_image_types(client, base_url):
    with pytest.raises(hc.UnacceptableContentType):
        client.get(f"{base_url}/text", handler=hc.Image())


def test_empty_204_and_head_succeed_with_empty_content(client, base_url):
    assert client.get(f"{base_url}/status/204", handler=hc.Image()).content is None
    assert client.head(f"{base_url}/image/png", handler=hc.Image()).content is None
    assert client.get(f"{base_url}/status/204", handler=hc.Text()).content == ""
    assert client.get(f"{base_url}/status/204", handler=hc.Bytes()).content == b""


# -- Stream

def test_stream_to_a_file_object_and_a_callable(client, base_url):
    sink = io.BytesIO()
    r = client.get(f"{base_url}/bytes/300000?chunked=1&chunk=5000", handler=hc.Stream(sink))
    assert r.content == 300000 and sink.getvalue() == expected_bytes(300000)
    pieces = []
    client.get(f"{base_url}/bytes/70000", handler=hc.Stream(pieces.append))
    assert b"".join(pieces) == expected_bytes(70000) and len(pieces) >= 1


def test_stream_target_that_raises_stops_the_transfer(client, base_url):
    class Full(Exception):
        pass

    def write(_chunk):
        raise Full("disk full")

    with pytest.raises(Full):
        client.get(f"{base_url}/bytes/100000", handler=hc.Stream(write))


# -- File

def test_file_download_writes_exactly_the_body(client, base_url, tmp_path):
    target = tmp_path / "out.bin"
    r = client.get(f"{base_url}/bytes/200000", handler=hc.File(target))
    assert r.content == hc.Download(str(target), 200000, 200000, False)
    assert target.read_bytes() == expected_bytes(200000)


def test_failed_download_leaves_old_file_and_no_partial_file(client, base_url, tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"previous")
    for path, error, limit in [("/reset?bytes=50000", hc.TransportError, None),
                               ("/truncated?bytes=100", hc.TransportError, None),
                               ("/status/500", hc.UnacceptableStatus, None),
                               ("/bytes/5000", hc.TooLarge, 1000)]:
        with pytest.raises(error):
            client.get(base_url + path, handler=hc.File(target, max_size=limit))
        assert target.read_bytes() == b"previous"
        assert os.listdir(tmp_path) == ["out.bin"]


def test_download_answered_with_no_body_keeps_the_file(client, base_url, tmp_path):
    # A HEAD or a 204 says nothing of the file's content: it was replaced by an empty one.
    target = tmp_path / "out.bin"
    client.get(f"{base_url}/bytes/1000", handler=hc.File(target))
    for method, path in (("HEAD", "/bytes/500"), ("GET", "/status/204")):
        r = client.request(method, base_url + path, handler=hc.File(target))
        assert (r.content.bytes_written, r.content.size, r.content.resumed) == (0, 1000, False)
    assert target.read_bytes() == expected_bytes(1000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]


def test_cancelled_download_removes_its_partial_file(client, base_url, tmp_path):
    target = tmp_path / "out.bin"
    with pytest.raises(hc.Cancelled):
        client.get(f"{base_url}/slow?bytes=1000&delay=0.02&chunk=10", handler=hc.File(target),
                   progress=lambda p: p["received"] >= 30)
    assert os.listdir(tmp_path) == []


def test_unwritable_directory_fails_before_sending(client, base_url, tmp_path):
    with pytest.raises(hc.LocalIOError):
        client.get(f"{base_url}/bytes/10", handler=hc.File(tmp_path / "missing" / "out.bin"))
    r = client.get(f"{base_url}/bytes/10", handler=hc.File(tmp_path / "made" / "out.bin", make_dirs=True))
    assert r.content.size == 10


def test_refusing_to_overwrite(client, base_url, tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"keep")
    with pytest.raises(hc.LocalIOError):
        client.get(f"{base_url}/bytes/10", handler=hc.File(target, overwrite=False))
    assert target.read_bytes() == b"keep"


def test_resume_continues_a_partial_download_with_a_range(client, base_url, tmp_path):
    target = tmp_path / "big.bin"
    handler = hc.File(target, resume=True)
    with pytest.raises(hc.TransportError):
        client.get(f"{base_url}/range/100000?reset_after=40000", handler=handler)
    part = tmp_path / "big.bin.part"
    assert part.exists() and not target.exists()
    r = client.get(f"{base_url}/range/100000", handler=handler)
    assert r.content.resumed and r.content.size == 100000 and r.content.bytes_written < 100000
    assert target.read_bytes() == expected_bytes(100000) and not part.exists()


def test_resume_falls_back_to_a_full_download(client, base_url, tmp_path):
    target = tmp_path / "big.bin"
    (tmp_path / "big.bin.part").write_bytes(b"garbage")
    r = client.get(f"{base_url}/range/5000?norange=1", handler=hc.File(target, resume=True))
    assert not r.content.resumed and target.read_bytes() == expected_bytes(5000)


# -- Compound, custom handlers, defaults

def test_compound_uses_the_first_handler_that_accepts(client, base_url):
    h = hc.Compound([hc.Image(), hc.Text()])
    assert client.get(f"{base_url}/image/gif", handler=h).content.format == "gif"
    assert client.get(f"{base_url}/text?text=hey", handler=h).content == "hey"
    with pytest.raises(hc.UnacceptableStatus):
        client.get(f"{base_url}/status/404", handler=h)



_CLOSED_CHILD = r"""
import gc, sys
import httpcontent as hc

base_url = sys.argv[1]
got, other = [], []
child = hc.Stream(got.append)
compound = hc.Compound([child])
with hc.Client(timeout=10) as client:
    client.get(f"{base_url}/bytes/10", handler=compound)
    child.close()
    client.get(f"{base_url}/bytes/10", handler=child)  # a new native handler and callback
    gc.collect()
    others = [hc.Stream(other.append)._handle() for _ in range(20)]
    del got[:]
    client.get(f"{base_url}/bytes/10", handler=compound)
assert (len(b"".join(got)), len(b"".join(other))) == (10, 0), (got, other)
"""


def test_compound_keeps_its_handlers_callbacks_after_they_are_closed_and_remade(base_url):
    # The compound keeps its own reference to each native handler, but the Python callback of
    # a handler lived only as long as that handler's current native: closing the handler and
    # using it again freed the callback the compound still called (another handler's target
    # received the body, or a segfault).
    run = subprocess.run([sys.executable, "-c", _CLOSED_CHILD, base_url], env=_ENV,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]

class Recorder(hc.Handler):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.events = []
        self.size = 0

    def accept(self, head):
        self.events.append(("accept", head.status, head.headers["content-type"]))
        return head.headers["content-type"] != "text/html"

    def consume(self, chunk):
        if not self.size:
            self.events.append("consume")
        self.size += len(chunk)

    def finish(self):
        self.events.append("finish")
        return self.size

    def cleanup(self, failed):
        self.events.append(("cleanup", failed))


def test_custom_python_handler_is_driven_in_order(client, base_url):
    h = Recorder()
    r = client.get(f"{base_url}/bytes/54321", handler=h)
    assert r.content == 54321
    assert h.events == [("accept", 200, "application/octet-stream"), "consume", "finish", ("cleanup", False)]


def test_custom_handler_rejecting_a_response(client, base_url):
    h = Recorder()
    with pytest.raises(hc.UnacceptableStatus) as info:
        client.get(f"{base_url}/ctype?type=text/html&body=%3Cp%3E", handler=h)
    assert info.value.body == b"<p>"
    assert h.events == [("accept", 200, "text/html"), ("cleanup", True)]


def test_custom_handler_exception_surfaces(client, base_url):
    class Picky(hc.Handler):
        def consume(self, chunk):
            raise KeyError("no thanks")

    with pytest.raises(KeyError):
        client.get(f"{base_url}/bytes/100", handler=Picky())

    class Raises(hc.Handler):
        def accept(self, head):
            raise hc.UnacceptableContentType("not today")

    with pytest.raises(hc.UnacceptableContentType, match="not today"):
        client.get(f"{base_url}/bytes/100", handler=Raises())


def test_bytes_subclass_converts_the_whole_body(client, base_url):
    class Upper(hc.Bytes):
        def convert(self, data):
            return data.upper()

    assert client.get(f"{base_url}/text?text=shout", handler=Upper()).content == b"SHOUT"


def test_process_wide_default_status_codes(client, base_url):
    try:
        hc.set_default_accept_status(["200-299", 404])
        accepting = hc.Bytes()
    finally:
        hc.reset_defaults()
    assert client.get(f"{base_url}/status/404", handler=accepting).status == 404
    with pytest.raises(hc.UnacceptableStatus):
        client.get(f"{base_url}/status/404", handler=hc.Bytes())


def test_process_wide_default_types_and_server_message_paths(client, base_url):
    try:
        hc.set_default_accept_types(["text/*"])
        texts_only = hc.Bytes()
        hc.set_server_message_paths(["error.code", "error.message"])
        with pytest.raises(hc.UnacceptableStatus) as info:
            client.get(f"{base_url}/status/400?json=1&message=from%20the%20server")
        assert info.value.server_message == "from the server"
    finally:
        hc.reset_defaults()
    with pytest.raises(hc.UnacceptableContentType):
        client.get(f"{base_url}/bytes/10", handler=texts_only)
    assert client.get(f"{base_url}/bytes/10", handler=hc.Bytes()).status == 200


def test_empty_statuses_and_methods_are_configurable(client, base_url):
    with pytest.raises(hc.DecodeError):
        client.get(f"{base_url}/status/204", handler=hc.Image(empty_statuses=[]))
    assert client.get(f"{base_url}/status/304", handler=hc.Image(accept_status=[304], empty_statuses=[304])).content is None


def test_rejected_body_limit(base_url):
    with hc.Client(rejected_body_limit=5) as c:
        with pytest.raises(hc.UnacceptableStatus) as info:
            c.get(f"{base_url}/status/500")
        assert info.value.body == b"statu"
