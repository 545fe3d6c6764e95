"""The Python contestants of bench/records.sh (issue 19): an NDJSON body from a URL turned into
Python objects record by record, or into text lines.

    PYTHONPATH=bindings/python python3 bench/records_bench.py MODE URL COUNT EXPECTED_BYTES EXPECTED_RECORDS

Modes (COUNT downloads of URL, each checked to give EXPECTED_RECORDS records / lines):
    hc-iter            for v in client.iter_json_lines(url)
    hc-handler         client.get(url, handler=hc.JSONLines(on_item))
    requests-json      for line in requests.get(url, stream=True).iter_lines(): json.loads(line)
                       (iter_lines' default chunk_size=512, as users call it)
    requests64k-json   the same with iter_lines(chunk_size=65536)
    requests-orjson    iter_lines(chunk_size=65536) + orjson.loads per line
    hc-lines           for line in client.iter_lines(url) (str lines)
    requests-lines     for line in r.iter_lines(chunk_size=65536, decode_unicode=True): bytes lines,
                       since nginx serves application/x-ndjson with no charset and requests then
                       leaves decode_unicode without effect (the issue's anchor, as users call it)
Records are counted and dropped. Prints one line as bench/json_bench.py does:
"MBPS <value> bytes=<total> seconds=<elapsed> cpu=<cpu seconds> rss=<peak RSS growth>".
Exit 3: the mode's library is not installed.
"""

from __future__ import annotations

import json
import sys

import json_bench  # bench/json_bench.py, same folder


def make(mode: str, url: str):
    if mode.startswith("hc-"):
        import httpcontent as hc
        client = hc.Client()
        if mode == "hc-iter":
            return lambda: sum(1 for _ in client.iter_json_lines(url))
        if mode == "hc-lines":
            return lambda: sum(1 for _ in client.iter_lines(url))
        if mode == "hc-handler":
            seen = [0]

            def on_item(_value) -> None:
                seen[0] += 1
            handler = hc.JSONLines(on_item)

            def fetch() -> int:
                seen[0] = 0
                client.get(url, handler=handler)
                return seen[0]
            return fetch
    try:
        import requests
    except ImportError:
        sys.exit(3)
    session = requests.Session()
    if mode == "requests-orjson":
        try:
            import orjson
        except ImportError:
            sys.exit(3)
        loads = orjson.loads
    else:
        loads = json.loads
    chunk = 512 if mode == "requests-json" else 65536

    if mode == "requests-lines":
        def lines() -> int:
            with session.get(url, stream=True) as r:
                return sum(1 for _ in r.iter_lines(chunk_size=chunk, decode_unicode=True))
        return lines

    def fetch() -> int:
        n = 0
        with session.get(url, stream=True) as r:
            for line in r.iter_lines(chunk_size=chunk):
                if line:
                    loads(line)
                    n += 1
        return n
    return fetch


def main() -> int:
    return json_bench.run(make, __doc__)  # the timing, checks and output of bench/json_bench.py


if __name__ == "__main__":
    sys.exit(main())
