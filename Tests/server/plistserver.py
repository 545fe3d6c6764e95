"""Property-list endpoints of the test server (imported by testserver.py).

    /plist                the request body back, as Content-Type ?ctype= (default
                          application/x-plist); ?status= (default 200); ?hex= a body given in hex
                          instead (for GET); ?chunked=1 sends it chunked (no Content-Length)
"""


def h_plist(handler, args):
    if args == ["canary"]:
        return h_plist_canary(handler)
    body = handler.body
    hex_body = handler._q("hex")
    if hex_body is not None:
        body = bytes.fromhex(hex_body)
    status = int(handler._q("status", "200"))
    ctype = handler._q("ctype", "application/x-plist")
    if handler._q("chunked") == "1":
        handler._head(status, ctype, chunked=True)
        if handler.command != "HEAD":
            for i in range(0, len(body), 65536):
                handler._write_chunk(body[i:i + 65536])
            handler._end_chunks()
        return
    handler._send(status, body, ctype)


_canary_hits = [0]


def h_plist_canary(handler):
    """/plist/canary counts requests (an entity pointing here proves a parser fetched it);
    ?count=1 reports the count instead, as JSON {"hits": n}."""
    if handler._q("count") == "1":
        return handler._json(200, {"hits": _canary_hits[0]})
    _canary_hits[0] += 1
    handler._send(200, b"fetched", "text/plain")
