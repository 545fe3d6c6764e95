"""The guides' code blocks (docs/guides/*.md) are run, so the guides cannot drift from the library.

- ```python blocks run in order, in one namespace per guide, with `base` the local test server's
  address and a fresh temporary folder as the current one (against whichever `httpcontent` is
  imported: the checkout's, or the installed wheel in the clean-room check);
- ```c blocks are whole programs: compiled against the built library (build/, or
  HTTPCONTENT_LIBRARY) with -Wall -Wextra -Werror and run with the base address as argv[1];
  they must exit 0;
- ```swift blocks are compiled with swiftc against the modules and objects `swift build` (or
  `swift test`) made in .build/debug, each as a main.swift with `base` declared, linked and run;
  they must exit 0 (an uncaught error or a failed assert does not);
- ```cmake blocks are a whole CMakeLists.txt: configured and built against a temporary
  `cmake --install` of build/, with the guide's first C block as app.c, and the program run;
- a block whose info string says `no-run` (```sh no-run) is illustrative; any other block fails
  the test, so an example cannot escape these checks by accident.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
GUIDES = ROOT / "docs" / "guides"
RUN = ("python", "c", "swift", "cmake")
FENCE = re.compile(r"^```(.*)$")


@dataclass
class Block:
    guide: str
    line: int  # of the opening fence, 1-based
    language: str
    flags: list[str]
    code: str

    def where(self) -> str:
        return f"{self.guide}:{self.line}"


def blocks(path: Path) -> list[Block]:
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        info = opening.group(1).split()
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].rstrip() != "```":
            # An opening fence inside a block: the block before it was never closed.
            assert not re.match(r"^```\S", lines[i]), f"{path.name}:{start + 1}: unclosed code block"
            body.append(lines[i])
            i += 1
        assert i < len(lines), f"{path.name}:{start + 1}: unclosed code block"
        i += 1
        found.append(Block(path.name, start + 1, info[0] if info else "", info[1:], "\n".join(body) + "\n"))
    return found


def guide_files() -> list[Path]:
    return sorted(GUIDES.glob("*.md"))


def runnable(language: str) -> list[Block]:
    return [b for p in guide_files() for b in blocks(p) if b.language == language and "no-run" not in b.flags]


def test_the_guides_are_there_and_have_examples():
    names = {p.name for p in guide_files()}
    assert {"python.md", "c.md", "swift.md", "choosing-a-handler.md"} <= names
    for p in guide_files():
        assert any("no-run" not in b.flags for b in blocks(p)), f"{p.name} has no example that runs"


def test_every_block_runs_or_says_it_does_not():
    unmarked = [b.where() + f" ({b.language or 'no language'})" for p in guide_files() for b in blocks(p)
                if b.language not in RUN and "no-run" not in b.flags]
    assert not unmarked, f"blocks that neither run nor say no-run: {unmarked}"
    total = [b for p in guide_files() for b in blocks(p)]
    illustrative = [b for b in total if "no-run" in b.flags]
    assert len(illustrative) * 3 < len(total), "most examples must run"


def test_the_block_parser_sees_fences_and_flags(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text("text\n```python\nx = 1\n```\n```sh no-run\nls\n```\n", encoding="utf-8")
    found = blocks(page)
    assert [(b.language, b.flags, b.code, b.line) for b in found] == [
        ("python", [], "x = 1\n", 2), ("sh", ["no-run"], "ls\n", 5)]
    page.write_text("```python\nx = 1\n```c\nint main(void) { return 0; }\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="unclosed"):
        blocks(page)


# MARK: - Python

@pytest.mark.parametrize("guide", sorted({b.guide for b in runnable("python")}))
def test_python_blocks_run(guide: str, base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"base": base_url, "__name__": "__guide__"}
    for block in runnable("python"):
        if block.guide != guide:
            continue
        out = StringIO()
        try:
            with redirect_stdout(out):
                exec(compile(block.code, block.where(), "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"{block.where()}: {type(exc).__name__}: {exc}\n{block.code}") from exc


def test_python_blocks_are_clean_under_mypy_strict(tmp_path: Path):
    """Each guide's Python examples, as one program, type-check as a user's strict code would."""
    if subprocess.run([sys.executable, "-c", "import mypy"], capture_output=True).returncode != 0:
        pytest.skip("mypy is not installed (pip install mypy)")
    import httpcontent
    programs: list[str] = []
    for guide in sorted({b.guide for b in runnable("python")}):
        program = tmp_path / (guide.removesuffix(".md").replace("-", "_") + ".py")
        program.write_text('base = "http://127.0.0.1:1"\n'
                           + "\n".join(b.code for b in runnable("python") if b.guide == guide), encoding="utf-8")
        programs.append(str(program))
    (tmp_path / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(tmp_path / "mypy.ini"), "--strict",
                          "--no-incremental", str(Path(httpcontent.__file__).parent), *programs],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr


# MARK: - C

def built_library() -> Path | None:
    given = os.environ.get("HTTPCONTENT_LIBRARY")
    library = Path(given) if given else ROOT / "build" / "libhttpcontent.so.0"
    return library if library.exists() else None


@pytest.mark.parametrize("block", runnable("c"), ids=Block.where)
def test_c_blocks_compile_and_run(block: Block, base_url: str, tmp_path: Path):
    library = built_library()
    compiler = shutil.which("cc")
    if library is None or compiler is None:
        pytest.skip("needs cc and the built library (cmake --build build, or HTTPCONTENT_LIBRARY)")
    assert "int main(" in block.code, f"{block.where()}: a C example is a whole program"
    source = tmp_path / "example.c"
    source.write_text(block.code, encoding="utf-8")
    # Link the exact file by its soname, as the installed libhttpcontent.so symlink would.
    (tmp_path / "libhttpcontent.so").symlink_to(library.resolve())
    build = subprocess.run([compiler, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(ROOT / "include"),
                            str(source), "-L", str(tmp_path), "-lhttpcontent",
                            f"-Wl,-rpath,{library.resolve().parent}", "-o", str(tmp_path / "example")],
                           capture_output=True, text=True)
    assert build.returncode == 0, f"{block.where()} does not compile:\n{build.stderr}"
    run = subprocess.run([str(tmp_path / "example"), base_url], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert run.returncode == 0, f"{block.where()} exited {run.returncode}:\n{run.stdout}\n{run.stderr}"


# MARK: - Swift

def swift_modules() -> Path | None:
    modules = ROOT / ".build" / "debug" / "Modules"
    if (modules / "HTTPContent.swiftmodule").exists() and (modules / "HTTPContentFoundation.swiftmodule").exists():
        return modules
    return None


def swift_flags(modules: Path) -> list[str]:
    """Where the core's C modules (libcurl, yajl... shims) and their headers are."""
    flags = ["-I", str(modules)]
    for shim in sorted((ROOT / "Sources").glob("C*")):
        # A system library's own module map, or the one SwiftPM wrote for a C target.
        for modulemap in [shim / "module.modulemap", shim / "include" / "module.modulemap",
                          modules.parent / f"{shim.name}.build" / "module.modulemap"]:
            if modulemap.exists():
                flags += ["-Xcc", f"-fmodule-map-file={modulemap}"]
        if (shim / "include").is_dir():
            flags += ["-Xcc", f"-I{shim / 'include'}"]
    cflags = subprocess.run(["pkg-config", "--cflags-only-I", "libxml-2.0", "libplist-2.0"],
                            capture_output=True, text=True)
    for flag in cflags.stdout.split():
        flags += ["-Xcc", flag]
    return flags


