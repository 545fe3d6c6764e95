"""Every C function the binding calls is declared, and declared as the header says.

ctypes calls an undeclared function as `int f(int...)`: a returned pointer is cut to 32 bits and
the next call that takes it crashes (an undeclared hc_error_free did). So the package's sources
are scanned for library functions read as attributes (`lib.hc_x`, `lib().hc_x`), each must be in
`_lib._DECLARATIONS`, and each declaration's result and arguments must match the prototype in
include/httpcontent/*.h or include/httpcontent_binding.h (count, and pointer / integer width /
float per position; a CFUNCTYPE against its callback typedef), parsed here simply: every
prototype is one `HC_EXTERN ... hc_x(...);`. The package's ctypes Structures are checked
against the header's structs the same way, field by field."""

from __future__ import annotations

import ctypes
import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest

import httpcontent
from httpcontent import _lib

PACKAGE = Path(httpcontent.__file__).resolve().parent
INCLUDE = Path(__file__).resolve().parents[3] / "include"
# The umbrella holds every family header's text (scripts/gen_header.py); with the binding header,
# every function the binding calls is declared in these two.
HEADERS = [INCLUDE / "httpcontent.h", INCLUDE / "httpcontent_binding.h"]

# Functions called on purpose without a declaration (a reason each).
UNDECLARED_ON_PURPOSE = {
    # _lib.client_fetch: restype set, no argtypes so ctypes converts nothing per call; callers
    # pass C values (as_arg). Its arity is still checked below against the header.
    "hc_client_fetch": 7,
}

_SCALARS: dict[str, Any] = {
    "int": ctypes.c_int, "unsigned": ctypes.c_uint, "unsigned int": ctypes.c_uint,
    "long": ctypes.c_long, "size_t": ctypes.c_size_t, "double": ctypes.c_double,
    "float": ctypes.c_float, "int64_t": ctypes.c_int64, "uint64_t": ctypes.c_uint64,
    "int32_t": ctypes.c_int32, "uint32_t": ctypes.c_uint32, "uint16_t": ctypes.c_uint16,
    "uint8_t": ctypes.c_uint8, "bool": ctypes.c_bool, "_Bool": ctypes.c_bool,
}


def _load_all_modules() -> None:
    """Imports every module: feature modules add their declarations when imported."""
    for info in pkgutil.iter_modules(httpcontent.__path__):
        importlib.import_module(f"httpcontent.{info.name}")


def _prototypes() -> dict[str, tuple[str, list[str]]]:
    """name -> (result type, [parameter types]) for every HC_EXTERN function of the headers."""
    found: dict[str, tuple[str, list[str]]] = {}
    for header in HEADERS:
        if not header.exists():
            continue
        text = re.sub(r"/\*.*?\*/", " ", header.read_text(), flags=re.S)
        for m in re.finditer(r"HC_EXTERN\s+([^;(]*?)\b(hc_\w+)\s*\(([^;]*?)\)\s*;", text):
            result, name, params = m.group(1), m.group(2), m.group(3)
            args = [] if params.strip() in ("", "void") else [p.strip() for p in params.split(",")]
            found[name] = (" ".join(result.split()), args)
    return found


def _enums_and_callbacks() -> tuple[set[str], dict[str, tuple[str, list[str]]]]:
    """The enum type names, and each callback typedef's (result, [parameters])."""
    text = "\n".join(re.sub(r"/\*.*?\*/", " ", h.read_text(), flags=re.S) for h in HEADERS if h.exists())
    enums = set(re.findall(r"typedef\s+enum\s+\w*\s*\{[^}]*\}\s*(\w+)\s*;", text))
    callbacks: dict[str, tuple[str, list[str]]] = {}
    for m in re.finditer(r"typedef\s+([^;{()]*?)\(\s*\*\s*(\w+)\s*\)\s*\(([^;]*?)\)\s*;", text):
        params = m.group(3).strip()
        callbacks[m.group(2)] = (" ".join(m.group(1).split()),
                                 [] if params in ("", "void") else [p.strip() for p in params.split(",")])
    return enums, callbacks


