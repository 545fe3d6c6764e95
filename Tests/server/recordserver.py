"""Record-stream endpoints of the test server (Server-Sent Events, JSON lines, text lines),
mixed into testserver.Handler. Standard library only.

    /records/echo         the request body (POST) or ?b64=<base64> sent back in HTTP chunks of
                          ?chunk=N bytes (default 1), each flushed on its own, ?delay=S seconds
                          apart (default 0), as ?ctype= (default text/event-stream)
    /records/sse-resume   an event stream that resumes: events ?total=K (default 9) numbered from
                          1 with "id: n", ?per=P (default 3) per connection starting after the
                          request's Last-Event-ID, a "retry: ?retry=R" (default 20) field and a
                          comment naming the Last-Event-ID received; then ?mode=close ends the
                          response, ?mode=break (default) sends half an event and drops the
                          connection; once all K are sent, 204
    /records/sse-status   ?status=N [&ctype=T] a response that is not an event stream
    /records/drip         ?b64=<base64 body> sent in parts cut at ?at=K1,K2,... (byte offsets),
                          each flushed, then ?hold=S seconds (default 3, at most 30) before the
                          next part: a stream whose items end mid-way through the bytes that
                          arrive (latency, early close, read timeouts). ?chunked=1 for chunked
                          encoding (default: Content-Length), ?ctype= (default application/json),
                          ?hold_last=1 also holds after the last part before ending; the server
                          stops holding once the client has gone
"""

import base64
import socket
import struct
import time


class RecordEndpoints:
    def h_records(self, args):
        if len(args) != 1:
            return self._error(404, "Not Found")
        handler = getattr(self, "_records_" + args[0].replace("-", "_"), None)
        if handler is None:
            return self._error(404, "Not Found")
        handler()

    def _records_echo(self):
        data = self.body
        if self._q("b64") is not None:
            data = base64.b64decode(self._q("b64").replace("-", "+").replace("_", "/"))  # either alphabet
        chunk = max(1, int(self._q("chunk", "1")))
        delay = min(float(self._q("delay", "0")), 1.0)
        self._head(200, self._q("ctype", "text/event-stream"), chunked=True)
        if self.command == "HEAD":
            return
        for i in range(0, len(data), chunk):  # bounded by the body
            self._write_chunk(data[i:i + chunk])
            self.wfile.flush()
            if delay:
                time.sleep(delay)
        self._end_chunks()

    def _records_drip(self):
        data = base64.b64decode(self._q("b64", "").replace("-", "+").replace("_", "/"))
        cuts = sorted({min(len(data), max(0, int(k))) for k in self._q("at", "").split(",") if k.strip()})
        hold = min(max(float(self._q("hold", "3")), 0.0), 30.0)
        chunked = self._q("chunked") == "1"
        self._head(200, self._q("ctype", "application/json"), None if chunked else len(data), chunked=chunked)
        if self.command == "HEAD":
            return
        edges = [0] + cuts + [len(data)]
        for k in range(len(edges) - 1):  # bounded by the cuts
            part = data[edges[k]:edges[k + 1]]
            if part:
                if chunked:
                    self._write_chunk(part)
                else:
                    self.wfile.write(part)
            self.wfile.flush()
            if k < len(edges) - 2 or self._q("hold_last") == "1":
                if self._wait_for_client_gone(hold):
                    self.close_connection = True
                    return
        if chunked:
            self._end_chunks()

    def _records_sse_resume(self):
        total = int(self._q("total", "9"))
        per = max(1, int(self._q("per", "3")))
        retry = int(self._q("retry", "20"))
        mode = self._q("mode", "break")
        last = self.headers.get("Last-Event-ID")
        first = int(last) + 1 if last and last.isdigit() else 1
        if first > total:
            return self._head(204)
        self._head(200, "text/event-stream", chunked=True)
        self._write_chunk(f": last-event-id={last or ''}\nretry: {retry}\n\n".encode())
        for i in range(first, min(first + per, total + 1)):
            self._write_chunk(f"id: {i}\ndata: event {i}\n\n".encode())
            self.wfile.flush()
        if mode == "close":
            return self._end_chunks()
        self._write_chunk(b"id: 999\ndata: never dispatched\n")
        self.wfile.flush()
        # Drop the connection without ending the chunked body: a transport error for the client.
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass

    def _records_sse_status(self):
        status = int(self._q("status", "500"))
        self._send(status, "not events\n", self._q("ctype", "text/plain"))
