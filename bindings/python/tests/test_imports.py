"""The package's import structure: no module imports another that (directly or not) imports it
back, not even from inside a function; each module imports alone, loading exactly the modules
its imports name; errors import nothing of the client, models or handlers.

The graph is read from the source (every import statement, wherever it stands, except those
under `if TYPE_CHECKING:`, which never run) and checked against what Python really loads."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import httpcontent

PACKAGE = Path(httpcontent.__file__).resolve().parent
NAME = "httpcontent"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, at_import: bool = False) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: anywhere in the module, in functions and classes
    too, but not in the body of `if TYPE_CHECKING:`. `at_import`: only those that run when the
    module is imported (not inside a function)."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if at_import and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _targets(module: str, at_import: bool = False) -> set[str]:
    """The package modules `module` imports at run time ("" for the package itself)."""
    tree = ast.parse((PACKAGE / f"{module or '__init__'}.py").read_text())
    out: set[str] = set()
    for node in _imports(tree, at_import):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == NAME:
                    out.add(parts[1] if len(parts) > 1 else "")
            continue
        if node.level == 0:
            parts = (node.module or "").split(".")
            if parts[0] != NAME:
                continue
            base = parts[1] if len(parts) > 1 else ""
        elif node.level == 1:
            base = node.module or ""
        else:
            raise AssertionError(f"{module}: import beyond the package")
        if base:
            out.add(base.split(".")[0])
        else:  # `from . import x`: the submodule x, or a name of __init__
            for alias in node.names:
                out.add(alias.name if alias.name in MODULES else "")
    out.discard(module)
    return out


def _graph(at_import: bool = False) -> dict[str, set[str]]:
    return {m: _targets(m, at_import) for m in [""] + MODULES}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def _closure(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        todo.extend(graph[node])
    return seen


def test_the_package_has_no_import_cycle() -> None:
    graph = _graph()
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(m or "__init__" for m in cycle or [])
    # Only the package's __init__ may import the rest; no module imports it back.
    assert not [m for m in MODULES if "" in graph[m]]


def test_the_cycle_check_finds_a_cycle_hidden_in_a_function() -> None:
    # The checker itself: the import the old errors.py hid in last_error() is a cycle.
    graph = _graph()
    graph["errors"] = graph["errors"] | {"client"}
    assert _cycle(graph) is not None
    tree = ast.parse("def f():\n    from .client import Client\n"
                     "if TYPE_CHECKING:\n    from .models import Headers\n")
    assert [n.module for n in _imports(tree) if isinstance(n, ast.ImportFrom)] == ["client"]


def test_errors_import_no_client_models_or_handlers() -> None:
    graph = _graph()
    assert _closure(graph, "errors") <= {"errors", "_lib", "_headers", "_history", "_constants"}
    assert _closure(graph, "_constants") == {"_constants"}  # generated from the headers
    assert _closure(graph, "_history") == {"_history", "_headers"}  # pure Python, as _headers
    assert _closure(graph, "_types") == {"_types"}
    assert _closure(graph, "_lib") == {"_lib"}
    assert "client" not in _closure(graph, "models")
    assert "handlers" not in _closure(graph, "models")


_LOAD_ALONE = """
import importlib, json, sys, types
package = types.ModuleType({name!r})
package.__path__ = [{path!r}]
sys.modules[{name!r}] = package  # the package without its __init__: only what the module needs
importlib.import_module({name!r} + "." + sys.argv[1])
print(json.dumps(sorted(m.split(".", 1)[1] for m in sys.modules if m.startswith({name!r} + "."))))
"""


def test_each_module_imports_alone_and_loads_what_its_imports_say() -> None:
    # What it loads: at least what its module-level imports reach, at most what all its imports
    # (those inside functions too) reach; the source graph is then a true picture of Python's.
    graph, at_import = _graph(), _graph(at_import=True)
    code = _LOAD_ALONE.format(name=NAME, path=str(PACKAGE))
    for module in MODULES:
        out = subprocess.run([sys.executable, "-c", code, module], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, f"import {NAME}.{module} alone failed:\n{out.stderr}"
        loaded = set(json.loads(out.stdout))
        assert _closure(at_import, module) <= loaded <= _closure(graph, module), module


def test_the_models_are_apart_from_the_client() -> None:
    from httpcontent import client, models
    assert httpcontent.Headers is models.Headers
    assert httpcontent.Request is models.Request and httpcontent.Response is models.Response
    assert httpcontent.Client is client.Client
    # Older imports keep working.
    assert client.Headers is models.Headers and client.Response is models.Response
