"""The `hc` command line, run as a program: curl's habits (-X, -H, -d, --data-urlencode, -F,
--json, -u, -L, -k/--cacert, -v, -i, -o/-O/-J, -C -, --retry, --compressed), the progress bar,
the exit codes and --help. Every request goes to a server on 127.0.0.1 started by the tests."""

from __future__ import annotations

import email.parser
import email.policy
import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "server"))
from testserver import det_bytes  # noqa: E402


def run(hc, *args, input=None, cwd=None, env=None, timeout=60):
    return subprocess.run([hc, *args], input=input, capture_output=True, cwd=cwd, env=env,
                          timeout=timeout)


def echo(hc, url, *args, input=None):
    """Runs hc against /echo and returns what the server saw (method, headers, body)."""
    out = run(hc, *args, f"{url}/echo", input=input)
    assert out.returncode == 0, out.stderr.decode()
    seen = json.loads(out.stdout)
    seen["body"] = bytes.fromhex(seen["body_hex"])
    seen["h"] = {k.lower(): v for k, v in seen["headers"]}
    return seen


# -- help and usage

def test_help_has_examples_and_the_exit_codes(hc):
    out = run(hc, "--help")
    assert out.returncode == 0
    text = out.stdout.decode()
    assert "EXAMPLES:" in text and "hc -O -C - --retry 5" in text
    for code, meaning in [("0", "success"), ("2", "transport error"), ("5", "unacceptable status"),
                          ("10", "local I/O error"), ("64", "usage error")]:
        assert f"\n  {code} " in text and meaning in text
    assert "--data-urlencode" in text and "--max-redirs" in text and "--cacert" in text
    modes = " ".join(text.split()).split("What to make of the body: ", 1)[1].split(" (default", 1)[0]
    assert {"bytes", "text", "json", "image", "discard"} <= set(modes.split(", "))  # the --as modes


@pytest.mark.parametrize("args", [["-X"], ["--as", "nothing", "http://127.0.0.1:1/"],
                                  ["-C", "100", "-o", "f", "http://127.0.0.1:1/"],
                                  ["-C", "-", "http://127.0.0.1:1/"], ["-J", "http://127.0.0.1:1/"],
                                  ["-F", "a=b", "-d", "c", "http://127.0.0.1:1/"]])
def test_usage_errors_exit_64_before_any_request(hc, args):
    out = run(hc, *args)
    assert out.returncode == 64, out
    assert out.stderr and not out.stdout


# -- the request

def test_the_body_is_printed_byte_for_byte(hc, base_url):
    out = run(hc, f"{base_url}/bytes/70000")
    assert out.returncode == 0 and out.stdout == det_bytes(0, 70000)
    assert out.stderr == b""  # not a terminal: no progress bar, no notes


def test_method_and_the_get_and_post_aliases(hc, base_url):
    assert echo(hc, base_url, "-X", "DELETE")["method"] == "DELETE"
    assert echo(hc, base_url)["method"] == "GET"
    out = run(hc, "get", f"{base_url}/echo")
    assert json.loads(out.stdout)["method"] == "GET"
    out = run(hc, "post", f"{base_url}/echo")
    assert json.loads(out.stdout)["method"] == "POST"
    out = run(hc, "post", "-X", "PUT", f"{base_url}/echo")
    assert json.loads(out.stdout)["method"] == "PUT"


def test_headers_given_and_read_from_a_file(hc, base_url, tmp_path):
    headers = tmp_path / "headers.txt"
    headers.write_bytes(b"X-One: 1\r\n\r\nX-Two:   two words  \nX-Empty;\n")
    seen = echo(hc, base_url, "-H", "X-Given: yes", "-H", f"@{headers}")
    assert seen["h"]["x-given"] == "yes" and seen["h"]["x-one"] == "1"
    assert seen["h"]["x-two"] == "two words" and seen["h"]["x-empty"] == ""
    out = run(hc, "-H", "no colon", f"{base_url}/echo")
    assert out.returncode == 1 and b"Name: value" in out.stderr
    out = run(hc, "-H", f"@{tmp_path / 'missing'}", f"{base_url}/echo")
    assert out.returncode == 10 and b"missing" in out.stderr
    out = run(hc, "-H", "X-Bad: a\rb", f"{base_url}/echo")  # CR/LF refused by the library
    assert out.returncode == 1


