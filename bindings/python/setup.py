"""Builds a wheel that carries libhttpcontent.so.0 inside the package, so `import httpcontent`
works from any directory with no environment variable. The library comes from the source
checkout's build folder, built with CMake first if it is not there yet."""

import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LIBRARY = REPO / "build" / "libhttpcontent.so.0"


def built_library() -> Path:
    if not LIBRARY.exists():
        build = REPO / "build"
        subprocess.check_call(["cmake", "-S", str(REPO), "-B", str(build), "-G", "Ninja",
                               "-DCMAKE_BUILD_TYPE=Release"])
        subprocess.check_call(["cmake", "--build", str(build), "--target", "httpcontent_swift"])
    return LIBRARY


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "httpcontent" / LIBRARY.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built_library(), target)


class BinaryDistribution(Distribution):
    """The wheel holds a native library: tag it for this platform, not as pure Python."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithLibrary}, distclass=BinaryDistribution)