def _callback_problems(where: str, py: Any, c: str, enums: set[str],
                       callbacks: dict[str, tuple[str, list[str]]]) -> list[str]:
    """A CFUNCTYPE given for a callback parameter checked against the callback's typedef."""
    base = re.sub(r"\bconst\b", " ", c).split()
    name = next((w for w in base if w in callbacks), None)
    if name is None or not (isinstance(py, type) and issubclass(py, ctypes._CFuncPtr)):  # pyright: ignore
        return []
    c_result, c_args = callbacks[name]
    py_args = list(py._argtypes_)  # pyright: ignore
    if len(py_args) != len(c_args):
        return [f"{where}: callback {name} takes {len(c_args)} arguments, its CFUNCTYPE {len(py_args)}"]
    problems = []
    if _py_kind(py._restype_) != _c_kind(c_result, enums, callbacks):  # pyright: ignore
        problems.append(f"{where}: callback {name} returns {c_result!r}, its CFUNCTYPE {py._restype_!r}")  # pyright: ignore
    for i, (pa, ca) in enumerate(zip(py_args, c_args)):
        if _py_kind(pa) != _c_kind(ca, enums, callbacks):
            problems.append(f"{where}: callback {name} argument {i} is {ca!r}, its CFUNCTYPE {pa!r}")
    return problems


def _c_kind(ctype: str, enums: set[str], callbacks: Any) -> str:
    """'void', 'ptr', 'int<bytes>' or 'float<bytes>' for a C type (a parameter name may follow)."""
    words = re.sub(r"\bconst\b", " ", ctype).replace("*", " * ").split()
    if "*" in words:
        return "ptr"
    if words and words[-1] not in _SCALARS and words[-1] not in enums and words[-1] not in callbacks \
            and words[-1] not in ("void", "hc_code") and len(words) > 1:
        words = words[:-1]   # drop the parameter's name
    base = " ".join(words)
    if base == "void":
        return "void"
    if base in callbacks:
        return "ptr"
    if base in enums or base == "hc_code":
        return "int4"
    if base in _SCALARS:
        t = _SCALARS[base]
        return ("float" if t in (ctypes.c_double, ctypes.c_float) else "int") + str(ctypes.sizeof(t))
    raise AssertionError(f"unknown C type {ctype!r}: teach test_declarations its kind")


def _py_kind(t: Any) -> str:
    if t is None:
        return "void"
    if isinstance(t, type):
        if t in (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_wchar_p) or issubclass(
                t, (ctypes._Pointer, ctypes._CFuncPtr, ctypes.Array)):  # pyright: ignore
            return "ptr"
        if t in (ctypes.c_double, ctypes.c_float):
            return f"float{ctypes.sizeof(t)}"
        if issubclass(t, ctypes._SimpleCData):  # pyright: ignore
            return f"int{ctypes.sizeof(t)}"
    raise AssertionError(f"unknown ctypes type {t!r}")


def _called_names() -> dict[str, set[str]]:
    """hc_* names the package reads as attributes (calls through the CDLL), with their files."""
    used: dict[str, set[str]] = {}
    for source in PACKAGE.glob("*.py"):
        for m in re.finditer(r"\.(hc_\w+)\b", source.read_text()):
            used.setdefault(m.group(1), set()).add(source.name)
    return used


def test_the_scan_finds_calls_and_prototypes():
    # Guards against a scan that silently finds nothing (and so can never fail).
    used = _called_names()
    assert {"hc_error_free", "hc_batch_step", "hc_client_new"} <= set(used)
    protos = _prototypes()
    assert len(protos) > 200 and "hc_error_copy" in protos
    assert protos["hc_batch_step"][1][0].startswith("hc_batch")


def test_every_called_function_is_declared():
    _load_all_modules()
    declared = {name for name, _, _ in _lib._DECLARATIONS}
    missing = {name: sorted(files) for name, files in _called_names().items()
               if name not in declared and name not in UNDECLARED_ON_PURPOSE}
    assert not missing, f"called without restype/argtypes (ctypes would assume int): {missing}"