def test_data_implies_post_and_a_form_type_and_is_sent_as_given(hc, base_url, tmp_path):
    seen = echo(hc, base_url, "-d", "a=1&b=x y", "-d", "c")
    assert seen["method"] == "POST" and seen["body"] == b"a=1&b=x y&c"
    assert seen["h"]["content-type"] == "application/x-www-form-urlencoded"
    # The caller's Content-Type and method win.
    seen = echo(hc, base_url, "-d", "{}", "-H", "Content-Type: text/plain", "-X", "PUT")
    assert seen["method"] == "PUT" and seen["h"]["content-type"] == "text/plain"
    # @file: read; -d drops the file's newlines (as curl), --data-binary keeps every byte.
    f = tmp_path / "body.txt"
    f.write_bytes(b"line1\r\nline2\n\x00end")
    assert echo(hc, base_url, "-d", f"@{f}")["body"] == b"line1line2\x00end"
    assert echo(hc, base_url, "--data-binary", f"@{f}")["body"] == b"line1\r\nline2\n\x00end"
    # - and @- read stdin.
    assert echo(hc, base_url, "-d", "-", input=b"from stdin")["body"] == b"from stdin"
    assert echo(hc, base_url, "--data-binary", "@-", input=b"a\nb")["body"] == b"a\nb"


def test_data_urlencode_in_each_of_curls_forms(hc, base_url, tmp_path):
    f = tmp_path / "v.txt"
    f.write_bytes("é &=\n".encode())
    seen = echo(hc, base_url, "--data-urlencode", "q=a b&c", "--data-urlencode", "=x/y",
                "--data-urlencode", "plain~text", "--data-urlencode", f"file@{f}",
                "--data-urlencode", f"@{f}")
    assert seen["method"] == "POST"
    assert seen["body"] == (b"q=a%20b%26c&x%2Fy&plain~text&file=%C3%A9%20%26%3D%0A"
                            b"&%C3%A9%20%26%3D%0A")
    assert seen["h"]["content-type"] == "application/x-www-form-urlencoded"


def _parts(seen):
    """The multipart body the server received, parsed by the email package (the oracle)."""
    raw = b"Content-Type: " + seen["h"]["content-type"].encode() + b"\r\n\r\n" + seen["body"]
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(raw)
    assert message.is_multipart()
    return {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}


def test_form_sends_a_multipart_post(hc, base_url, tmp_path):
    upload = tmp_path / "report.bin"
    upload.write_bytes(bytes(range(256)) * 10)
    value = tmp_path / "value.txt"
    value.write_text("from a file")
    seen = echo(hc, base_url, "-F", "title=Quarterly report", "-F",
                f"file=@{upload};type=application/x-test;filename=renamed.bin", "-F", f"note=<{value}")
    assert seen["method"] == "POST" and seen["h"]["content-type"].startswith("multipart/form-data; boundary=")
    parts = _parts(seen)
    assert parts["title"].get_content() == "Quarterly report"
    assert parts["note"].get_content() == "from a file"
    f = parts["file"]
    assert f.get_content_type() == "application/x-test" and f.get_filename() == "renamed.bin"
    assert f.get_payload(decode=True) == upload.read_bytes()
    out = run(hc, "-F", f"file=@{tmp_path / 'absent'}", f"{base_url}/echo")
    assert out.returncode == 10  # checked before connecting
    out = run(hc, "-F", "novalue", f"{base_url}/echo")
    assert out.returncode == 1


def test_json_posts_json_with_its_types(hc, base_url, tmp_path):
    seen = echo(hc, base_url, "--json", '{"name": "Ada"}')
    assert seen["method"] == "POST" and json.loads(seen["body"]) == {"name": "Ada"}
    assert seen["h"]["content-type"] == "application/json" and seen["h"]["accept"] == "application/json"
    doc = tmp_path / "doc.json"
    doc.write_text('[1,\n2]\n')
    seen = echo(hc, base_url, "--json", f"@{doc}", "-X", "PUT")
    assert seen["method"] == "PUT" and seen["body"] == b"[1,\n2]\n"


def test_user_sends_basic_authentication(hc, base_url):
    out = run(hc, "--as", "json", "-u", "ada:pa:ss wörd", f"{base_url}/auth-check")
    import base64
    expected = "Basic " + base64.b64encode("ada:pa:ss wörd".encode()).decode()
    assert json.loads(out.stdout) == {"authorization": expected}
    out = run(hc, "-u", "ada", f"{base_url}/auth-check")
    assert out.returncode == 1 and b"user:password" in out.stderr


