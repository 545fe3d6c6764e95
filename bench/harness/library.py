"""What is measured: a snapshot of the release library, its header and the Python binding taken
at the start (others rebuild in the working tree meanwhile), C contestants compiled against it,
and the Python packages a contestant needs (into a cache folder, never site-packages).
"""

from __future__ import annotations

import datetime
import glob
import os
import re
import shutil
import subprocess
import sys

from .rounds import log

CONFLICT = re.compile(r"^(<<<<<<<|>>>>>>>) ", re.M)


def need_library(root: str, libdir: str) -> str:
    """libdir/libhttpcontent.so.0, built (CMake + Ninja, Release, in build/) if missing."""
    lib = os.path.join(libdir, "libhttpcontent.so.0")
    if not os.path.exists(lib):
        log("building libhttpcontent.so.0")
        subprocess.run(["cmake", "-S", ".", "-B", "build", "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"],
                       cwd=root, check=True, capture_output=True)
        subprocess.run(["cmake", "--build", "build"], cwd=root, check=True, capture_output=True)
    if not os.path.exists(lib):
        raise SystemExit(f"no {lib}")
    return lib


def _has_conflicts(paths: list[str]) -> bool:
    for p in paths:
        with open(p, errors="replace") as f:
            if CONFLICT.search(f.read()):
                return True
    return False


def snapshot(root: str, libdir: str, tmp: str) -> dict[str, str]:
    """Copies the library, header and binding into tmp/{lib,include,py}; takes header and
    binding from HEAD if the tree is mid-merge. Returns {"lib", "include", "py", "id", "note"}
    and sets HTTPCONTENT_LIBRARY for this process and its children."""
    lib = need_library(root, libdir)
    out = {k: os.path.join(tmp, k) for k in ("lib", "include", "py")}
    for d in out.values():
        os.makedirs(d, exist_ok=True)
    shutil.copy2(lib, out["lib"])
    shutil.copytree(os.path.join(root, "include"), out["include"], dirs_exist_ok=True)
    shutil.copytree(os.path.join(root, "bindings/python/httpcontent"), os.path.join(out["py"], "httpcontent"))
    note = ""
    files = glob.glob(os.path.join(out["include"], "**/*.h"), recursive=True) + \
        glob.glob(os.path.join(out["py"], "**/*.py"), recursive=True)
    if _has_conflicts(files):
        log("conflict markers in the working tree's header or binding: taking them from HEAD")
        shutil.rmtree(out["include"])
        shutil.rmtree(os.path.join(out["py"], "httpcontent"))
        for tree, dest, strip in (("include", tmp, 0), ("bindings/python/httpcontent", out["py"], 2)):
            arch = subprocess.run(["git", "-C", root, "archive", "HEAD", tree], check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", dest, f"--strip-components={strip}"], input=arch, check=True)
        note = "the working tree was mid-merge (conflict markers), so the header and the Python binding were taken from HEAD"
    head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or "?"
    if subprocess.run(["git", "-C", root, "diff", "--quiet", "HEAD", "--", "Sources", "include", "bindings"]).returncode:
        head += " + uncommitted changes"
    built = datetime.datetime.fromtimestamp(os.path.getmtime(lib)).strftime("%Y-%m-%d %H:%M:%S")
    out["id"] = f"libhttpcontent.so.0 built {built}, tree at {head}"
    out["note"] = note
    out["so"] = os.path.join(out["lib"], "libhttpcontent.so.0")
    os.environ["HTTPCONTENT_LIBRARY"] = out["so"]
    return out


def compile_c(snap: dict[str, str], source: str, output: str, *libs: str) -> str:
    """cc -O2 source against the snapshot's header and library (rpath to it); returns output."""
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-I" + snap["include"], "-o", output, source,
                    snap["so"], "-Wl,-rpath," + snap["lib"], *libs], check=True)
    return output


def pip_into_cache(pydeps: str, *args: str) -> bool:
    """pip install args into pydeps (at most 300 s); logs pip's last lines on failure."""
    p = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "--target", pydeps, *args], capture_output=True, text=True, timeout=300)
    if p.returncode:
        log(f"pip install {' '.join(args)} failed: {' '.join(p.stderr.splitlines()[-3:])}")
    return p.returncode == 0


def pylibs(modules: list[str], pythonpath: str = "") -> str:
    """"m1 1.2, m2 (not installed), ..." as importable with pythonpath."""
    code = """
import sys
out = []
for m in sys.argv[1:]:
    try:
        mod = __import__(m)
        v = getattr(mod, "__version__", None) or mod.version.split()[0].split("/")[1]
        out.append(m + " " + v)
    except Exception:
        out.append(m + " (not installed)")
print(", ".join(out))"""
    env = {**os.environ, "PYTHONPATH": pythonpath}
    return subprocess.run([sys.executable, "-c", code, *modules], capture_output=True, text=True,
                          env=env).stdout.strip()
