"""The Python contestants of bench/schema.sh (issue 18): validating the rich document, already
loaded as Python objects, against the same schema.

    python3 schema_bench.py CONTESTANT JSON_FILE SCHEMA_FILE COUNT

    hc           hc.Schema(schema).validate(doc): the library's validator (the objects are
                 written as JSON text and parsed by the library, which is part of the cost)
    jsonschema   jsonschema.Draft202012Validator(schema).validate(doc) (no format checker, as
                 hc.Schema's default: formats are annotations)

Both are built once, before timing, and must find the document valid. Prints one line in
json_bench's form, "MBPS <v> bytes=<file bytes x COUNT> seconds=<s> cpu=<s>" (MB = 10^6 bytes
of the JSON file validated). Exit 3 when the contestant's package is not installed.
"""

import json
import os
import resource
import sys
import time


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> int:
    who, path, schema_path, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(path, "rb") as f:
        doc = json.loads(f.read())
    with open(schema_path, "rb") as f:
        schema = json.loads(f.read())
    if who == "hc":
        import httpcontent as hc
        validator = hc.Schema(schema)
        validate = validator.validate
    elif who == "jsonschema":
        try:
            import jsonschema
        except ImportError:
            return 3
        validate = jsonschema.Draft202012Validator(schema).validate
    else:
        print(f"unknown contestant {who}", file=sys.stderr)
        return 2
    size = os.path.getsize(path)
    c0, t0 = cpu(), time.perf_counter()
    for _ in range(count):
        validate(doc)
    elapsed, used = time.perf_counter() - t0, cpu() - c0
    total = size * count
    print(f"MBPS {total / elapsed / 1e6:.2f} bytes={total} seconds={elapsed:.3f} cpu={used:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
