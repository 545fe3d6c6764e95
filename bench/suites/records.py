"""Record streams (issue 19): an NDJSON body (≈ 100 MB of small records) served by a local nginx,
read record by record from Python by httpcontent (client.iter_json_lines, hc.JSONLines) and by
requests' iter_lines() + json.loads / orjson.loads per line, and as text lines; with the peak RSS
growth of each. Contestant programs: bench/records_bench.py.

    bash bench/records.sh [--rounds N] [--mb SIZE] [--only a,b] [--no-write]
"""

from __future__ import annotations

import os

from harness import Contestant, Ratio, Session, library, machine, parse, tables

SECTION = "## Record streams (issue 19)"
LINE = '{"id": %d, "name": "item %d", "tags": ["a", "b"], "value": %r, "ok": true}\n'

RATIOS = [
    Ratio("hc-iter", "requests-json", "≥ 1.5", "iter_json_lines vs requests iter_lines() + json.loads"),
    Ratio("hc-iter", "requests64k-json", None, "iter_json_lines vs requests iter_lines(64 KiB) + json.loads"),
    Ratio("hc-iter", "requests-orjson", "≥ 1.0", "iter_json_lines vs requests iter_lines(64 KiB) + orjson.loads"),
    Ratio("hc-handler", "requests-orjson", None, "JSONLines handler vs requests + orjson.loads"),
    Ratio("hc-lines", "requests-lines", "≥ 1.0", "iter_lines (str) vs requests iter_lines (bytes, no charset named)"),
]
RSS_TARGETS = {"hc-iter": 32, "hc-handler": 32, "hc-lines": 32}

SETTINGS = {
    "hc-iter": "Python: `for v in client.iter_json_lines(url)` (marshal batches, worker thread)",
    "hc-handler": "Python: `client.get(url, handler=hc.JSONLines(on_item))`",
    "requests-json": "Python: requests `iter_lines()` (default chunk_size=512) + `json.loads` per line",
    "requests64k-json": "Python: requests `iter_lines(chunk_size=65536)` + `json.loads` per line",
    "requests-orjson": "Python: requests `iter_lines(chunk_size=65536)` + `orjson.loads` per line",
    "hc-lines": "Python: `for line in client.iter_lines(url)` (str lines)",
    "requests-lines": "Python: requests `iter_lines(chunk_size=65536, decode_unicode=True)` (bytes lines: the "
                      "Content-Type names no charset, so requests does not decode)",
}


def write_ndjson(path: str, mb: int) -> tuple[int, int]:
    """One record a line up to mb MiB; returns (bytes, records)."""
    limit, size, i, parts = mb * 1048576, 0, 0, []
    with open(path, "w") as f:
        while size < limit:
            s = LINE % (i, i, i * 1.5)
            parts.append(s)
            size += len(s)
            i += 1
            if len(parts) >= 10000:
                f.write("".join(parts))
                parts = []
        f.write("".join(parts))
    os.chmod(path, 0o644)
    return size, i


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=5, options=[(("--mb",), {"type": int, "default": int(os.environ.get("BENCH_RECORDS_MB") or 100)})])
    with Session("records", "bash bench/records.sh", settings, "nginx", "client") as s:
        os.makedirs(s.path("www"))
        size, items = write_ndjson(s.path("www", "data.ndjson"), settings.extra.mb)
        ngx = s.nginx(http="types { application/x-ndjson ndjson; }")
        s.snapshot()
        url = f"http://127.0.0.1:{ngx['port']}/data.ndjson"
        prog = os.path.join(settings.here, "records_bench.py")
        contestants = [Contestant(name, text, command=[settings.python, prog, name, url, "{count}", str(size), str(items)])
                       for name, text in SETTINGS.items()]
        res = s.run(contestants)
        pylibs = library.pylibs(["requests", "orjson"], s.pythonpath)
        lines = [SECTION, "",
                 f"{s.measured_by()}, nginx {ngx['version']}, Python {machine.python_version()} ({pylibs}).", "",
                 f"One NDJSON body of {items:,} records "
                 f"(`{{\"id\": i, \"name\": \"item i\", \"tags\": [\"a\", \"b\"], \"value\": i*1.5, \"ok\": true}}` "
                 f"and LF), {size:,} bytes ({size / 1048576:.0f} MiB), served as `application/x-ndjson` by "
                 f"nginx on 127.0.0.1; {s.pinning.sentence}. Each measurement is {settings.count} pass(es) in a "
                 f"fresh process, every pass checked (record or line count). {s.rounds_note(res)}. "
                 f"MB/s = 10^6 body bytes per second of wall "
                 f"time; CPU = the client process's user + system CPU seconds per 10^9 bytes. Ratios are "
                 f"taken round by round (the two contestants measured minutes apart at most) and given as "
                 f"their median and min–max, with a verdict for each: the **CPU ratio** (the baseline's CPU "
                 f"per byte over the contestant's) holds steady on a shared machine; the wall-time ratio is "
                 f"what a user sees (hc's iterators parse in the transfer's thread while Python consumes) "
                 f"and is to be read on a quiet machine.", ""]
        lines += tables.ratio_rows(RATIOS, res) + [""]
        lines += tables.contestant_rows(contestants, res, RSS_TARGETS)
        return s.publish(lines)
