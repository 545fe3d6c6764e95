"""Request rates and memory per transfer (issue 6): small GETs of a 1 KiB file from a local
nginx, sequential and concurrent, from C (bench/requests.c: raw libcurl easy/multi against
hc_client_send/hc_batch; curl --parallel) and from Python (bench/request_rates.py: hc.map, httpx,
requests + threads, pycurl, urllib3...); then paired runs (hc and its baseline alternating in one
process: the targets' verdicts), memory with many slow transfers in flight, and callgrind
instructions per request (bench/requests_profile.py). The section is written by
suites/_requests_report.py.

    bash bench/requests.sh [--rounds 3] [--only NAME@N,...] [--no-write]

Knobs (environment): BENCH_REQUESTS (10000), BENCH_CONCURRENCY ("1 16 64"), BENCH_MIN_SECONDS
(1.0), BENCH_SEQ_SECONDS (1.5), BENCH_MAX_SECONDS (4), BENCH_MEM_INFLIGHT (1000), BENCH_MEM (1),
BENCH_PROFILE (1), BENCH_PROFILE_MODES, BENCH_BUDGET (360 s of rounds), BENCH_DEADLINE (720 s in
all), BENCH_PAIR_ROUNDS (100), BENCH_PAIR_SECONDS (0.05), BENCH_TIMEOUT (90).
"""

from __future__ import annotations

import math
import os
import re
import resource
import subprocess
import time

from harness import Contestant, Failed, Runner, Session, library, log, parse
from suites import _requests_report as requests_report

BODY, SLOW_BODY = 1024, 20480
PROFILE_MODES = "raw-seq hc-seq raw-multi@16 hc-batch@16 py:pycurl py:hc-seq py:hc-get py:hc-floor"
CONC = [("raw-multi", "c-conc", "c"), ("hc-batch", "c-conc", "c"), ("curl-parallel", "c-conc", "py"),
        ("hc-map", "py-conc", "py"), ("httpx-async", "py-conc", "py"), ("requests-threads", "py-conc", "py")]
SEQ = [("raw-seq", "c-seq", "c"), ("hc-seq", "c-seq", "c"), ("hc-py-seq", "py-seq", "py:hc-seq"),
       ("pycurl", "py-seq", "py"), ("urllib3", "py-seq", "py"), ("httpx", "py-seq", "py"), ("requests", "py-seq", "py")]


def knob(name: str, default: str) -> str:
    return os.environ.get("BENCH_" + name) or default


def parse_rate(line: str) -> dict:
    """"<mode> <count> <seconds> <req/s> cpu=<c> [hwm_kib=<k>]"."""
    f = line.split()
    if len(f) < 5 or not f[4].startswith("cpu="):
        raise Failed(f"unexpected output: {line!r}")
    return {"count": int(f[1]), "seconds": float(f[2]), "rate": float(f[3]), "cpu": float(f[4][4:]),
            "cpu_us": float(f[4][4:]) / int(f[1]) * 1e6}


class RateRunner(Runner):
    """A measurement shorter than min_seconds is done again with more requests (and the
    contestant keeps the larger count)."""
    min_seconds: float = 1.0

    def measure(self, c: Contestant, count: int) -> dict:
        m = super().measure(c, count)
        if c.count and m["seconds"] < self.min_seconds:
            more = max(c.count * 2, math.ceil(1.5 * self.min_seconds * m["rate"] / 500) * 500)
            log(f"{c.name} took {m['seconds']} s with {c.count} requests: again with {more}")
            c.count = more
            m = super().measure(c, more)
        return m


