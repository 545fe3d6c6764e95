"""Property-list decoding from Python (issue 16): `hc.Plist()` against `plistlib.loads`, on the
same ~10 MB document in the binary and the XML format, fetched from a local server.

    bash bench/plist.sh [--rounds N] [--mb SIZE] [--no-write]

Both contestants fetch the same bytes through the same library transport, so the ratio compares
decoding: `hc.Plist()` (a binary plist read straight from its bytes into a pickle, an XML one
parsed by libplist then written as one; then one pickle load) with `hc.Bytes()` followed by
`plistlib.loads(body)`. Each result is checked equal to plistlib's. The server is Python's
ThreadingHTTPServer on 127.0.0.1 serving the two files; contestants are timed in-process, one
pass a round, interleaved. Reported: the median per contestant and the ratio plistlib / hc per
format from the same rounds (above 1: hc is faster).
"""

from __future__ import annotations

import datetime
import functools
import os
import plistlib
import sys
from typing import Any

from harness import Contestant, Ratio, Session, parse, servers, tables

SECTION = "## Property lists (issue 16)"
FORMATS = (("binary", "doc.bplist", plistlib.FMT_BINARY), ("xml", "doc.xml", plistlib.FMT_XML))
RATIOS = [Ratio("hc-binary", "plistlib-binary", "≥ 1.5"), Ratio("hc-xml", "plistlib-xml", "≥ 1.5")]


def document(mb: float) -> dict:
    """Records with every plist type, repeated to about `mb` MB in the binary format."""
    n = int(mb * 1e6 / 165)
    return {"items": [{"id": i, "name": f"item {i} ☺", "score": i * 1.25, "ok": i % 2 == 0,
                       "when": datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=i),
                       "blob": bytes([i % 256]) * 8, "tags": ["a", "b", "c"], "neg": -i}
                      for i in range(n)]}


def contestants(hc: Any, client: Any, urls: dict[str, str]) -> list[Contestant]:
    plist_handler, bytes_handler = hc.Plist(max_size=1 << 30), hc.Bytes()

    def hc_plist(url: str) -> Any:
        return client.get(url, handler=plist_handler).content

    def plistlib_loads(url: str) -> Any:
        return plistlib.loads(client.get(url, handler=bytes_handler).content)

    out = []
    for fmt, _, _ in FORMATS:
        out.append(Contestant(f"hc-{fmt}", "client.get(url, handler=hc.Plist()).content",
                              call=functools.partial(hc_plist, urls[fmt]), tags={"format": fmt}))
        out.append(Contestant(f"plistlib-{fmt}", "plistlib.loads(client.get(url, handler=hc.Bytes()).content)",
                              call=functools.partial(plistlib_loads, urls[fmt]), tags={"format": fmt}))
    return out


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=3, options=[(("--mb",), {"type": float, "default": 10.0})])
    doc = document(settings.extra.mb)
    expected = plistlib.loads(plistlib.dumps(doc, fmt=plistlib.FMT_BINARY))
    expected_xml = plistlib.loads(plistlib.dumps(doc))
    with Session("plist", "bash bench/plist.sh", settings) as s:
        s.snapshot()
        sys.path.insert(0, s.snap["py"])
        import httpcontent as hc
        folder = s.path("www")
        os.makedirs(folder)
        sizes = {}
        for fmt, name, pfmt in FORMATS:
            data = plistlib.dumps(doc, fmt=pfmt)
            sizes[fmt] = len(data)
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)

        def check(c: Contestant, got: Any) -> None:
            assert got == (expected if c.tags["format"] == "binary" else expected_xml), c.name

        base = s.enter_context(servers.file_server(folder, {".bplist": "application/x-bplist", ".xml": "application/x-plist"}))
        client = s.enter_context(hc.Client(timeout=300))
        cs = contestants(hc, client, {fmt: f"{base}/{name}" for fmt, name, _ in FORMATS})
        res = s.run(cs, s.runner(check=check))     # the warm-up pass checks every result too
    lines = [SECTION, "",
             f"{s.measured_by()}. {s.rounds_note(res)}: the ratios are the figure, not the seconds. "
             f"Document: {len(doc['items'])} records of every plist type; binary {sizes['binary'] / 1e6:.1f} MB, "
             f"XML {sizes['xml'] / 1e6:.1f} MB, served by Python's http.server on 127.0.0.1, client and "
             f"server in one unpinned process.", ""]
    lines += tables.timed(RATIOS, res, "format")
    return s.publish(lines)
