"""The binding's numbers come from the C headers: `_constants.py` is what scripts/gen_constants.py
writes from include/**/*.h (regenerated here; a header changed without regenerating fails),
the generator reads every header of the tree, and the modules use its names, not numbers."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import httpcontent
from httpcontent import _constants

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "gen_constants.py"
needs_checkout = pytest.mark.skipif(not SCRIPT.exists(), reason="not a checkout (no scripts/)")


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_constants", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_checkout
def test_the_committed_constants_are_what_the_headers_generate() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    # The package under test carries that module (a checkout's, or an installed copy of it).
    committed = ROOT / "bindings" / "python" / "httpcontent" / "_constants.py"
    assert Path(_constants.__file__).read_text() == committed.read_text()


@needs_checkout
def test_the_generator_reads_defines_and_enums_of_every_header(tmp_path: Path) -> None:
    gen = _generator()
    nested = tmp_path / "include" / "httpcontent"
    nested.mkdir(parents=True)
    (nested / "x.h").write_text(
        "#define HC_X_FLAG 8u /**< doc */\n#define HC_X_NONE (-1L)\n#define HC_X_NAME \"x\"\n"
        "typedef enum hc_x {\n    HC_X_A = 2, /**< a, b */\n    HC_X_B,\n    HC_X_C = HC_X_A\n} hc_x;\n")
    gen.ROOT = tmp_path
    found = {name: value for name, value, _ in gen.constants(sorted((tmp_path / "include").glob("**/*.h")))}
    assert found == {"HC_X_FLAG": 8, "HC_X_NONE": -1, "HC_X_NAME": "x", "HC_X_A": 2, "HC_X_B": 3, "HC_X_C": 2}


def test_the_constants_agree_with_the_library() -> None:
    lib = httpcontent._ffi.lib()
    # The library names each code (hc_code_name): the generated numbers name the same ones.
    names = {"HC_OK": b"ok", "HC_EINVALID_ARG": b"invalid argument", "HC_ETIMEOUT": b"timeout",
             "HC_EUNACCEPTABLE_STATUS": b"unacceptable status", "HC_EIO": b"I/O",
             "HC_ECALLBACK": b"callback", "HC_ECHECKSUM": b"checksum mismatch"}
    for name, text in names.items():
        assert lib.hc_code_name(getattr(_constants, name)) == text, name
    assert lib.hc_version() == _constants.HC_VERSION_STRING.encode()
    assert httpcontent.CallbackError.code == _constants.HC_ECALLBACK
    assert httpcontent.UnacceptableStatus.code == _constants.HC_EUNACCEPTABLE_STATUS
