#!/usr/bin/env python3
"""Writes cache-tests.json, the test definitions of http-tests/cache-tests (https://github.com/
http-tests/cache-tests, BSD 3-Clause, (c) 2018 Mark Nottingham; see cache-tests.LICENSE), from a
checkout of that repository: node imports its tests/index.mjs and prints the suites as JSON.
Nothing else of the repository is kept.

    python3 Tests/cacheconf/export_cache_tests.py /path/to/cache-tests   # a work tree
    python3 Tests/cacheconf/export_cache_tests.py --git /path/to/repo.git [REV]
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DUMP = "import suites from './tests/index.mjs'; console.log(JSON.stringify(suites));"


def main(argv):
    with tempfile.TemporaryDirectory() as tmp:
        if argv[:1] == ["--git"]:
            rev = argv[2] if len(argv) > 2 else "HEAD"
            archive = subprocess.run(["git", "--git-dir", argv[1], "archive", rev, "tests", "LICENSE"],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            commit = subprocess.run(["git", "--git-dir", argv[1], "rev-parse", rev], check=True,
                                    capture_output=True, text=True).stdout.strip()
            root = tmp
        else:
            root, commit = argv[0], "work tree"
        with open(os.path.join(root, "package.json"), "w") as f:
            f.write('{"type": "module"}')
        out = subprocess.run(["node", "--input-type=module", "-e", DUMP], cwd=root, check=True,
                             capture_output=True, text=True, timeout=60).stdout
        suites = json.loads(out)
        with open(os.path.join(root, "LICENSE")) as f:
            licence = f.read()
    with open(os.path.join(HERE, "cache-tests.json"), "w") as f:
        json.dump({"source": "https://github.com/http-tests/cache-tests", "commit": commit,
                   "licence": "BSD-3-Clause, see cache-tests.LICENSE", "suites": suites}, f, indent=1)
        f.write("\n")
    with open(os.path.join(HERE, "cache-tests.LICENSE"), "w") as f:
        f.write(licence)
    print(f"{sum(len(s['tests']) for s in suites)} tests in {len(suites)} suites from {commit}")


if __name__ == "__main__":
    main(sys.argv[1:])