def contestants(s: Session, prog: str, url: str, concs: list[int]) -> list[Contestant]:
    rates = [s.settings.python, os.path.join(s.settings.here, "request_rates.py")]
    out = []
    for n in concs:
        for name, group, kind in CONC:
            cmd = [prog, name] if kind == "c" else [*rates, name]
            out.append(Contestant(f"{name}@{n}", name, command=[*cmd, url, "{count}", str(n), str(BODY)],
                                  tags={"group": group, "conc": n}))
    for name, group, kind in SEQ:
        cmd = [prog, name] if kind == "c" else [*rates, kind[3:] if kind.startswith("py:") else name]
        out.append(Contestant(f"{name}@1", name, command=[*cmd, url, "{count}", "1", str(BODY)], tags={"group": group, "conc": 1}))
    return out


def calibrate(active: list[Contestant], warm: dict, requests: int, min_s: float, seq_s: float, max_s: float) -> list[str]:
    """Per contestant, requests per measurement: concurrent ones at least `requests` and enough for
    min_s at the fastest of their group and level (context ones capped at max_s); sequential
    ones about seq_s. Returns the notes on the reduced ones."""
    reduced = []
    for c in active:
        own = warm[c.name]["rate"]
        if c.tags["group"].endswith("-conc"):
            fastest = max(warm[o.name]["rate"] for o in active if o.tags["group"] == c.tags["group"] and o.tags["conc"] == c.tags["conc"])
            n = max(requests, math.ceil(1.3 * min_s * fastest / 1000) * 1000)
            if c.settings in ("httpx-async", "requests-threads") and n / own > max_s:
                n = max(1000, math.ceil(max_s * own / 500) * 500)
            if n < requests:
                reduced.append(f"{c.name}: {n}")
        else:
            n = max(1000, math.ceil(seq_s * own / 500) * 500)
        c.count = n
    return reduced


PAIR_RE = re.compile(r"rounds=(\d+) block=(\d+) raw=([\d.]+) hc=([\d.]+) ratio=([\d.]+) \[([\d.]+)-([\d.]+)\] "
                     r"cpu_ratio=([\d.]+) \[([\d.]+)-([\d.]+)\]")
PAIR_KEYS = ["rounds", "block", "base_rate", "hc_rate", "ratio", "ratio_min", "ratio_max", "cpu_ratio", "cpu_min", "cpu_max"]


def paired(s: Session, prog: str, url: str, warm: dict, concs: list[int], rounds: int, seconds: float) -> list[dict]:
    """hc and its baseline alternating in one process, block by block."""
    py = [s.settings.python, os.path.join(s.settings.here, "request_rates.py")]
    runs = [("hc-seq/raw-seq", 1, "raw-seq@1", [prog, "pair-seq"])]
    runs += [("hc-batch/raw-multi", n, f"raw-multi@{n}", [prog, "pair-batch"]) for n in concs]
    runs += [("hc-py-seq/pycurl", 1, "pycurl@1", [*py, "pair-seq"]), ("hc-py-floor/pycurl", 1, "pycurl@1", [*py, "pair-floor"])]
    out = []
    for name, conc, base, cmd in runs:
        if base not in warm:
            continue
        block = max(300, math.ceil(seconds * warm[base]["rate"] / 100) * 100)
        log(f"paired: {name} at concurrency {conc}, {rounds} rounds of {block} requests each")
        p = subprocess.run([*s.pinning.client, *cmd, url, str(block), str(rounds), str(conc), str(BODY)], capture_output=True,
                           text=True, timeout=s.settings.timeout, env={**os.environ, "PYTHONPATH": s.pythonpath})
        m = PAIR_RE.search(p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "")
        if p.returncode or not m:
            raise SystemExit(f"paired run {name}@{conc} failed: {p.stderr[-400:]}")
        out.append({"comparison": name, "concurrency": conc, **dict(zip(PAIR_KEYS, m.groups()))})
        log(f"  {p.stdout.strip().splitlines()[-1]}")
    return out


