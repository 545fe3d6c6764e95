"""upload_bench.py — the streamed upload of upload_bench.c, from Python through the httpcontent
binding.

    python3 upload_bench.py MODE URL FILE WARMUP_FILE

MODE:
  hc-file      client.post(url, data=open(FILE, "rb")): a real file, which the library reads
               itself with pread (hc_request_set_fd_body), never through Python
  hc-iter-64k  data= a generator yielding the file in 64 KiB bytes objects: the library calls
               back into Python for every chunk (sent chunked: no length is known)
  hc-iter-1m   the same with 1 MiB chunks (libcurl asks for 64 KiB at a time, so each chunk
               is handed over in several pieces)

As in upload_bench.c: WARMUP_FILE is uploaded first (untimed); then the peak-RSS mark is reset
(/proc/self/clear_refs), FILE is uploaded, and VmHWM - VmRSS(before) is the peak growth. The
server's answer (the number of bytes it received) must equal FILE's size. Prints one line:
  "UPLOAD mbps=<MB/s> bytes=<n> seconds=<s> cpu=<user+sys s> rss_base_kib=<k> hwm_growth_kib=<k> hwm_reset=<1|0>"
"""

from __future__ import annotations

import os
import re
import sys
import time

MODES = {"hc-file": 0, "hc-iter-64k": 64 * 1024, "hc-iter-1m": 1024 * 1024}


def status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        m = re.search(rf"^{field}:\s+(\d+)", f.read(), re.M)
    return int(m.group(1)) if m else -1


def reset_hwm() -> int:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return 1
    except OSError:
        return 0


def chunks(path: str, size: int):
    with open(path, "rb") as f:
        while True:
            piece = f.read(size)
            if not piece:
                return
            yield piece


def main() -> int:
    if len(sys.argv) != 5 or sys.argv[1] not in MODES:
        print(__doc__, file=sys.stderr)
        return 2
    mode, url, path, warm = sys.argv[1:]
    chunk = MODES[mode]
    import httpcontent as hc

    client = hc.Client()

    def upload(p: str) -> int:
        if chunk:
            r = client.post(url, data=chunks(p, chunk))
        else:
            with open(p, "rb") as f:
                r = client.post(url, data=f)
        if r.status != 200:
            raise SystemExit(f"status {r.status}")
        return int(r.content)

    warm_size = os.path.getsize(warm)
    if upload(warm) != warm_size:
        print("warm-up: byte count mismatch", file=sys.stderr)
        return 1
    size = os.path.getsize(path)
    reset = reset_hwm()
    base = status_kib("VmRSS")
    cpu0, t0 = time.process_time(), time.perf_counter()
    got = upload(path)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    hwm = status_kib("VmHWM")
    if got != size:
        print(f"server received {got} of {size} bytes", file=sys.stderr)
        return 1
    print(f"UPLOAD mbps={size / elapsed / 1e6:.1f} bytes={size} seconds={elapsed:.4f} cpu={cpu:.4f} "
          f"rss_base_kib={base} hwm_growth_kib={hwm - base} hwm_reset={reset}")
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
