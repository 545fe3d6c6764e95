"""Writes the JSON benchmark document: a JSON array of up to MIB MiB (fractions allowed) and
prints "BYTES ITEMS". Shared by json.sh and schema.sh, so both measure the same document.

    python3 json_doc.py PATH MIB [rich|simple]

rich (the default, issue 15): objects with escaped and non-ASCII strings, floats, nesting:
{"id": i, "name": "item \"i\"\n", "text": "café \\ path/i ✓", "score": i*0.37,
 "geo": {"lat": ..., "lon": ..., "tags": ["a", "b", {"k": i}]}, "flags": [true, false, null]}.
simple: [{"id": 0, "name": "item 0", "tags": ["a", "b"], "value": 0.0}, ...].
"""
import json
import sys

path, limit = sys.argv[1], int(float(sys.argv[2]) * 1048576)
doc = sys.argv[3] if len(sys.argv) > 3 else "rich"
size, i, parts = 1, 0, ["["]
with open(path, "w", encoding="utf-8") as f:
    while size < limit:
        if doc == "rich":
            s = json.dumps({"id": i, "name": 'item "%d"\n' % i, "text": "caf\u00e9 \\ path/%d \u2713" % i,
                            "score": i * 0.37, "geo": {"lat": 45.1234567 + i * 1e-7, "lon": -73.7654321,
                                                       "tags": ["a", "b", {"k": i}]},
                            "flags": [True, False, None]}, ensure_ascii=False)
        else:
            s = '{"id": %d, "name": "item %d", "tags": ["a", "b"], "value": %r}' % (i, i, i * 1.5)
        if i:
            s = "," + s
        parts.append(s)
        size += len(s.encode())
        i += 1
        if len(parts) >= 10000:
            f.write("".join(parts))
            parts = []
    parts.append("]\n")
    f.write("".join(parts))
print(size + 2, i)
