"""Download throughput (issues 2 and 15): one large file of random bytes downloaded over and over
on one kept-alive connection from a local nginx, by raw libcurl (bench/raw_curl.c), httpcontent
from C (bench/hc_bench.c) and from Python, and the Python HTTP clients (bench/hc_bench.py); to
memory, discarded, or to a file (each to-file measurement starts from the same target, untimed).

    bash bench/run.sh [--rounds N] [--mb 512] [--count N] [--file-start cached|none] [--only a,b] [--no-write]

Without --count (BENCH_COUNT) the downloads per measurement are calibrated so that raw-discard
takes at least --min-seconds (BENCH_MIN_SECONDS, 1.0).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

from harness import Contestant, Ratio, Session, library, log, machine, parse, stats, writer

SECTION = "## Download throughput (issues 2 and 15)"

SETTINGS = {
    "raw-discard": "raw libcurl (C), discard",
    "raw-accumulate": "raw libcurl (C), accumulate (realloc)",
    "raw-tuned-discard": "raw libcurl (C), `CURLOPT_BUFFERSIZE` 256 KiB, discard: **the anchor**",
    "raw-tuned-accumulate": "raw libcurl (C), `CURLOPT_BUFFERSIZE` 256 KiB, accumulate (realloc, doubling)",
    "raw-tuned-file": "raw libcurl (C), `CURLOPT_BUFFERSIZE` 256 KiB, `write(2)` to a file",
    "raw-tuned-file-fsync": "the same, `fsync` at the end",
    "hc-py-file": "httpcontent from Python, `hc.File(path)` (atomic rename, fsync'd: the default)",
    "hc-py-file-nofsync": "httpcontent from Python, `hc.File(path, fsync=False)`",
    "requests-file": "requests, `iter_content(1 MiB)` + `write`, then `flush` + `os.fsync`",
    "requests-file-nofsync": "requests, `iter_content(1 MiB)` + `write`, no fsync",
    "hc-c-file": "httpcontent from C, `hc_handler_file_new(path, 0)` (atomic rename, fsync'd: the default)",
    "hc-c-file-nofsync": "httpcontent from C, `hc_handler_file_new(path, HC_FILE_NO_FSYNC)`",
    "hc-c-discard": "httpcontent from C, `hc_handler_discard_new()`",
    "hc-c-bytes": "httpcontent from C, `hc_handler_bytes_new(0)`",
    "hc-py-discard": "httpcontent from Python, `hc.Discard()`",
    "hc-py-bytes": "httpcontent from Python, `hc.Bytes()`",
    "urllib3": "urllib3 `PoolManager().request().data`",
    "requests": "requests `Session().get().content`",
    "pycurl-discard": "pycurl, Python write callback keeping nothing",
    "pycurl-bytes": "pycurl, `WRITEDATA` into `BytesIO`",
}

# (numerator, denominator, target or None for context only)
RATIOS = [
    Ratio("hc-c-discard", "raw-tuned-discard", "≥ 0.90"),
    Ratio("hc-py-discard", "raw-tuned-discard", "≥ 0.90"),
    Ratio("hc-c-bytes", "raw-tuned-accumulate", "≥ 0.90"),
    Ratio("hc-py-bytes", "raw-tuned-accumulate", "≥ 0.90"),
    Ratio("hc-py-file", "requests-file", "≥ 1.20"),
    Ratio("hc-py-file-nofsync", "requests-file-nofsync", "≥ 1.20"),
    Ratio("hc-py-file", "raw-tuned-file-fsync", "≥ 0.90"),
    Ratio("hc-py-file-nofsync", "raw-tuned-file", "≥ 0.90"),
    Ratio("hc-c-file", "requests-file", "≥ 1.20"),
    Ratio("hc-c-file-nofsync", "requests-file-nofsync", "≥ 1.20"),
    Ratio("hc-c-file", "raw-tuned-file-fsync", "≥ 0.90"),
    Ratio("hc-c-file-nofsync", "raw-tuned-file", "≥ 0.90"),
    Ratio("raw-tuned-discard", "raw-discard", None),
    Ratio("hc-c-discard", "raw-discard", None),
    Ratio("hc-c-bytes", "raw-accumulate", None),
    Ratio("pycurl-discard", "raw-discard", None),
    Ratio("pycurl-bytes", "raw-accumulate", None),
    Ratio("urllib3", "raw-accumulate", None),
    Ratio("requests", "raw-accumulate", None),
]




def find_pycurl(s: Session, want: bool) -> str:
    """pycurl installed, or built from source against the system libcurl into the cache folder
    (which then joins the contestants' PYTHONPATH). Returns the report's note."""
    def version(path: str) -> str:
        p = subprocess.run([sys.executable, "-c", "import pycurl; print(pycurl.version)"], capture_output=True,
                           text=True, env={**os.environ, "PYTHONPATH": path})
        return p.stdout.strip() if p.returncode == 0 else ""
    if not want:
        return "not measured (BENCH_PYCURL=0)"
    if version(""):
        return f"installed: {version('')}"
    pydeps = s.settings.pydeps
    if not version(pydeps):
        log(f"pycurl missing: pip install --no-binary pycurl --target {pydeps} pycurl")
        library.pip_into_cache(pydeps, "--no-binary", "pycurl", "--no-deps", "pycurl")
    if not version(pydeps):
        return "not measured (pip install pycurl failed)"
    s.add_pythonpath(pydeps)
    return f"built from source into {pydeps}: {version(pydeps)}"


def contestants(s: Session, url: str, expected: int, target: str, reset: object, pycurl: bool) -> list[Contestant]:
    tuned = os.environ.get("RAW_TUNED_BUFFER") or "262144"
    raw, hcc = s.compile("raw_curl.c", "-lcurl"), s.compile("hc_bench.c")
    py = [s.settings.python, os.path.join(s.settings.here, "hc_bench.py")]
    env = ["env", f"BENCH_FILE={target}", f"RAW_FILE={target}"]
    argv = {
        "raw-discard": [raw, "discard"], "raw-accumulate": [raw, "accumulate"],
        "raw-tuned-discard": [*env, f"RAW_BUFFERSIZE={tuned}", raw, "discard"],
        "raw-tuned-accumulate": [*env, f"RAW_BUFFERSIZE={tuned}", raw, "accumulate"],
        "raw-tuned-file": [*env, f"RAW_BUFFERSIZE={tuned}", raw, "file"],
        "raw-tuned-file-fsync": [*env, f"RAW_BUFFERSIZE={tuned}", "RAW_FSYNC=1", raw, "file"],
        "hc-c-file": [*env, hcc, "file"], "hc-c-file-nofsync": [*env, hcc, "file-nofsync"],
        "hc-c-discard": [hcc, "discard"], "hc-c-bytes": [hcc, "bytes"],
    }
    for name, mode in (("hc-py-file", "hc-file"), ("hc-py-file-nofsync", "hc-file-nofsync"),
                       ("requests-file", "requests-file"), ("requests-file-nofsync", "requests-file-nofsync"),
                       ("hc-py-discard", "hc-discard"), ("hc-py-bytes", "hc-bytes"), ("urllib3", "urllib3"),
                       ("requests", "requests"), ("pycurl-discard", "pycurl-discard"), ("pycurl-bytes", "pycurl-bytes")):
        argv[name] = [*env, *py, mode]
    return [Contestant(name, text, command=[*argv[name], url, "{count}", str(expected)],
                       prepare=reset if "-file" in name else None)
            for name, text in SETTINGS.items() if pycurl or not name.startswith("pycurl")]


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=5, count=0, options=[
        (("--mb",), {"type": int, "default": int(os.environ.get("BENCH_SIZE_MB") or 512)}),
        (("--min-seconds",), {"type": float, "default": float(os.environ.get("BENCH_MIN_SECONDS") or 1.0)}),
        (("--file-start",), {"choices": ["cached", "none"], "default": os.environ.get("BENCH_FILE_START") or "cached"}),
        (("--no-pycurl",), {"action": "store_true", "default": os.environ.get("BENCH_PYCURL") == "0"})])
    x = settings.extra
    with Session("download", "bash bench/run.sh", settings, "nginx", "client") as s:
        os.makedirs(s.path("www"))
        data, target, expected = s.path("www", "data.bin"), s.path("out.bin"), x.mb * 1048576
        with open(data, "wb") as f:
            for _ in range(x.mb):
                f.write(os.urandom(1048576))
        os.chmod(data, 0o644)
        ngx = s.nginx()
        s.snapshot()
        want_pycurl = not x.no_pycurl and (not settings.only or any(n.startswith("pycurl-") for n in settings.only))
        pycurl_note = find_pycurl(s, want_pycurl)

        def reset() -> None:
            """The same start for every to-file measurement: no file, or the previous version cached."""
            if x.file_start == "none":
                if os.path.exists(target):
                    os.remove(target)
                subprocess.run(["sync", "-f", s.tmp])
            else:
                subprocess.run(["dd", f"if={data}", f"of={target}", "bs=1M", "conv=fsync", "status=none"], check=True)
        cs = contestants(s, f"http://127.0.0.1:{ngx['port']}/data.bin", expected, target, reset,
                         not pycurl_note.startswith("not measured"))
        runner = s.runner()
        active = runner.warm_up(cs, settings.only)
        if not settings.count:
            probe = next((c for c in active if c.name == "raw-discard"), active[0])
            mbps = runner.measure(probe, 3)["mbps"]
            settings.count = max(1, math.ceil(1.2 * x.min_seconds / (expected / (mbps * 1e6))))
            log(f"calibration: {probe.name} at {mbps} MB/s; {settings.count} downloads per measurement")
        res = runner.rounds(active, settings.rounds, settings.count)
        pylibs = library.pylibs(["urllib3", "requests"], s.pythonpath)
    return s.publish(report(s, res, active, ngx["version"], pylibs, pycurl_note))


def report(s: Session, res: object, active: list[Contestant], nginx: str, pylibs: str, pycurl: str) -> list[str]:
    x = s.settings.extra
    mbps, cpu = res.of("mbps"), res.of("cpu_s_per_gb")
    med = {c: stats.median(v.values()) for c, v in mbps.items()}
    cpu_med = {c: stats.median(v.values()) for c, v in cpu.items()}
    start = ("Every to-file measurement starts with no target file (`BENCH_FILE_START=none`). " if x.file_start == "none"
             else "Every to-file measurement starts from the same target (`BENCH_FILE_START=cached`): the previous "
             "version of the file, whole, fsync'd and cached (untimed); the anchors truncate it (`O_TRUNC`), "
             "httpcontent renames a new file over it. ")
    lines = [SECTION, "", f"{s.measured_by()}, nginx {nginx}, Python {machine.python_version()} ({pylibs}); pycurl: {pycurl}.", "",
             f"A {x.mb} MiB file of random bytes from nginx on 127.0.0.1 (`sendfile on`, plain HTTP/1.1, keep-alive); "
             f"{s.pinning.sentence}. Each measurement is {s.settings.count} downloads over one reused handle/client; "
             f"{s.rounds_note(res)}. MB/s = 10^6 bytes/s, median of the rounds. Client CPU = the client process's "
             "user + system CPU seconds per 10^9 bytes, median of the rounds; it varies far less than MB/s when other "
             "work shares the machine (±10 % against ±40 % in trial runs). CPU ratio = the baseline's CPU per byte "
             "over the contestant's (≥ 1: no more CPU per byte than raw libcurl). " + start +
             "Later downloads of a measurement overwrite the one before (bench/README.md).", "",
             "**Ratios are the figure; absolute MB/s on this shared 2-core machine are noise.**", ""]
    rows = []
    for r in RATIOS:
        if r.num not in mbps or r.den not in mbps:
            continue
        ratio, same = med[r.num] / med[r.den], stats.same_round(mbps[r.num], mbps[r.den])
        verdict = ("met" if stats.met(r.target, ratio) else "**missed**") if r.target else "context"
        rows.append((f"{r.num} / {r.den}", f"{ratio:.3f}", stats.summary(same, ".3f"),
                     f"{cpu_med[r.den] / cpu_med[r.num]:.3f}", r.target or "–", verdict))
    lines += writer.table(["Ratio", "Throughput ratio (of medians)", "Per-round: median (min–max)", "CPU ratio", "Target", ""],
                          rows, "lrrrrl") + [""]
    rounds = list(range(1, res.rounds + 1))
    lines += writer.table(["Contestant", "", "Median MB/s", *(f"R{r}" for r in rounds), "Client CPU s/GB"],
                          [(c.name, c.settings, f"{med[c.name]:.0f}", *writer.round_cells(mbps[c.name], rounds, ".0f"),
                            f"{cpu_med[c.name]:.3f}") for c in active if c.name in mbps], "llr" + "r" * len(rounds) + "r")
    return lines
