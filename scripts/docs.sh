#!/usr/bin/env bash
# Builds the DocC documentation of the Swift modules, HTTPContent and HTTPContentFoundation, from
# their catalogs (Sources/<Module>/<Module>.docc: landing page and articles) and the symbol
# graphs of their public API, into .build/docs/<Module>.doccarchive (static hosting layout:
# serve the folder and open /documentation/<module>).
#
# No package dependency: `swift package dump-symbol-graph` builds the package in .build (debug,
# the build `swift build` and `swift test` already make) and writes the symbol graphs; the
# toolchain's `docc convert` renders them. About a minute on 2 cores once .build is warm.
#
# Fails when DocC reports any warning other than an undocumented parameter: an unresolved or
# ambiguous ``Symbol`` or <doc:Article> link, a topic that names nothing, a malformed catalog.
# Also fails when a public member of the core's main types (Client, Request, Response, the
# handlers...) or anything public in HTTPContentFoundation has no doc comment. Undocumented
# parameters are listed and counted, not fatal. CI runs it (.ci/run) before the test suites.
#   bash scripts/docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v docc >/dev/null || { echo "docs: docc is not on PATH (it comes with the Swift toolchain)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# It also tries the test modules, which a plain build does not make, and then exits 1: what
# counts is that the two modules' graphs are there, written now (the folder is emptied first).
graphs=$(dirname "$(swift build --show-bin-path)")/symbolgraph
rm -rf "$graphs"
swift package dump-symbol-graph --minimum-access-level public > "$work/dump.log" 2>&1 || true
for module in HTTPContent HTTPContentFoundation; do
  [ -f "$graphs/$module.symbols.json" ] || { tail -30 "$work/dump.log"; echo "docs: no symbol graph for $module"; exit 1; }
done

# The core's main types, and each of their members, carry a doc comment (DocC shows the rest
# undocumented); an addition without one fails here.
# HTTPContentFoundation is small: all of its public API.
python3 - "$graphs/HTTPContent.symbols.json" "$graphs"/HTTPContentFoundation*.symbols.json <<'PY' || exit 1
import json, sys
MAIN = {"Client", "Request", "Response", "ResponseHead", "ContentHandler", "SelectiveHandler",
        "HTTPContentError", "CancelToken", "Acceptance", "Bytes", "Text", "JSON", "JSONItems",
        "File", "StreamWriter", "Discard", "Compound"}
# A handler's protocol methods take their documentation from ContentHandler's requirements.
INHERITED = {"prepare(_:)", "accept(_:)", "consume(_:)", "finish()", "cleanup(failed:)", "acceptance"}
missing = []
for symbol in json.load(open(sys.argv[1]))["symbols"]:
    path = symbol["pathComponents"]
    if path[0] not in MAIN or len(path) > 2 or "docComment" in symbol:
        continue
    if len(path) == 2 and path[0] not in ("ContentHandler", "SelectiveHandler") and path[1] in INHERITED:
        continue
    missing.append(".".join(path))
for graph in sys.argv[2:]:
    missing += [".".join(s["pathComponents"]) for s in json.load(open(graph))["symbols"] if "docComment" not in s]
if missing:
    print("docs: public API of the main types without a doc comment:", ", ".join(sorted(set(missing))))
    sys.exit(1)
PY

status=0
for module in HTTPContent HTTPContentFoundation; do
  mkdir "$work/$module"
  # The module's own graph and those of its extensions to other modules' types.
  cp "$graphs/$module.symbols.json" "$work/$module/"
  cp "$graphs/$module"@*.symbols.json "$work/$module/" 2>/dev/null || true
  out=.build/docs/$module.doccarchive
  rm -rf "$out"; mkdir -p .build/docs
  docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$work/$module" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.httpcontent.$module" \
    --output-path "$out" --ide-console-output > "$work/$module.log" 2>&1 || { tail -30 "$work/$module.log"; status=1; continue; }
  warnings=$(grep -c "warning:" "$work/$module.log" || true)
  parameters=$(grep -c "warning: Parameter '.*' is missing documentation" "$work/$module.log" || true)
  if grep "warning:" "$work/$module.log" | grep -v "warning: Parameter '.*' is missing documentation"; then
    echo "docs: $module: warnings above (links, topics or symbols DocC could not resolve)"
    status=1
  fi
  # Listed, one line each, so they are easy to fix.
  grep "warning: Parameter '.*' is missing documentation" "$work/$module.log" | sed "s|$PWD/||; s/\. Document '.*//" | sort -u || true
  pages=$(find "$out/data/documentation" -name "*.json" | wc -l)
  [ -f "$out/data/documentation/$(echo "$module" | tr 'A-Z' 'a-z').json" ] || { echo "docs: $module: no landing page"; status=1; }
  echo "docs: $module: $pages pages in $out ($warnings warnings, $parameters of them undocumented parameters)"
done
exit $status
