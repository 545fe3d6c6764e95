"""JSON (issue 4): a JSON array of objects (≈ 100 MB; json_doc.py's rich document by default)
served by a local nginx, parsed by raw yajl in memory, by libcurl + yajl in C, by httpcontent's
JSON handlers from C and from Python, and by Python's own tools (requests/urllib3 + json.loads,
orjson, msgspec, ijson's yajl2_c backend); with the peak RSS growth of each. Contestant
programs: bench/json_bench.c, bench/json_bench.py.

    bash bench/json.sh [--rounds N] [--mb SIZE] [--doc rich|simple] [--only a,b] [--no-write]
"""

from __future__ import annotations

import os
import subprocess
import sys

from harness import Contestant, Ratio, Session, library, machine, parse, tables
from harness.rounds import log

SECTION = "## JSON (issue 4)"

SETTINGS = {
    "yajl-raw": "raw `yajl_parse` in C, bytes in memory, no-op callbacks incl. integer/double",
    "yajl-raw-number": "same, no-op number callback instead (no number conversion)",
    "hc-parse": "`hc_json_parse` on the same bytes in memory (the library's tree)",
    "curl-yajl": "libcurl + `yajl_parse` in C over loopback (no-op integer/double callbacks)",
    "hc-c-tree": "C: `hc_handler_json_new` (tree while downloading), `hc_response_json`",
    "hc-c-items": "C: `hc_handler_json_items_new({\"item\"})`, one callback per element",
    "hc-c-batches": "C: `hc_handler_json_batches_new({\"item\"})`, JSON-text batches",
    "hc-py-json": "Python: `client.get(url, handler=hc.JSON()).content`",
    "requests": "Python: `json.loads(requests.Session().get(url).content)`",
    "urllib3": "Python: `json.loads(urllib3.PoolManager().request(...).data)`",
    "hc-py-items": "Python: `hc.JSONItems(\"item\", on_item)` handler",
    "hc-py-iter": "Python: `for v in client.iter_json(url, \"item\")`",
    "ijson": "Python: `ijson.items(requests stream, \"item\", use_float=True)`, yajl2_c backend: **the anchor**",
    "ijson-decimal": "Python: the same with ijson's default `use_float=False` (Decimals)",
    "requests-orjson": "Python: `orjson.loads(requests.Session().get(url).content)`",
    "requests-msgspec": "Python: `msgspec.json.decode(requests.Session().get(url).content)`",
}

# C contestants reading the file from memory; the others fetch the URL.
IN_MEMORY = {"yajl-raw", "yajl-raw-number", "hc-parse"}
C_MODES = {"yajl-raw", "yajl-raw-number", "hc-parse", "curl-yajl", "hc-c-tree", "hc-c-items", "hc-c-batches"}
PY_MODES = {"hc-py-json": "hc-json", "hc-py-items": "hc-items", "hc-py-iter": "hc-iter"}

RATIOS = [
    Ratio("hc-c-tree", "yajl-raw", "≥ 0.7", "tree while downloading vs raw yajl"),
    Ratio("hc-parse", "yajl-raw", "≥ 0.7", "tree in memory vs raw yajl (no network)"),
    Ratio("hc-parse", "yajl-raw-number", None, "tree in memory vs raw yajl, number callback"),
    Ratio("curl-yajl", "yajl-raw", None, "libcurl + yajl vs raw yajl"),
    Ratio("hc-c-tree", "curl-yajl", None, "tree while downloading vs libcurl + yajl"),
    Ratio("hc-c-items", "yajl-raw", None, "path streaming (trees) vs raw yajl"),
    Ratio("hc-c-batches", "yajl-raw", None, "path streaming (batches) vs raw yajl"),
    Ratio("hc-c-items", "curl-yajl", "≥ 0.9", "C path streaming vs libcurl + yajl with no-op callbacks"),
    Ratio("hc-py-json", "requests-orjson", "≥ 1.25", "Python whole document vs requests + orjson"),
    Ratio("hc-py-json", "requests-msgspec", "≥ 1.25", "Python whole document vs requests + msgspec"),
    Ratio("hc-py-json", "requests", "> 1", "Python whole document vs requests + json.loads"),
    Ratio("hc-py-json", "urllib3", None, "Python whole document vs urllib3 + json.loads"),
    Ratio("hc-py-iter", "ijson", "≥ 1.5", "Python path streaming (iter_json) vs ijson yajl2_c, use_float=True"),
    Ratio("hc-py-items", "ijson", "≥ 1.5", "Python path streaming (JSONItems) vs ijson yajl2_c, use_float=True"),
    Ratio("hc-py-iter", "ijson-decimal", None, "the same vs ijson's default (Decimals)"),
]

# Peak RSS growth targets (MiB): path streaming the array.
RSS_TARGETS = {"hc-c-items": 32, "hc-c-batches": 32, "hc-py-items": 32, "hc-py-iter": 32}

RICH = ("rich objects (escaped and non-ASCII strings, floats, nesting: `{\"id\": i, \"name\": "
        "\"item \\\"i\\\"\\n\", \"text\": \"café \\\\ path/i ✓\", \"score\": i*0.37, \"geo\": {\"lat\": …, "
        "\"lon\": …, \"tags\": [\"a\", \"b\", {\"k\": i}]}, \"flags\": [true, false, null]}`)")
