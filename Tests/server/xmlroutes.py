"""XML endpoints of the test server (a mixin of testserver.Handler; standard library only).

    /xml/doc              ?hex=<bytes in hex> or ?doc=<text, sent as UTF-8>; ?ctype= (default
                          application/xml); ?chunk=N sends it chunked, N bytes per chunk
    /xml/feed             ?n=K: an Atom feed of K entries, streamed chunked (feed_entry(i) is entry
                          i); ?kind=rss gives RSS 2.0 items instead; ?ctype=
"""

import urllib.parse

ATOM = "http://www.w3.org/2005/Atom"
MEDIA = "http://search.yahoo.com/mrss/"


def feed_entry(i, kind="atom"):
    """Entry i of /xml/feed, as bytes: namespaces, attributes, entities, CDATA and a comment."""
    if kind == "rss":
        return (f'<item><title>Item {i} &amp; more</title><link>http://example.com/{i}</link>'
                f'<description><![CDATA[<p>Body {i}</p>]]></description>'
                f'<media:content url="http://example.com/{i}.jpg" medium="image"/>'
                f'<guid isPermaLink="false">id-{i}</guid></item>\n').encode()
    return (f'<entry xml:lang="en"><id>urn:uuid:{i:08d}</id><title type="text">Entry {i} &lt;{i % 7}&gt;</title>'
            f'<updated>2024-01-{i % 28 + 1:02d}T00:00:00Z</updated>'
            f'<link rel="alternate" href="http://example.com/{i}"/><!-- c{i} -->'
            f'<summary>Caf\u00e9 {i} &#x2014; <![CDATA[raw <b>{i}</b>]]> text</summary>'
            f'<media:thumbnail url="http://example.com/{i}.png" width="{i % 100}"/></entry>\n').encode()


def feed_head(kind="atom"):
    if kind == "rss":
        return (b'<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0" xmlns:media="' + MEDIA.encode() +
                b'"><channel><title>Feed</title>\n')
    return (b'<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="' + ATOM.encode() + b'" xmlns:media="' +
            MEDIA.encode() + b'"><title>Feed</title>\n')


def feed_tail(kind="atom"):
    return b"</channel></rss>\n" if kind == "rss" else b"</feed>\n"


class XMLRoutes:
    def h_xml(self, args):
        what = args[0] if args else ""
        if what == "doc":
            if self._q("hex") is not None:
                body = bytes.fromhex(self._q("hex"))
            else:
                body = (self._q("doc") or "").encode("utf-8")
            ctype = self._q("ctype", "application/xml")
            chunk = int(self._q("chunk", "0") or 0)
            if chunk <= 0:
                return self._send(200, body, ctype)
            self._head(200, ctype, chunked=True)
            if self.command == "HEAD":
                return None
            for i in range(0, len(body), chunk):
                self._write_chunk(body[i:i + chunk])
            return self._end_chunks()
        if what == "feed":
            n = int(self._q("n", "10"))
            kind = self._q("kind", "atom")
            ctype = self._q("ctype", "application/rss+xml" if kind == "rss" else "application/atom+xml")
            self._head(200, ctype, chunked=True)
            if self.command == "HEAD":
                return None
            self._write_chunk(feed_head(kind))
            batch = []
            for i in range(n):
                if self._stopping():
                    break
                batch.append(feed_entry(i, kind))
                if len(batch) == 256:
                    self._write_chunk(b"".join(batch))
                    batch = []
            self._write_chunk(b"".join(batch))
            self._write_chunk(feed_tail(kind))
            return self._end_chunks()
        return self._error(404, "Not Found")


def doc_query(body, ctype=None, chunk=None):
    """The query string of /xml/doc for these bytes."""
    q = {"hex": body.hex()}
    if ctype is not None:
        q["ctype"] = ctype
    if chunk:
        q["chunk"] = str(chunk)
    return urllib.parse.urlencode(q)