def test_every_declaration_matches_the_header():
    if not all(h.exists() for h in HEADERS[:1]):
        pytest.skip("include/httpcontent.h not found (not a source checkout)")
    _load_all_modules()
    protos = _prototypes()
    enums, callbacks = _enums_and_callbacks()
    problems: list[str] = []
    seen: dict[str, Any] = {}
    for name, restype, argtypes in _lib._DECLARATIONS:
        if name in seen and seen[name] != (restype, list(argtypes)):
            problems.append(f"{name}: declared twice, differently")
        seen[name] = (restype, list(argtypes))
        if name not in protos:
            problems.append(f"{name}: not in the headers")
            continue
        c_result, c_args = protos[name]
        if len(c_args) != len(argtypes):
            problems.append(f"{name}: {len(argtypes)} argtypes, the header has {len(c_args)}")
            continue
        if _py_kind(restype) != _c_kind(c_result, enums, callbacks):
            problems.append(f"{name}: restype {restype!r}, the header returns {c_result!r}")
        for i, (py, c) in enumerate(zip(argtypes, c_args)):
            if _py_kind(py) != _c_kind(c, enums, callbacks):
                problems.append(f"{name}: argument {i} is {py!r}, the header has {c!r}")
            problems += _callback_problems(f"{name} argument {i}", py, c, enums, callbacks)
    for name, arity in UNDECLARED_ON_PURPOSE.items():
        if len(protos[name][1]) != arity:
            problems.append(f"{name}: called with {arity} arguments, the header has {len(protos[name][1])}")
    assert not problems, "\n".join(problems)


def test_a_library_owned_pointer_survives_the_round_trip():
    # The failure the declarations prevent: a pointer above 4 GiB cut to an int. A copied error
    # is heap memory the caller owns; reading it back through a getter must work.
    lib = _lib.lib()
    assert lib.hc_request_new(None, None) is None   # fails: sets the thread's last error
    last = lib.hc_error_last()
    assert last
    copy = lib.hc_error_copy(last)
    try:
        assert lib.hc_error_code(copy) == lib.hc_error_code(last) != 0
        assert lib.hc_error_message(copy) == lib.hc_error_message(last)
    finally:
        lib.hc_error_free(copy)


def _structs() -> dict[str, list[str]]:
    """name -> [field declarations] for every `typedef struct hc_x { ... } hc_x;` of the headers."""
    text = "\n".join(re.sub(r"/\*.*?\*/", " ", h.read_text(), flags=re.S) for h in HEADERS if h.exists())
    return {m.group(1): [f.strip() for f in m.group(2).split(";") if f.strip()]
            for m in re.finditer(r"typedef\s+struct\s+(hc_\w+)\s*\{([^}]*)\}\s*\1\s*;", text)}


def _package_structures() -> list[tuple[str, Any]]:
    """(header name, class) of each ctypes.Structure of the package whose docstring names a
    header struct (`\"\"\"hc_x ...`)."""
    _load_all_modules()
    found: list[tuple[str, Any]] = []
    for info in pkgutil.iter_modules(httpcontent.__path__):
        module = importlib.import_module(f"httpcontent.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, ctypes.Structure) \
                    and value.__module__ == module.__name__:
                m = re.match(r"\s*(hc_\w+)", value.__doc__ or "")
                if m:
                    found.append((m.group(1), value))
    return found


def test_every_structure_matches_the_header():
    # A field missing, or of another width, shifts every field after it: C reads garbage or
    # calls a callback through the wrong slot.
    structs = _structs()
    enums, callbacks = _enums_and_callbacks()
    mine = _package_structures()
    assert {"hc_handler_vtable", "hc_fetch_result", "hc_xml_callbacks"} <= {n for n, _ in mine}
    problems: list[str] = []
    for name, cls in mine:
        if name not in structs:
            problems.append(f"{cls.__qualname__}: {name} is not a struct of the headers")
            continue
        fields = list(cls._fields_)
        c_fields = structs[name]
        if len(fields) != len(c_fields):
            problems.append(f"{cls.__qualname__}: {len(fields)} fields, {name} has {len(c_fields)}")
            continue
        for (field, py), c in zip(fields, c_fields):
            fn = re.match(r"(.*?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", c, flags=re.S)
            if fn:   # a function pointer field: compare with its CFUNCTYPE like a typedef
                params = fn.group(3).strip()
                local = dict(callbacks)
                slot = f"{name}.{fn.group(2)}"
                local[slot] = (" ".join(fn.group(1).split()),
                                      [] if params in ("", "void") else [p.strip() for p in params.split(",")])
                if _py_kind(py) != "ptr":
                    problems.append(f"{slot}: a function pointer, {field} is {py!r}")
                problems += _callback_problems(slot, py, slot, enums, local)
            elif _py_kind(py) != _c_kind(c, enums, callbacks):
                problems.append(f"{name}: field {field} is {py!r}, the header has {c!r}")
    assert not problems, "\n".join(problems)