SIMPLE = "small objects (`{\"id\": i, \"name\": \"item i\", \"tags\": [\"a\", \"b\"], \"value\": i*1.5}`)"


def ijson_backend(pythonpath: str) -> tuple[str, str]:
    """(version, backend) of the ijson importable with pythonpath, ("", "") if none."""
    p = subprocess.run([sys.executable, "-c", "import ijson; print(ijson.__version__, ijson.backend)"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": pythonpath})
    parts = p.stdout.split()
    return (parts[0], parts[1]) if p.returncode == 0 and len(parts) == 2 else ("", "")


def find_ijson(s: Session, want: bool) -> str:
    """ijson with its yajl2_c backend: installed, or pip'd (the wheel bundles its C extension)
    into the cache folder, which then joins the contestants' PYTHONPATH. Returns the report's note."""
    if not want:
        return "not measured (BENCH_IJSON=0)"
    version, backend = ijson_backend("")
    if backend == "yajl2_c":
        return f"ijson {version} (installed), backend yajl2_c"
    pydeps = s.settings.pydeps
    if ijson_backend(pydeps)[1] != "yajl2_c":
        log(f"ijson (yajl2_c) missing: pip install --target {pydeps} ijson")
        library.pip_into_cache(pydeps, "--no-deps", "ijson")
    version, backend = ijson_backend(pydeps)
    if backend != "yajl2_c":
        return f"not measured (no ijson with the yajl2_c backend: {backend or 'install failed'})"
    s.add_pythonpath(pydeps)
    return f"ijson {version} in {pydeps}, backend yajl2_c"


def contestants(s: Session, prog: str, url: str, path: str, size: int, items: int, ijson: bool) -> list[Contestant]:
    tail = ["{count}", str(size), str(items)]
    out = []
    for name, text in SETTINGS.items():
        if name.startswith("ijson") and not ijson:
            continue
        src = path if name in IN_MEMORY else url
        if name in C_MODES:
            cmd = [prog, name, src, *tail]
        else:
            cmd = [s.settings.python, os.path.join(s.settings.here, "json_bench.py"), PY_MODES.get(name, name), src, *tail]
        out.append(Contestant(name, text, command=cmd))
    return out


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=5, options=[
        (("--mb",), {"type": int, "default": int(os.environ.get("BENCH_JSON_MB") or 100)}),
        (("--doc",), {"choices": ["rich", "simple"], "default": os.environ.get("BENCH_JSON_DOC") or "rich"}),
        (("--no-ijson",), {"action": "store_true", "default": os.environ.get("BENCH_IJSON") == "0"})])
    with Session("json", "bash bench/json.sh", settings, "nginx", "client") as s:
        os.makedirs(s.path("www"))
        data = s.path("www", "data.json")
        out = subprocess.run([settings.python, os.path.join(settings.here, "json_doc.py"), data,
                              str(settings.extra.mb), settings.extra.doc], check=True, capture_output=True, text=True)
        size, items = (int(x) for x in out.stdout.split())
        os.chmod(data, 0o644)
        ngx = s.nginx(http="types { application/json json; }")
        s.snapshot()
        prog = s.compile("json_bench.c", "-lcurl", "-lyajl")
        note = find_ijson(s, not settings.extra.no_ijson)
        cs = contestants(s, prog, f"http://127.0.0.1:{ngx['port']}/data.json", data, size, items,
                         not note.startswith("not measured"))
        res = s.run(cs)
        yajl = machine.command_output(["dpkg-query", "-W", "-f=${Version}", "libyajl2"])
        shape = SIMPLE if settings.extra.doc == "simple" else RICH
        lines = [SECTION, "",
                 f"{s.measured_by()}, yajl {yajl} (system), nginx {ngx['version']}, Python "
                 f"{machine.python_version()} ({library.pylibs(['urllib3', 'requests'], s.pythonpath)}); ijson: {note}.", "",
                 f"One JSON array of {items:,} {shape}, {size:,} bytes ({size / 1048576:.0f} MiB), served as "
                 f"`application/json` by nginx on 127.0.0.1 (`sendfile on`, keep-alive) or read into memory "
                 f"first (raw yajl, `hc_json_parse`); {s.pinning.sentence}. Each measurement is "
                 f"{settings.count} pass(es) in a fresh process; every pass is checked (bytes and element "
                 f"count). {s.rounds_note(res)}. MB/s = 10^6 bytes of JSON per second of wall time, in each "
                 f"round. CPU = the client process's user + system CPU seconds (every thread) per 10^9 bytes: "
                 f"on this shared machine wall time swings with other work, CPU per byte far less, so the "
                 f"**CPU ratio** (the baseline's CPU per byte over the contestant's: the speed ratio had both "
                 f"had the CPU to themselves) has a verdict beside the wall-time ratio's. Ratios are taken "
                 f"round by round and given as their median and min–max.", ""]
        lines += tables.ratio_rows(RATIOS, res) + [""]
        lines += tables.contestant_rows(cs, res, RSS_TARGETS) + [""]
        lines.append("MB/s at that CPU = 1000 / (CPU s/GB): the speed with a whole core. Peak RSS growth = "
                     "the highest over the rounds of VmHWM (reset after setup) minus VmRSS after setup; "
                     "for the in-memory contestants the file itself is loaded before.")
        return s.publish(lines)
