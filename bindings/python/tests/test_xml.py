"""XML handler and path streaming, checked against xml.etree.ElementTree on real-world shapes."""

import gc
import io
import os
import threading
import time
import tracemalloc
import xml.etree.ElementTree as ET

import pytest

import httpcontent as hc
from xmlroutes import doc_query, feed_entry, feed_head, feed_tail

RSS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel>
    <title>News &amp; Views</title>
    <atom:link href="http://example.com/rss" rel="self" type="application/rss+xml"/>
    <item><title>First</title><description><![CDATA[<p>Hello <b>world</b></p>]]></description>
      <dc:creator>Ann</dc:creator><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item>
    <item><title>Second &#8212; &#x263A;</title><guid isPermaLink="false">2</guid></item>
  </channel>
</rss>
"""

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="fr">
  <title type="text">Caf\u00e9 feed</title>
  <link href="http://example.org/"/>
  <entry><title>Atom-Powered Robots</title><id>urn:uuid:1225c695</id>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Text <em>here</em> tail</p></div></content>
  </entry>
</feed>
""".encode()

SOAP = b"""<?xml version="1.0"?>
<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" soap:encodingStyle="http://www.w3.org/2003/05/soap-encoding">
  <soap:Header><m:Trans xmlns:m="urn:trans" soap:mustUnderstand="1">234</m:Trans></soap:Header>
  <soap:Body><m:GetPriceResponse xmlns:m="https://www.w3schools.com/prices"><m:Price>1.90</m:Price></m:GetPriceResponse></soap:Body>
</soap:Envelope>
"""

SITEMAP = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url><loc>http://www.example.com/?a=1&amp;b=2</loc><lastmod>2005-01-01</lastmod><changefreq>monthly</changefreq>
    <priority>0.8</priority><image:image><image:loc>http://example.com/i.jpg</image:loc></image:image></url>
  <url><loc>http://www.example.com/catalog</loc></url>
</urlset>
"""

XHTML = b"""<!DOCTYPE div [<!ENTITY nbsp "&#160;"><!ENTITY copy "&#169;"><!ENTITY company "Example &amp; Co">]>
<div xmlns="http://www.w3.org/1999/xhtml" class="note">
  <p>Fish&nbsp;&amp;&nbsp;chips &lt;cheap&gt; &copy; &company;</p><br/>
  <a href="/x?y=1&amp;z=2" title="&quot;q&quot;">link</a> trailing <!-- dropped --> text
</div>
"""

NAMESPACES = b"""<root xmlns="urn:default" xmlns:p="urn:p" xmlns:q="urn:q" a="plain" p:a="prefixed">
  <child q:x="1">t</child><p:child>u</p:child><inner xmlns=""><bare/></inner>
  <q:deep xmlns:q="urn:q2"><q:el/></q:deep>
