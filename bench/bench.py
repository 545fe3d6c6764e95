"""Runs one benchmark of bench/suites by name: `python3 bench/bench.py NAME [--rounds N]
[--count N] [--only a,b] [--no-write] [its own options]`. The shell scripts are one-line
wrappers around this."""

import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    names = sorted(f[:-3] for f in os.listdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "suites"))
                   if f.endswith(".py") and not f.startswith("_"))
    if len(sys.argv) < 2 or sys.argv[1] not in names:
        print(__doc__ + "\nbenchmarks: " + ", ".join(names), file=sys.stderr)
        return 2
    return importlib.import_module("suites." + sys.argv[1]).main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