def swift_link_flags(modules: Path) -> list[str]:
    """The objects `swift build` (or `swift test`) compiled for the core, the Foundation layer and
    the image codecs, and the system libraries they use (Package.swift's list)."""
    objects: list[str] = []
    for target in ("HTTPContent", "HTTPContentFoundation", "CImageCodecs"):
        # One object per source file that still exists (a deleted file's stale object stays behind).
        sources = [f for f in (ROOT / "Sources" / target).rglob("*") if f.suffix in (".swift", ".c")]
        for source in sorted(sources):
            built = modules.parent / f"{target}.build" / f"{source.name}.o"
            assert built.exists(), f"{built} is missing: run swift build"
            objects.append(str(built))
    libraries = subprocess.run(["pkg-config", "--libs", "libcurl", "yajl", "libxml-2.0", "libplist-2.0",
                                "libcrypto", "libpcre2-8", "libidn2"], capture_output=True, text=True, check=True)
    return objects + libraries.stdout.split() + ["-lpng16", "-ljpeg", "-lgif", "-lwebp"]


@pytest.mark.parametrize("block", runnable("swift"), ids=Block.where)
def test_swift_blocks_compile_and_run(block: Block, base_url: str, tmp_path: Path):
    modules = swift_modules()
    swiftc = shutil.which("swiftc")
    if modules is None or swiftc is None:
        pytest.skip("needs swiftc and the modules of `swift build` (.build/debug/Modules)")
    source = tmp_path / "main.swift"
    source.write_text(f"let base = {json.dumps(base_url)}\n" + block.code, encoding="utf-8")
    build = subprocess.run([swiftc, "-swift-version", "6", *swift_flags(modules), str(source),
                            *swift_link_flags(modules), "-o", str(tmp_path / "example")],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, f"{block.where()} does not compile:\n{build.stderr}"
    run = subprocess.run([str(tmp_path / "example")], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                         env={**os.environ, "SWIFT_BACKTRACE": "enable=no"})
    assert run.returncode == 0, f"{block.where()} exited {run.returncode}:\n{run.stdout}\n{run.stderr}"


# MARK: - CMake

@pytest.mark.parametrize("block", runnable("cmake"), ids=Block.where)
def test_cmake_blocks_build_against_the_installed_package(block: Block, base_url: str, tmp_path: Path):
    build = ROOT / "build"
    cmake = shutil.which("cmake")
    if cmake is None or built_library() is None or not (build / "cmake_install.cmake").exists():
        pytest.skip("needs cmake and the configured, built library (cmake --build build)")
    prefix = tmp_path / "prefix"
    subprocess.run([cmake, "--install", str(build), "--prefix", str(prefix)], check=True, capture_output=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(block.code, encoding="utf-8")
    programs = [b for b in runnable("c") if b.guide == block.guide]
    assert programs, f"{block.where()}: its guide has no C program to build as app.c"
    (project / "app.c").write_text(programs[0].code, encoding="utf-8")
    for step in ([cmake, "-S", str(project), "-B", str(tmp_path / "out"), f"-DCMAKE_PREFIX_PATH={prefix}"],
                 [cmake, "--build", str(tmp_path / "out")]):
        done = subprocess.run(step, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{block.where()}: {' '.join(step)}\n{done.stdout}\n{done.stderr}"
    run = subprocess.run([str(tmp_path / "out" / "app"), base_url], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"{block.where()}: the app exited {run.returncode}\n{run.stdout}{run.stderr}"
    libraries = subprocess.run(["ldd", str(tmp_path / "out" / "app")], capture_output=True, text=True).stdout
    assert str(prefix) in libraries, f"the app did not load the installed library:\n{libraries}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