</root>"""

UTF16 = '<?xml version="1.0" encoding="UTF-16"?><doc lang="\u65e5\u672c"><t>\u65e5\u672c\u8a9e \U0001F600</t></doc>'.encode("utf-16")

SHAPES = {"rss": RSS, "atom": ATOM, "soap": SOAP, "sitemap": SITEMAP, "xhtml": XHTML,
          "namespaces": NAMESPACES, "utf16": UTF16}


def canonical(element):
    return ET.canonicalize(ET.tostring(element, encoding="unicode"))


def url(base, body, ctype="application/xml", chunk=None):
    return f"{base}/xml/doc?{doc_query(body, ctype, chunk)}"


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("chunk", [None, 1, 7])
def test_tree_equals_elementtree_in_canonical_form(client, base_url, name, chunk):
    body = SHAPES[name]
    r = client.get(url(base_url, body, chunk=chunk), handler=hc.XML())
    assert isinstance(r.content, ET.Element)
    assert canonical(r.content) == canonical(ET.fromstring(body))
    # Not only canonical: tag, attrib, text and tail as ElementTree gives them, at every node.
    for mine, theirs in zip(r.content.iter(), ET.fromstring(body).iter(), strict=True):
        assert (mine.tag, mine.attrib, mine.text, mine.tail) == (theirs.tag, theirs.attrib, theirs.text, theirs.tail)


def test_large_documents_with_many_names_long_text_and_comments_equal_elementtree(client, base_url):
    # Beyond what the pickle writer memoizes (4096 names, 256 one-byte memo slots), names in
    # several namespaces, text over 255 bytes, empty comments and comment tails.
    parts, long = ['<r xmlns="urn:d" xmlns:a="urn:a">'], "\u00e9" * 200
    for i in range(5000):
        parts.append(f'<n{i} a:k{i % 300}="v{i}" k="{i}">{"t" * (i % 600)}<!---->x<a:n{i}/>'
                     f'<!-- c{i} -->{long}</n{i}>tail{i}')
    body = ("".join(parts) + "</r>").encode()
    raw = f"{base_url}/echo/raw"
    r = client.post(raw, data=body, handler=hc.XML(accept_types=["*/*"]))
    assert canonical(r.content) == canonical(ET.fromstring(body))
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    parser.feed(body)
    with_comments = client.post(raw, data=body, handler=hc.XML(keep_comments=True, accept_types=["*/*"])).content
    for mine, theirs in zip(with_comments.iter(), parser.close().iter(), strict=True):
        assert (mine.tag, mine.attrib, mine.text, mine.tail) == (theirs.tag, theirs.attrib, theirs.text, theirs.tail)
    streamed = list(client.iter_xml(raw, path="r/*", method="POST", data=body, accept_types=["*/*"],
                                    keep_comments=True))
    assert len(streamed) == 5000
    for mine, theirs in zip(streamed, with_comments, strict=True):
        theirs.tail = None  # a streamed element is complete at its end tag, before any tail
        assert canonical(mine) == canonical(theirs)
        assert [c.tag for c in mine] == [c.tag for c in theirs]


def test_comments_kept_by_option_like_a_comment_inserting_parser(client, base_url):
    r = client.get(url(base_url, XHTML), handler=hc.XML(keep_comments=True))
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    parser.feed(XHTML)
    assert canonical(r.content) == canonical(parser.close())
    assert any(e.tag is ET.Comment for e in r.content.iter())


def test_content_type_charset_decides_the_encoding(client, base_url):
    body = "<a>caf\u00e9</a>".encode("latin-1")
    r = client.get(url(base_url, body, "text/xml; charset=iso-8859-1"), handler=hc.XML())
    assert r.content.text == "caf\u00e9"
    with pytest.raises(hc.DecodeError):
        client.get(url(base_url, body, "text/xml"), handler=hc.XML())


def test_acceptance_and_empty_bodies(client, base_url):
    for ctype in ["application/xml", "text/xml", "application/atom+xml", "image/svg+xml"]:
        assert client.get(url(base_url, b"<a/>", ctype), handler=hc.XML()).content.tag == "a"
    with pytest.raises(hc.UnacceptableContentType):
        client.get(url(base_url, b"<a/>", "application/json"), handler=hc.XML())
    assert client.get(url(base_url, b"<a/>", "application/json"),
                      handler=hc.XML(accept_types=["*/*"])).content.tag == "a"
    with pytest.raises(hc.DecodeError):
        client.get(url(base_url, b""), handler=hc.XML())
    assert client.get(url(base_url, b""), handler=hc.XML(allow_empty=True)).content is None
    with pytest.raises(hc.TooLarge):
        client.get(url(base_url, SITEMAP), handler=hc.XML(max_size=100))


def test_malformed_document_raises_decode_error_with_position(client, base_url):
    with pytest.raises(hc.DecodeError) as info:
        client.get(url(base_url, b"<a>\n<b></c></a>"), handler=hc.XML())
    assert "line 2" in str(info.value)


# -- hostile documents

def billion_laughs():
    doc = '<!DOCTYPE lolz [<!ENTITY lol "lol">'
    doc += '<!ENTITY lol1 "' + "&lol;" * 10 + '">'
    for i in range(2, 10):
        doc += f'<!ENTITY lol{i} "' + f"&lol{i - 1};" * 10 + '">'
    return (doc + "]><lolz>&lol9;</lolz>").encode()


def quadratic_blowup():
    return (b"<!DOCTYPE q [<!ENTITY a \"" + b"x" * 10_000 + b"\">]><q>" + b"&a;" * 300 + b"</q>")


@pytest.mark.parametrize("doc", [billion_laughs(), quadratic_blowup()], ids=["billion-laughs", "quadratic"])
def test_entity_bombs_raise_decode_error(client, base_url, doc):
    with pytest.raises(hc.DecodeError):
        client.get(url(base_url, doc), handler=hc.XML())


def test_external_entities_and_dtds_are_never_loaded(client, base_url, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    xxe = f'<!DOCTYPE r [<!ENTITY xxe SYSTEM "file://{secret}">]><r>&xxe;</r>'.encode()
    with pytest.raises(hc.DecodeError, match="external entity"):
        client.get(url(base_url, xxe), handler=hc.XML())
    pe = f'<!DOCTYPE r [<!ENTITY % p SYSTEM "file://{secret}"> %p;]><r/>'.encode()
    with pytest.raises(hc.DecodeError, match="external entity"):
        client.get(url(base_url, pe), handler=hc.XML())
    # An external DTD on the network is not fetched (nothing listens there; the parse is unaffected).
    remote = f'<!DOCTYPE r SYSTEM "{base_url}/xml/doc?doc=%3C!ENTITY%20s%20%22SECRET%22%3E"><r>ok</r>'.encode()
    assert client.get(url(base_url, remote), handler=hc.XML()).content.text == "ok"


def test_depth_limit_raises_decode_error(client, base_url):
    deep = b"<a>" * 300 + b"</a>" * 300
    with pytest.raises(hc.DecodeError):
        client.get(url(base_url, deep), handler=hc.XML())
    ten = b"<a>" * 10 + b"</a>" * 10
    with pytest.raises(hc.DecodeError, match="deeper than 5"):
        client.get(url(base_url, ten), handler=hc.XML(max_depth=5))
    with pytest.raises(hc.DecodeError):
        list(client.iter_xml(url(base_url, deep), path="a/a"))


# -- events

def iterparse_events(body):
    """ElementTree's start and end events: ("start", tag, attrib) and ("end", tag, None)."""
    return [(event, element.tag, dict(element.attrib) if event == "start" else None)
            for event, element in ET.iterparse(io.BytesIO(body), events=("start", "end"))]


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("chunk", [None, 1, 7])
def test_events_match_iterparse_and_rebuild_the_same_tree(client, base_url, name, chunk):
    body = SHAPES[name]
    seen = []
    builder = ET.TreeBuilder()

    def on_start(tag, attrib):
        seen.append(("start", tag, attrib))
        builder.start(tag, attrib)

    def on_text(text):
        assert seen[-1][0] != "text", "text comes whole between two tags"
        seen.append(("text", text, None))
        builder.data(text)

    def on_end(tag):
        seen.append(("end", tag, None))
        builder.end(tag)

    r = client.get(url(base_url, body, chunk=chunk), handler=hc.XMLEvents(on_start, on_text, on_end))
    assert r.content is None
    assert [e for e in seen if e[0] != "text"] == iterparse_events(body)
    mine, theirs = builder.close(), ET.fromstring(body)
    assert canonical(mine) == canonical(theirs)
    for a, b in zip(mine.iter(), theirs.iter(), strict=True):
        assert (a.tag, a.attrib, a.text, a.tail) == (b.tag, b.attrib, b.text, b.tail)