def memory(s: Session, prog: str, url: str, slow_url: str, inflight: int) -> tuple[list[dict], list[dict], bool]:
    """Peak RSS with `inflight` and 1 slow transfers at once (raw multi and hc_batch, the four
    runs side by side), then after 10 and 2,000 quick transfers one at a time."""
    log(f"memory: {inflight} and 1 slow transfers in flight, raw-multi-rss and hc-batch-rss (~{SLOW_BODY // 1024} s)")
    runs = {(mode, n): subprocess.Popen([*s.pinning.client, prog, mode, slow_url, str(n), str(n), str(SLOW_BODY)],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for mode in ("raw-multi-rss", "hc-batch-rss") for n in (inflight, 1)}
    slow, ok = [], True
    for (mode, n), p in runs.items():
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        f = out.split()
        if p.returncode or len(f) < 6:
            log(f"memory run {mode} x{n} failed: {err[:400]}")
            ok = False
            continue
        slow.append({"mode": mode, "inflight": n, "seconds": f[2], "hwm_kib": f[5].removeprefix("hwm_kib=")})
        log(f"  {mode} x{n}: {f[2]} s, peak RSS {slow[-1]['hwm_kib']} KiB")
    retained = []
    for mode in ("raw-multi", "hc-batch"):
        for done in (10, 2000):
            p = subprocess.run([*s.pinning.client, prog, mode, url, str(done), "1", str(BODY)], capture_output=True, text=True, timeout=60)
            f = p.stdout.split()
            if p.returncode or len(f) < 6:
                log(f"memory run {mode} x{done} failed: {p.stderr[:400]}")
                ok = False
                continue
            retained.append({"mode": mode, "completed": done, "hwm_kib": f[5].removeprefix("hwm_kib=")})
    return slow, retained, ok


def profile(s: Session, prog: str, url: str, modes: list[str], seconds: float, notes: list[str]) -> list[dict]:
    """Callgrind instructions per request (requests_profile.py), within `seconds`."""
    import shutil
    if seconds < 60:
        notes.append("no callgrind profile: less than 60 s left before the deadline (BENCH_DEADLINE)")
        return []
    if not (shutil.which("valgrind") and shutil.which("callgrind_annotate")):
        notes.append("no callgrind profile: valgrind is not installed")
        return []
    log(f"callgrind: instructions per request for {' '.join(modes)} (at most {seconds:.0f} s)")
    out = s.path("profile.tsv")
    try:
        subprocess.run([*s.pinning.client, s.settings.python, os.path.join(s.settings.here, "requests_profile.py"), prog, url,
                        *modes, "--out", out], capture_output=True, text=True, timeout=seconds, check=True,
                       env={**os.environ, "PYTHONPATH": s.pythonpath})
    except (subprocess.TimeoutExpired, subprocess.CalledProcessError):
        notes.append("the callgrind part failed or was cut short by the deadline; rows shown are the modes it finished")
    import csv
    if not os.path.exists(out):
        return []
    with open(out) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def raise_nofile(needed: int) -> bool:
    """Raises the open-file limit to `needed` (children inherit it); False if it cannot."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return True
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard) if hard != resource.RLIM_INFINITY else needed, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= needed


def main(argv: list[str]) -> int:
    started = time.monotonic()
    settings = parse(argv, rounds=3)
    if not os.environ.get("BENCH_TIMEOUT"):
        settings.timeout = 90
    concs = [int(n) for n in knob("CONCURRENCY", "1 16 64").split()]
    inflight = int(knob("MEM_INFLIGHT", "1000"))
    want_mem = knob("MEM", "1") != "0"
    notes: list[str] = []
    if want_mem and not raise_nofile(inflight * 2 + 256):
        log(f"open-file limit too low for {inflight} transfers: memory measurement skipped")
        want_mem = False
    with Session("requests", "bash bench/requests.sh", settings, "nginx", "client") as s:
        www = s.path("www")
        os.makedirs(os.path.join(www, "slow"))
        for path, size in (("1k.bin", BODY), ("slow/20k.bin", SLOW_BODY)):
            with open(os.path.join(www, path), "wb") as f:
                f.write(os.urandom(size))
            os.chmod(os.path.join(www, path), 0o644)
        os.chmod(os.path.join(www, "slow"), 0o755)
        ngx = s.nginx(main=f"worker_rlimit_nofile {inflight * 4 + 1024};", connections=inflight * 2 + 512,
                      keepalive_requests=100000000, keepalive_timeout="300s", listen="backlog=4096",
                      server="location /slow/ { limit_rate 1k; }")
        url, slow_url = f"http://127.0.0.1:{ngx['port']}/1k.bin", f"http://127.0.0.1:{ngx['port']}/slow/20k.bin"
        snap = s.snapshot()
        if snap["note"]:
            notes.append(snap["note"])
        prog = s.compile("requests.c", "-lcurl")
        s.add_pythonpath(settings.pydeps)
        for module, args in (("pycurl", ("--no-binary", "pycurl", "--no-deps", "pycurl")), ("httpx", ("httpx",))):
            if library.pylibs([module], s.pythonpath).endswith("(not installed)"):
                log(f"{module} missing: installing it into {settings.pydeps}")
                if not library.pip_into_cache(settings.pydeps, *args):
                    notes.append(f"{module} not measured: pip install {module} failed")
        runner = s.runner(parse=parse_rate, cls=RateRunner)
        runner.min_seconds = float(knob("MIN_SECONDS", "1.0"))
        cs = contestants(s, prog, url, concs)
        active = runner.warm_up(cs, settings.only, count=300)
        notes += [f"{c.settings} not measured: not installed" for c in cs if c not in active and (not settings.only or c.name in settings.only)]
        reduced = calibrate(active, runner.warm, int(knob("REQUESTS", "10000")), runner.min_seconds,
                            float(knob("SEQ_SECONDS", "1.5")), float(knob("MAX_SECONDS", "4")))
        if reduced:
            notes.append(f"fewer than {knob('REQUESTS', '10000')} requests per measurement for the context contestants that "
                         f"would have taken more than {knob('MAX_SECONDS', '4')} s each (BENCH_MAX_SECONDS), to keep the run "
                         "bounded: " + ", ".join(reduced))
        budget = float(knob("BUDGET", "360"))
        res = runner.rounds(active, settings.rounds, 1, budget)
        if res.rounds < settings.rounds:
            notes.append(f"stopped after {res.rounds} of {settings.rounds} rounds: another round would have passed the "
                         f"{budget:.0f} s budget (BENCH_BUDGET)")
        pair_start = time.monotonic()
        pairs = paired(s, prog, url, runner.warm, concs, int(knob("PAIR_ROUNDS", "100")), float(knob("PAIR_SECONDS", "0.05"))) \
            if int(knob("PAIR_ROUNDS", "100")) > 0 else []
        pair_elapsed = time.monotonic() - pair_start
        slow, retained = [], []
        if want_mem:
            slow, retained, ok = memory(s, prog, url, slow_url, inflight)
            if not ok:
                notes.append("a memory run failed; see the log")
        else:
            notes.append("memory not measured (BENCH_MEM=0 or open-file limit too low)")
        prof = []
        if knob("PROFILE", "1") != "0":
            left = float(knob("DEADLINE", "720")) - (time.monotonic() - started)
            prof = profile(s, prog, url, knob("PROFILE_MODES", PROFILE_MODES).split(), left, notes)
        facts = {"nginx": ngx["version"], "notes": notes, "inflight": inflight, "pairs": pairs, "pair_elapsed": pair_elapsed,
                 "pylibs": library.pylibs(["pycurl", "urllib3", "httpx", "requests"], s.pythonpath),
                 "total": time.monotonic() - started, "memory": slow, "retained": retained, "profile": prof,
                 "seq_seconds": knob("SEQ_SECONDS", "1.5"), "pair_seconds": knob("PAIR_SECONDS", "0.05")}
        return s.publish(requests_report.section(s, res, facts))
