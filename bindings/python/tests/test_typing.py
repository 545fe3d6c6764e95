"""Typed Python: the package and a typed example program are clean under `mypy --strict` and
pyright's strict mode (basedpyright, which bundles its runtime, or pyright), `py.typed` ships,
and the types mean something: `with hc.Client() as c` gives a Client, not Any, and a misspelt
request option is an error. Skipped, with the reason, where a checker is not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import httpcontent

PACKAGE = Path(httpcontent.__file__).resolve().parent
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "python" / "typed_example.py"


# Modules landed untyped, checked by neither checker until they are typed (their errors would
# otherwise fail these tests for everyone). Keep this list empty: type a new module instead.
NOT_YET_TYPED: list[str] = []
# Clean under mypy --strict but not yet under pyright's strict mode (unknown types).
NOT_YET_PYRIGHT_CLEAN = NOT_YET_TYPED


def _have_mypy() -> bool:
    return subprocess.run([sys.executable, "-c", "import mypy"], capture_output=True).returncode == 0


needs_mypy = pytest.mark.skipif(not _have_mypy(), reason="mypy is not installed (pip install mypy)")
needs_example = pytest.mark.skipif(not EXAMPLE.exists(), reason=f"{EXAMPLE} is not here (not a checkout)")


def _mypy(tmp_path: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    # Run from an empty folder, the package given by its path: the files checked are the ones
    # imported (a checkout's, or an installed wheel's), whatever the working directory.
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n" + "".join(f"[mypy-httpcontent.{m}]\nignore_errors = True\n"
                                             for m in NOT_YET_TYPED))
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "--strict",
                           "--no-incremental",
                           "--python-version", f"{sys.version_info.major}.{sys.version_info.minor}",
                           str(PACKAGE), *paths], capture_output=True, text=True, cwd=tmp_path,
                          timeout=600)


def test_py_typed_ships_with_the_package() -> None:
    assert (PACKAGE / "py.typed").is_file()


@needs_mypy
def test_the_package_is_clean_under_mypy_strict(tmp_path: Path) -> None:
    out = _mypy(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success: no issues found" in out.stdout


@needs_mypy
@needs_example
def test_the_typed_example_is_clean_under_mypy_strict(tmp_path: Path) -> None:
    out = _mypy(tmp_path, str(EXAMPLE))
    assert out.returncode == 0, out.stdout + out.stderr


@needs_mypy
def test_the_types_are_precise_enough_to_catch_mistakes(tmp_path: Path) -> None:
    program = tmp_path / "program.py"
    program.write_text(
        "import httpcontent as hc\n"
        "with hc.Client() as c:\n"
        "    reveal_type(c)\n"
        "    r = c.get('http://127.0.0.1:1/', handler=hc.Text())\n"
        "    reveal_type(r)\n"
        "    reveal_type(r.metrics)\n"
        "    c.get('http://127.0.0.1:1/', timeuot=1)\n"
        "    c.post('http://127.0.0.1:1/', follow_redirects='yes')\n"
        "with hc.CancelToken() as t:\n"
        "    reveal_type(t)\n")
    out = _mypy(tmp_path, str(program)).stdout
    assert 'Revealed type is "httpcontent._client.Client"' in out
    assert 'Revealed type is "httpcontent.models.Response"' in out
    assert 'Revealed type is "TypedDict(httpcontent._types.Metrics' in out
    assert 'Revealed type is "httpcontent.models.CancelToken"' in out
    assert 'Unexpected keyword argument "timeuot"' in out
    assert '"follow_redirects"' in out and "incompatible type" in out


def _pyright() -> list[str] | None:
    for name in ("basedpyright", "pyright"):
        path = shutil.which(name)
        if path:
            return [path]
    return None


@pytest.mark.skipif(_pyright() is None,
                    reason="neither basedpyright nor pyright is installed (pip install basedpyright)")
@pytest.mark.parametrize("what", ["package", "example"])
def test_clean_under_pyright_strict(tmp_path: Path, what: str) -> None:
    config: dict[str, object] = {"typeCheckingMode": "strict", "extraPaths": [str(PACKAGE.parent)],
                                 "pythonVersion": f"{sys.version_info.major}.{sys.version_info.minor}"}
    if what == "package":
        # Strict, but for one rule: the package's modules share private modules (_ffi, _lib)
        # and the handlers' internal protocol, private to users, not to each other.
        config.update(include=[str(PACKAGE)], reportPrivateUsage=False,
                      ignore=[str(PACKAGE / f"{m}.py") for m in NOT_YET_PYRIGHT_CLEAN])
    else:
        if not EXAMPLE.exists():
            pytest.skip(f"{EXAMPLE} is not here (not a checkout)")
        config.update(include=[str(EXAMPLE)])
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    tool = _pyright()
    assert tool is not None
    out = subprocess.run([*tool, "-p", str(tmp_path / "pyrightconfig.json")], capture_output=True,
                         text=True, cwd=tmp_path, timeout=600,
                         env={**os.environ, "PYRIGHT_PYTHON_FORCE_VERSION": ""})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 errors" in out.stdout


@needs_example
def test_the_typed_example_runs(base_url: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    out = subprocess.run([sys.executable, str(EXAMPLE), base_url], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["200 1000 1000", "[1, 2]", "200 application/json True",
                                       "lines: 5", "saved 5000 bytes", "[1, 2, 3]", "refused: 404 5"]