def test_events_target_is_an_elementtree_builder_with_comments(client, base_url):
    r = client.get(url(base_url, XHTML, chunk=3),
                   handler=hc.XMLEvents(target=ET.TreeBuilder(insert_comments=True)))
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    parser.feed(XHTML)
    assert canonical(r.content) == canonical(parser.close())
    assert any(e.tag is ET.Comment for e in r.content.iter())
    # Without on_comment (nor a target's comment), comments are not reported.
    texts = []
    client.get(url(base_url, XHTML), handler=hc.XMLEvents(on_text=texts.append))
    assert not any("dropped" in t for t in texts) and any("trailing" in t for t in texts)


def test_events_stop_early_and_callback_errors_propagate(client, base_url):
    starts = []
    client.get(f"{base_url}/xml/feed?n=100000000",
               handler=hc.XMLEvents(on_start=lambda tag, attrib: starts.append(tag) or len(starts) == 3))
    assert starts == ["{http://www.w3.org/2005/Atom}feed", "{http://www.w3.org/2005/Atom}title",
                      "{http://www.w3.org/2005/Atom}entry"]

    class Boom(Exception):
        pass

    def explode(tag):
        raise Boom(tag)

    with pytest.raises(Boom, match="title"):
        client.get(f"{base_url}/xml/feed?n=10", handler=hc.XMLEvents(on_end=explode))


