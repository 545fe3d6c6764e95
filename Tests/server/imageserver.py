"""Endpoints for the decoded-image tests (issue 17), installed on testserver's Handler:

    /pixels/<name>            corpus image <name> (imagecorpus.py) with its content type;
                              ?ctype= overrides it, ?chunk=N sends it chunked N bytes at a time,
                              ?truncate=K sends only its first K bytes (Content-Length K)
    /pixels/bomb              a tiny PNG claiming 50000x50000 pixels
    /pixels/names             the corpus names, one per line
    /pixels-expected/<name>   Pillow's pixels for it: ?mode=RGBA|RGB|L, ?orient=1 applies EXIF;
                              X-Width / X-Height headers, X-Exact: 1 when they must match exactly
Pillow is imported only when one of these is asked for.
"""

import imagecorpus


def h_pixels(self, args):
    name = self._one_arg(args, "name")
    if name == "names":
        return self._send(200, "\n".join(sorted(imagecorpus.corpus())) + "\n")
    if name == "bomb":
        ctype, data = "image/png", imagecorpus.bomb()
    elif name in imagecorpus.corpus():
        ctype, data = imagecorpus.corpus()[name]
    else:
        return self._error(404, f"unknown image {name!r}")
    ctype = self._q("ctype", ctype)
    truncate = self._q("truncate")
    if truncate is not None:
        data = data[:int(truncate)]
    chunk = int(self._q("chunk", "0"))
    if chunk <= 0:
        return self._send(200, data, ctype)
    self._head(200, ctype, chunked=True)
    if self.command == "HEAD":
        return
    for i in range(0, len(data), chunk):
        self._write_chunk(data[i:i + chunk])
        self.wfile.flush()
    self._end_chunks()


def h_pixels_expected(self, args):
    name = self._one_arg(args, "name")
    if name not in imagecorpus.corpus():
        return self._error(404, f"unknown image {name!r}")
    width, height, data = imagecorpus.expected(name, self._q("mode", "RGBA"), self._q("orient") == "1")
    self._send(200, data, "application/octet-stream",
               [("X-Width", str(width)), ("X-Height", str(height)),
                ("X-Exact", "1" if imagecorpus.exact(name) else "0")])


def install(handler_class):
    handler_class.h_pixels = h_pixels
    handler_class.h_pixels_expected = h_pixels_expected
