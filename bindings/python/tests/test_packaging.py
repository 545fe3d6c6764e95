"""`pip install ./bindings/python` gives an `import httpcontent` that works from any directory,
with no environment variable, using the library carried inside the package."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not (PACKAGE.parents[1] / "build" / "libhttpcontent.so.0").exists(),
                    reason="the library is not built yet (cmake --build build)")
def test_installed_package_imports_from_anywhere_without_environment(tmp_path, base_url):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(PACKAGE)],
                   check=True, capture_output=True, timeout=300)
    assert (target / "httpcontent" / "libhttpcontent.so.0").exists()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(target)}
    code = ("import httpcontent as hc, sys; c = hc.Client(); "
            "r = c.get(sys.argv[1]); print(hc._ffi.lib()._name, len(r.content))")
    out = subprocess.run([sys.executable, "-c", code, f"{base_url}/bytes/123"], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True)
    loaded, size = out.stdout.split()
    assert loaded.startswith(str(target)) and size == "123"
