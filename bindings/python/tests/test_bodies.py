"""Request bodies from Python, checked byte for byte by the server's echo endpoints."""

import io
import json
import math
import os
import random
import urllib.parse

import pytest

import httpcontent as hc


def echo(client, base_url, **kwargs):
    r = client.post(f"{base_url}/echo", **kwargs)
    doc = json.loads(r.content)
    doc["body"] = bytes.fromhex(doc["body_hex"])
    doc["header"] = {k.lower(): v for k, v in doc["headers"]}
    return doc


def test_form_encodes_spaces_as_percent20_and_escapes_keys(client, base_url):
    doc = echo(client, base_url, form={"name": "Lucas Drance", "a key": "1.5"})
    assert doc["body"] == b"name=Lucas%20Drance&a%20key=1.5"
    assert doc["header"]["content-type"] == "application/x-www-form-urlencoded"
    assert doc["header"]["content-length"] == str(len(doc["body"]))


def test_form_encode_matches_urllib_quote_in_percent20_mode():
    rng = random.Random(7)
    for _ in range(200):
        key = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 12)))
        value = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 20)))
        expected = urllib.parse.quote(key, safe="-._~") + "=" + urllib.parse.quote(value, safe="-._~")
        assert hc.form_encode([(key, value)]) == expected


def test_form_options():
    assert hc.form_encode({"q": "a b"}, space="+") == "q=a+b"
    assert hc.form_encode([("b", 1), ("a", 2)], sort=True) == "a=2&b=1"
    assert hc.form_encode({"a": [1, 2]}) == "a%5B%5D=1&a%5B%5D=2"
    assert hc.form_encode({"a": [1, 2]}, arrays="repeat") == "a=1&a=2"
    assert hc.form_encode({"a": [1, 2]}, arrays="indexed") == "a%5B0%5D=1&a%5B1%5D=2"
    assert hc.form_encode({"a": {"b": "c"}}) == "a%5Bb%5D=c"
    assert hc.form_encode({"t": True, "f": False}) == "t=1&f=0"
    assert hc.form_encode({"t": True}, bools="literal") == "t=true"
    assert hc.form_encode({"n": None, "x": 1}) == "x=1"
    assert hc.form_encode({"n": None}, nulls="empty") == "n="
    assert hc.form_encode([("k", "1"), ("k", "2")]) == "k=1&k=2"
    with pytest.raises(ValueError):
        hc.form_encode({"a": 1}, space="_")


def test_params_merge_into_a_url_with_query_and_fragment(client, base_url):
    r = client.get(f"{base_url}/echo?x=1#frag", params={"q": "a b"})
    doc = json.loads(r.content)
    assert doc["query"] == "x=1&q=a%20b"


def test_json_body(client, base_url):
    doc = echo(client, base_url, json={"a": [1, 2.5, None, True], "é": "ü"})
    assert json.loads(doc["body"]) == {"a": [1, 2.5, None, True], "é": "ü"}
    assert doc["header"]["content-type"].startswith("application/json")


def test_nan_in_a_json_body_is_refused(client, base_url):
    with pytest.raises(hc.InvalidArgument):
        client.post(f"{base_url}/echo", json={"x": math.nan})


def test_text_bytes_and_caller_content_type_wins(client, base_url):
    doc = echo(client, base_url, data="héllo\x00world")
    assert doc["body"] == "héllo\x00world".encode() and "charset=utf-8" in doc["header"]["content-type"]
    doc = echo(client, base_url, data=b"\x00\x01", headers={"Content-Type": "application/x-mine"})
    assert doc["body"] == b"\x00\x01" and doc["header"]["content-type"] == "application/x-mine"


def test_file_object_upload_is_read_by_the_library(client, base_url, tmp_path):
    path = tmp_path / "up.bin"
    payload = os.urandom(300_000)
    path.write_bytes(payload)
    with open(path, "rb") as f:
        r = client.post(f"{base_url}/echo/raw", data=f, content_type="application/octet-stream")
    assert r.content == payload


def test_partly_read_buffered_file_uploads_from_its_position(client, base_url, tmp_path):
    # A buffered file object reads ahead: after f.read(10) the descriptor is at the end of this
    # small file while f.tell() is 10. The body must be the rest from f.tell() (it failed with
    # LocalIOError "the body ended after 0 of the 90 bytes announced"), and the file object
    # must still read on from there afterwards.
    path = tmp_path / "up.bin"
    payload = bytes(range(100)) * 300
    path.write_bytes(payload)
    for skip in (10, 9000):
        with open(path, "rb") as f:
            assert f.read(skip) == payload[:skip]
            r = client.post(f"{base_url}/echo/raw", data=f)
            assert r.content == payload[skip:]
            r = client.post(f"{base_url}/echo/raw", data=f)  # sent again: the same bytes
            assert r.content == payload[skip:]
            assert f.read(5) == payload[skip:skip + 5]


def test_iterable_upload_is_sent_chunked(client, base_url):
    parts = [b"abc", b"", b"defgh" * 1000, b"!"]
    doc = echo(client, base_url, data=iter(parts))
    assert doc["body"] == b"".join(parts)
    assert doc["header"].get("transfer-encoding") == "chunked"
    doc = echo(client, base_url, data=io.BytesIO(b"from a stream"))
    assert doc["body"] == b"from a stream"


def test_iterable_that_raises_mid_upload_aborts_and_surfaces(client, base_url):
    class Broken(Exception):
        pass

    def parts():
        yield b"first"
        raise Broken("source failed")

    with pytest.raises(Broken):
        client.post(f"{base_url}/echo", data=parts())


def test_multipart_fields_files_and_bytes(client, base_url, tmp_path):
    path = tmp_path / "report.txt"
    path.write_bytes(b"file contents")
    doc = echo(client, base_url, multipart=[
        hc.Field("title", "a b"),
        hc.FilePart("upload", path, content_type="text/plain"),
        hc.BytesPart("blob", b"\x00\xff", filename="b.bin", content_type="application/octet-stream"),
    ])
    ctype = doc["header"]["content-type"]
    assert ctype.startswith("multipart/form-data; boundary=")
    body = doc["body"]
    assert b'name="title"\r\n\r\na b\r\n' in body
    assert b'filename="report.txt"' in body and b"file contents" in body
    assert b'filename="b.bin"' in body and b"\x00\xff" in body


def test_missing_upload_file_fails_before_connecting(client, base_url, tmp_path):
    with pytest.raises(hc.LocalIOError):
        client.post(f"{base_url}/echo", multipart=[hc.FilePart("f", tmp_path / "missing.txt")])


def test_one_body_at_a_time(client, base_url):
    with pytest.raises(hc.InvalidArgument):
        client.post(f"{base_url}/echo", form={"a": 1}, json={"b": 2})