def test_redirects_are_followed_only_with_L_and_bounded(hc, base_url):
    out = run(hc, f"{base_url}/redirect/2")   # as curl: the redirect is the answer, its body printed
    assert out.returncode == 0 and out.stdout == b"redirecting to /redirect/1"
    out = run(hc, "-i", f"{base_url}/redirect/2")
    assert b"302" in out.stdout and b"Location: /redirect/1" in out.stdout
    out = run(hc, "-L", f"{base_url}/redirect/2")
    assert out.returncode == 0 and out.stdout == b"done"
    out = run(hc, "-L", "--max-redirs", "1", f"{base_url}/redirect/2")
    assert out.returncode == 4 and b"redirect" in out.stderr


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """An HTTPS server (Tests/server/hostile.py) with a certificate for `localhost` made now."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: cannot make a self-signed certificate")
    from hostile import start_server
    d = tmp_path_factory.mktemp("tls")
    cert, key = str(d / "cert.pem"), str(d / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                    "-days", "1", "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", cert],
                   check=True, capture_output=True, timeout=30)
    server, port = start_server(tls=(cert, key))
    server.base = f"https://localhost:{port}"
    server.cert = cert
    yield server
    server.shutdown()


def test_tls_is_verified_unless_k_or_a_cacert_says_otherwise(hc, tls_server):
    out = run(hc, f"{tls_server.base}/plain")
    assert out.returncode == 2 and out.stdout == b""
    out = run(hc, "-k", f"{tls_server.base}/plain")
    assert out.returncode == 0 and out.stdout == b"genuine"
    out = run(hc, "--cacert", tls_server.cert, f"{tls_server.base}/plain")
    assert out.returncode == 0 and out.stdout == b"genuine"


# -- what is shown

def test_verbose_prints_both_heads_on_stderr_and_hides_credentials(hc, base_url):
    out = run(hc, "-v", "-u", "ada:secret", "-H", "X-Mine: 1", f"{base_url}/bytes/3")
    assert out.returncode == 0 and out.stdout == det_bytes(0, 3)
    err = out.stderr.decode()
    assert f"> GET {base_url}/bytes/3" in err and "> X-Mine: 1" in err
    assert "> Authorization: Basic (hidden)" in err and "secret" not in err
    assert "< HTTP/1.1 200 OK" in err and "< Content-Length: 3" in err


def test_include_prints_the_head_before_the_body(hc, base_url):
    out = run(hc, "-i", f"{base_url}/bytes/4")
    head, _, body = out.stdout.partition(b"\n\n")
    assert head.startswith(b"HTTP/1.1 200 OK\n") and b"Content-Length: 4" in head
    assert body == det_bytes(0, 4)


def test_as_json_with_a_path(hc, base_url):
    out = run(hc, "--as", "json", "--path", "method", f"{base_url}/echo")
    assert out.returncode == 0 and out.stdout == b'"GET"\n'


def test_as_xml_path_prints_each_element_as_standalone_xml(hc, base_url):
    # Every streamed element declares the namespaces it inherits (the feed's default namespace,
    # media: on a child), so each one parses on its own and equals ElementTree's element.
    import re
    import xml.etree.ElementTree as ET
    from xmlroutes import feed_entry, feed_head, feed_tail
    out = run(hc, "--as", "xml", "--path", "feed/entry", f"{base_url}/xml/feed?n=3")
    assert out.returncode == 0, out.stderr.decode()
    printed = [p for p in re.split(r"\n(?=<[^/])", out.stdout.decode()) if p.strip()]
    assert len(printed) == 3
    full = ET.fromstring(feed_head() + b"".join(feed_entry(i) for i in range(3)) + feed_tail())
    expected = full.findall("{http://www.w3.org/2005/Atom}entry")
    for text, theirs in zip(printed, expected, strict=True):
        mine = ET.fromstring(text)  # raises on an undeclared prefix
        assert mine.tag == "{http://www.w3.org/2005/Atom}entry"
        assert [(e.tag, e.attrib) for e in mine.iter()] == [(e.tag, e.attrib) for e in theirs.iter()]
    whole = run(hc, "--as", "xml", f"{base_url}/xml/feed?n=2")
    assert whole.returncode == 0 and ET.fromstring(whole.stdout).tag == "{http://www.w3.org/2005/Atom}feed"


def test_as_plist_prints_an_xml_plist_that_plistlib_reads(hc, base_url):
    import plistlib
    doc = {"name": "Zoë", "n": [1, -2, 3.5], "ok": True, "blob": b"\x00\x01"}
    body = plistlib.dumps(doc, fmt=plistlib.FMT_BINARY).hex()
    out = run(hc, "get", f"{base_url}/plist?ctype=application/x-bplist&hex={body}", "--as", "plist")
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.startswith(b"<?xml") and plistlib.loads(out.stdout) == doc
    out = run(hc, "--as", "plist", "--path", "n.1", f"{base_url}/plist?ctype=application/x-bplist&hex={body}")
    assert out.returncode == 0 and plistlib.loads(out.stdout) == -2
    out = run(hc, "--as", "plist", f"{base_url}/plist?hex={b'<plist><dict>'.hex()}")
    assert out.returncode == 7


# -- saving to files

def test_output_is_atomic(hc, base_url, tmp_path):
    target = tmp_path / "out.bin"
    out = run(hc, "-o", str(target), f"{base_url}/bytes/5000")
    assert out.returncode == 0 and target.read_bytes() == det_bytes(0, 5000)
    assert b"saved 5000 bytes" in out.stderr
    target.write_bytes(b"keep me")
    out = run(hc, "-o", str(target), f"{base_url}/truncated?bytes=5000")
    assert out.returncode == 2 and target.read_bytes() == b"keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]  # no partial file left


def test_remote_name_saves_under_the_urls_file_name(hc, base_url, tmp_path):
    out = run(hc, "-O", f"{base_url}/bytes/321?x=1#frag", cwd=tmp_path)
    assert out.returncode == 0 and (tmp_path / "321").read_bytes() == det_bytes(0, 321)
    out = run(hc, "-O", f"{base_url}/", cwd=tmp_path)
    assert out.returncode == 1 and b"no file name" in out.stderr
    # A name that would escape the folder is refused; percent-escapes are kept as curl does.
    out = run(hc, "-O", f"{base_url}/bytes/..", cwd=tmp_path)
    assert out.returncode == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["321"]


@pytest.mark.parametrize("value, saved", [
    ('attachment; filename="report.pdf"', "report.pdf"),
    ("attachment; filename=../../escape.txt", "escape.txt"),
    ('attachment; filename="..\\\\win\\\\evil.exe"', "evil.exe"),
    ("attachment; filename=plain.txt; filename*=UTF-8''na%C3%AFve%20file.txt", "naïve file.txt"),
    ("attachment; filename=.hidden", "disposition"),  # unsafe: the URL's name instead
    ("attachment", "disposition"),
])
def test_remote_header_name_is_made_safe(hc, base_url, tmp_path, value, saved):
    import urllib.parse
    url = f"{base_url}/disposition?value={urllib.parse.quote(value)}"
    out = run(hc, "-O", "-J", url, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert [p.name for p in tmp_path.iterdir()] == [saved]
    assert (tmp_path / saved).read_bytes() == b"payload"


def test_remote_header_name_never_replaces_a_file(hc, base_url, tmp_path):
    (tmp_path / "report.pdf").write_bytes(b"mine")
    url = f"{base_url}/disposition?value=attachment%3B%20filename%3Dreport.pdf"
    out = run(hc, "-O", "-J", url, cwd=tmp_path)
    assert out.returncode == 10 and b"exists" in out.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]
    assert (tmp_path / "report.pdf").read_bytes() == b"mine"


def test_continue_at_resumes_a_partial_download(hc, base_url, tmp_path):
    target = tmp_path / "big.bin"
    out = run(hc, "-C", "-", "-o", str(target), f"{base_url}/range/200000?reset_after=70000")
    assert out.returncode == 2 and not target.exists()
    part = tmp_path / "big.bin.part"
    assert 0 < part.stat().st_size < 200000
    out = run(hc, "-C", "-", "-o", str(target), f"{base_url}/range/200000")
    assert out.returncode == 0 and b"(resumed)" in out.stderr
    assert target.read_bytes() == det_bytes(0, 200000) and not part.exists()


# -- retries and compression

def test_retry_repeats_transient_failures_only(hc, base_url, tmp_path):
    key = f"k{time.monotonic_ns()}"
    out = run(hc, "--retry", "2", "--retry-delay", "0", f"{base_url}/flaky/{key}/2")
    assert out.returncode == 0 and out.stdout == b"ok after 2"
    assert out.stderr.count(b"retrying") == 2
    out = run(hc, "--retry", "1", "--retry-delay", "0", f"{base_url}/flaky/{key}b/2")
    assert out.returncode == 5 and out.stderr.count(b"retrying") == 1
    out = run(hc, "--retry", "3", "--retry-delay", "0", f"{base_url}/flaky/{key}c/1?status=404")
    assert out.returncode == 5 and b"retrying" not in out.stderr  # a 404 is not transient
    # The server's Retry-After (0 here) is used when no --retry-delay is given.
    start = time.monotonic()
    out = run(hc, "--retry", "1", f"{base_url}/flaky/{key}d/1")
    assert out.returncode == 0 and time.monotonic() - start < 5
    # A reset connection is transient, and a download retried with -C - continues its part:
    # each attempt here is cut after 40000 bytes, so the third one completes the file.
    target = tmp_path / "r.bin"
    out = run(hc, "--retry", "3", "--retry-delay", "0", "-C", "-", "-o", str(target),
              f"{base_url}/range/100000?reset_after=40000")
    assert out.returncode == 0 and out.stderr.count(b"retrying") == 2 and b"(resumed)" in out.stderr
    assert target.read_bytes() == det_bytes(0, 100000)
    # Without -C - each attempt starts over and fails the same way.
    out = run(hc, "--retry", "2", "--retry-delay", "0", "-o", str(tmp_path / "s.bin"),
              f"{base_url}/range/100000?reset_after=40000")
    assert out.returncode == 2 and out.stderr.count(b"retrying") == 2
    assert not (tmp_path / "s.bin").exists()


def test_compressed_by_default(hc, base_url):
    seen = echo(hc, base_url)
    assert "gzip" in seen["h"].get("accept-encoding", "")
    assert "accept-encoding" not in echo(hc, base_url, "--no-compressed")["h"]
    out = run(hc, f"{base_url}/gzip/100000")
    assert out.returncode == 0 and out.stdout == det_bytes(0, 100000)


# -- progress and exit codes

def _run_in_terminal(hc, *args, timeout=60):
    """Runs hc with stderr on a pseudo-terminal; returns (exit code, stdout, what the terminal got)."""
    main, sub = pty.openpty()
    proc = subprocess.Popen([hc, *args], stdout=subprocess.PIPE, stderr=sub)
    os.close(sub)
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:
                break
            if not data:
                break
            seen += data
        elif proc.poll() is not None:
            break
    out = proc.stdout.read()
    code = proc.wait(timeout=timeout)
    os.close(main)
    return code, out, seen.decode("utf-8", "replace")


def test_progress_bar_with_size_rate_and_eta_only_on_a_terminal(hc, base_url, tmp_path):
    # /slow sends its body in 20 pieces over about a second: the bar is redrawn while it arrives.
    code, out, terminal = _run_in_terminal(hc, "-o", str(tmp_path / "s.bin"), f"{base_url}/slow?bytes=400000&chunk=20000&delay=0.05")
    assert code == 0, terminal
    assert "%" in terminal and "KiB" in terminal and "/s" in terminal
    assert "ETA" in terminal or " in 0:0" in terminal
    assert "100%" in terminal and "390.6 KiB / 390.6 KiB" in terminal
    code, out, terminal = _run_in_terminal(hc, "-s", "-o", str(tmp_path / "t.bin"), f"{base_url}/bytes/1000")
    assert code == 0 and terminal == ""  # -s: quiet
    out = run(hc, "-o", str(tmp_path / "u.bin"), f"{base_url}/slow?bytes=400000&chunk=20000&delay=0.05")
    assert b"%" not in out.stderr and b"ETA" not in out.stderr  # not a terminal: no bar


@pytest.mark.parametrize("args, code", [
    (["{refused}"], 2),
    (["--max-time", "0.5", "{base}/stall"], 3),
    (["{base}/status/404"], 5),
    (["--as", "json", "{base}/bytes/10"], 6),
    (["--as", "json", "--accept-type", "*/*", "{base}/bytes/10"], 7),
    (["--max-size", "100", "{base}/bytes/1000"], 8),
    (["-o", "/nonexistent-dir/f", "{base}/bytes/1"], 10),
    (["{base}/a b"], 1),
    (["ftp://127.0.0.1/"], 1),  # http and https only: another scheme is a bad URL, refused up front
])
def test_exit_codes_are_the_documented_ones(hc, base_url, args, code):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{s.getsockname()[1]}/"  # bound, not listening
        args = [a.format(base=base_url, refused=refused) for a in args]
        out = run(hc, *args)
    assert out.returncode == code, out.stderr
    assert out.stderr.startswith(b"hc: ") and out.stdout == b""


# -- record streams (issue 19)

def test_as_events_prints_each_server_sent_event(hc, base_url):
    import base64
    body = b": ping\r\nevent: up\r\nid: 7\r\ndata: a\r\ndata: b\r\n\r\nretry: 5\ndata: c\n\ndata: never dispatched\n"
    url = f"{base_url}/records/echo?chunk=3&b64={base64.urlsafe_b64encode(body).decode()}"
    out = run(hc, "--as", "events", url)
    assert out.returncode == 0, out
    assert out.stdout == b"event: up\nid: 7\ndata: a\ndata: b\n\nid: 7\nretry: 5\ndata: c\n\n"
    wrong = run(hc, "--as", "events", f"{base_url}/records/sse-status?status=200&ctype=text/plain")
    assert wrong.returncode == 6 and wrong.stdout == b""


def test_as_json_lines_prints_one_record_per_line(hc, base_url):
    out = run(hc, "--as", "json-lines", f"{base_url}/ndjson?n=3")
    assert out.returncode == 0, out
    assert out.stdout == b'{"i":0}\n{"i":1}\n{"i":2}\n'


# -- --schema

def test_schema_validates_the_json_body_and_exits_7_naming_each_violation(hc, base_url, tmp_path):
    import urllib.parse
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"n": {"type": "array", "items": {"type": "string"}}}}))
    doc = urllib.parse.quote(json.dumps({"n": [1, "a", 2]}))
    out = run(hc, "--schema", str(schema), f"{base_url}/json?doc={doc}")
    assert out.returncode == 7
    err = out.stderr.decode()
    assert "schema validation failed" in err and '"/n/0"' in err and "/properties/n/items/type" in err
    out = run(hc, "--schema", str(schema), "--all-errors", f"{base_url}/json?doc={doc}")
    assert out.returncode == 7 and '"/n/2"' in out.stderr.decode()
    good = urllib.parse.quote(json.dumps({"n": ["x"]}))
    out = run(hc, "--schema", str(schema), "--path", "n.0", f"{base_url}/json?doc={good}")
    assert out.returncode == 0 and json.loads(out.stdout) == "x"
    bad_schema = tmp_path / "bad.json"
    bad_schema.write_text('{"type": "nope"}')
    assert run(hc, "--schema", str(bad_schema), f"{base_url}/json").returncode == 1


def test_schema_file_may_be_a_property_list(hc, base_url, tmp_path):
    import plistlib
    import urllib.parse
    schema = tmp_path / "s.plist"
    schema.write_bytes(plistlib.dumps({"type": "object", "required": ["id"]}, fmt=plistlib.FMT_BINARY))
    out = run(hc, "--schema", str(schema), f"{base_url}/json?doc={urllib.parse.quote(json.dumps({'x': 1}))}")
    assert out.returncode == 7 and "'id' is a required property" in out.stderr.decode()
    out = run(hc, "--schema", str(schema), f"{base_url}/json?doc={urllib.parse.quote(json.dumps({'id': 1}))}")
    assert out.returncode == 0 and json.loads(out.stdout) == {"id": 1}


def test_cache_dir_answers_the_second_get_from_the_cache(hc, base_url, tmp_path):
    key = f"cli-{os.getpid()}-{time.time_ns()}"
    url = f"{base_url}/cached/{key}?h=Cache-Control:%20max-age%3D60&body=kept"
    for _ in range(2):
        out = run(hc, "get", "--cache", str(tmp_path / "c"), url)
        assert out.returncode == 0 and out.stdout == b"kept"
    seen = json.loads(run(hc, f"{base_url}/cache-count/{key}").stdout)
    assert seen["count"] == 1
    assert (tmp_path / "c" / "httpcontent-cache.sqlite").exists()