@pytest.mark.parametrize("doc", [billion_laughs(), quadratic_blowup(), b"<a>" * 300 + b"</a>" * 300,
                                 b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'],
                         ids=["billion-laughs", "quadratic", "deep", "external"])
def test_events_refuse_hostile_documents(client, base_url, doc):
    with pytest.raises(hc.DecodeError):
        client.get(url(base_url, doc), handler=hc.XMLEvents(on_text=lambda text: None))


# -- path streaming

def test_iter_xml_yields_elements_equal_to_elementtree(client, base_url):
    n = 2000
    got = list(client.iter_xml(f"{base_url}/xml/feed?n={n}", path="feed/entry"))
    assert len(got) == n
    body = feed_head() + b"".join(feed_entry(i) for i in range(n)) + feed_tail()
    expected = ET.fromstring(body).findall("{http://www.w3.org/2005/Atom}entry")
    for mine, theirs in zip(got, expected, strict=True):
        theirs.tail = None  # a streamed element is complete at its end tag, before any tail
        assert canonical(mine) == canonical(theirs)


def test_iter_xml_namespaced_steps_and_rss(client, base_url):
    atom = "{http://www.w3.org/2005/Atom}"
    got = list(client.iter_xml(f"{base_url}/xml/feed?n=5", path=f"{atom}feed/{atom}entry"))
    assert [e.find(f"{atom}id").text for e in got] == [f"urn:uuid:{i:08d}" for i in range(5)]
    assert list(client.iter_xml(f"{base_url}/xml/feed?n=5", path="{}feed/entry")) == []
    items = list(client.iter_xml(f"{base_url}/xml/feed?n=3&kind=rss", path="rss/channel/item"))
    assert [i.find("title").text for i in items] == ["Item 0 & more", "Item 1 & more", "Item 2 & more"]
    assert items[0].find("description").text == "<p>Body 0</p>"


def test_closing_the_generator_stops_the_transfer(client, base_url):
    gen = client.iter_xml(f"{base_url}/xml/feed?n=100000000", path="feed/entry")
    first = [next(gen) for _ in range(3)]
    assert [e.find("{http://www.w3.org/2005/Atom}id").text for e in first][0] == "urn:uuid:00000000"
    gen.close()  # a 100M-entry feed was not read to the end
    assert client.get(f"{base_url}/xml/feed?n=1", handler=hc.XML(accept_types=["*/*"])).status == 200


def test_iter_xml_runs_on_the_callers_thread_and_reads_nothing_once_closed(client, base_url):
    received, threads = [0], set()

    def progress(info):
        received[0] = info["received"]
        threads.add(threading.get_ident())

    gen = client.iter_xml(f"{base_url}/xml/feed?n=100000000", path="feed/entry", progress=progress)
    assert sum(1 for _, _ in zip(range(2000), gen)) == 2000
    gen.close()
    assert threads == {threading.get_ident()}   # no worker thread: stepped between the elements
    seen = received[0]
    time.sleep(0.2)
    assert 0 < seen == received[0]


def test_path_streaming_memory_stays_flat(client, base_url):
    def peak(n):
        gc.collect()
        tracemalloc.start()
        count = 0
        for _ in client.iter_xml(f"{base_url}/xml/feed?n={n}", path="feed/entry"):
            count += 1
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert count == n
        return top
    small, large = peak(2_000), peak(40_000)
    # 20 times the entries, not 20 times the memory: what waits is one round of libcurl's reads
    # (at most 100 reads of 16 KiB, as pickled batches) before they are taken.
    assert large < small * 2 + 2 * 1024 * 1024, (small, large)


def test_xml_elements_handler_calls_back_and_stops(client, base_url):
    seen = []
    r = client.get(f"{base_url}/xml/feed?n=50", handler=hc.XMLElements("feed/entry", seen.append))
    assert r.content == 50 and len(seen) == 50 and all(isinstance(e, ET.Element) for e in seen)
    seen.clear()
    r = client.get(f"{base_url}/xml/feed?n=100000",
                   handler=hc.XMLElements("feed/entry", lambda e: seen.append(e) or len(seen) == 4))
    assert len(seen) == 4
    both = []
    client.get(f"{base_url}/xml/feed?n=2", handler=hc.XMLElements(["feed/title", "feed/entry"],
                                                                  lambda p, e: both.append(p)))
    assert both == ["feed/title", "feed/entry", "feed/entry"]


def test_compound_chooses_json_xml_or_plist_by_content_type(client, base_url):
    # AFNetworking's compound serializer: the first handler whose types accept the response wins
    # (XML before Plist: the plist handler's defaults include text/xml and application/xml).
    import plistlib
    every = hc.Compound([hc.JSON(), hc.XML(), hc.Plist()])
    r = client.get(url(base_url, b'{"a": [1, 2]}', "application/json"), handler=every)
    assert r.content == {"a": [1, 2]}
    r = client.get(url(base_url, SOAP, "application/soap+xml"), handler=every)
    assert canonical(r.content) == canonical(ET.fromstring(SOAP))
    doc = {"name": "Zo\u00eb", "n": [1, -2, 3.5], "ok": True, "blob": b"\x00\x01"}
    for fmt, ctype in [(plistlib.FMT_XML, "application/x-plist"), (plistlib.FMT_BINARY, "application/x-bplist")]:
        body = plistlib.dumps(doc, fmt=fmt)
        r = client.get(f"{base_url}/plist?ctype={ctype}&hex={body.hex()}", handler=every)
        assert r.content == plistlib.loads(body) == doc
    with pytest.raises(hc.UnacceptableContentType):
        client.get(url(base_url, b"x", "text/plain"), handler=every)
