/* XML from C: the tree API, the element-callback API, parsing, serializing, options, hostile
 * documents and NULL safety, against the local test server. */
#include "testutil.h"
#include <stdarg.h>

static hc_client *client;

/* "/xml/doc?hex=..." for `doc` (static buffer). */
static const char *doc_path(const char *doc, const char *ctype) {
    static char path[16384];
    int n = snprintf(path, sizeof path, "/xml/doc?ctype=%s&hex=", ctype);
    for (const unsigned char *p = (const unsigned char *) doc; *p && n < (int) sizeof path - 3; p++)
        n += snprintf(path + n, sizeof path - n, "%02x", *p);
    return path;
}

/* As hc_test_send, with room for long URLs (hc_url's buffer holds 1 KiB). */
static hc_code send_long(const char *path, hc_handler *handler, hc_response **out) {
    static char url[20000];
    snprintf(url, sizeof url, "%s%s", hc_url(""), path);
    hc_request *req = hc_request_new("GET", url);
    if (!req) return hc_error_code(hc_error_last());
    hc_request_set_handler(req, handler);
    hc_code rc = hc_client_send(client, req, out);
    hc_request_free(req);
    return rc;
}

static void test_tree_handler(void) {
    hc_handler *h = hc_handler_xml_new(NULL);
    hc_response *r = NULL;
    const char *doc = "<feed xmlns='http://www.w3.org/2005/Atom' xmlns:m='urn:m'>"
                      "<entry m:id='7' k='a &amp; b'><title>T &#x263A;</title>x<m:e/>y</entry></feed>";
    CHECK_CODE(send_long(doc_path(doc, "application/atom%2Bxml"), h, &r), HC_OK);
    const hc_xml *root = hc_response_xml(r);
    CHECK(root != NULL);
    CHECK(hc_xml_kind(root) == HC_XML_ELEMENT);
    CHECK(strcmp(hc_xml_name(root), "feed") == 0);
    CHECK(strcmp(hc_xml_namespace(root), "http://www.w3.org/2005/Atom") == 0);
    CHECK(hc_xml_prefix(root) == NULL);
    const hc_xml *entry = hc_xml_first(root, "entry");
    CHECK(entry != NULL);
    CHECK(hc_xml_first(root, "{}entry") == NULL);
    CHECK(hc_xml_attribute_count(entry) == 2);
    CHECK(strcmp(hc_xml_attribute(entry, "id", "urn:m"), "7") == 0);
    CHECK(strcmp(hc_xml_attribute(entry, "k", NULL), "a & b") == 0);
    CHECK(hc_xml_attribute(entry, "id", NULL) == NULL);
    const char *name, *ns, *value;
    CHECK_CODE(hc_xml_attribute_at(entry, 0, &name, &ns, &value), HC_OK);
    CHECK(strcmp(name, "id") == 0 && strcmp(ns, "urn:m") == 0 && strcmp(value, "7") == 0);
    CHECK_CODE(hc_xml_attribute_at(entry, 2, &name, &ns, &value), HC_EINVALID_ARG);
    CHECK(hc_xml_child_count(entry) == 4);
    CHECK(hc_xml_kind(hc_xml_child_at(entry, 1)) == HC_XML_TEXT);
    CHECK(hc_xml_child_at(entry, 4) == NULL);
    const char *text;
    size_t len;
    CHECK_CODE(hc_xml_text(hc_xml_first(entry, "title"), &text, &len), HC_OK);
    CHECK(len == 5 && strcmp(text, "T \xe2\x98\xba") == 0);
    CHECK_CODE(hc_xml_text(entry, &text, &len), HC_OK);
    CHECK(strcmp(text, "T \xe2\x98\xbaxy") == 0);
    uint8_t *out;
    /* A child declares what it inherits (here m, then the default namespace): it stands alone. */
    CHECK_CODE(hc_xml_serialize(hc_xml_first(entry, "{urn:m}e"), 0, &out, &len), HC_OK);
    CHECK(strcmp((char *) out, "<m:e xmlns:m=\"urn:m\"/>") == 0 && len == strlen((char *) out));
    hc_buffer_free(out);
    CHECK_CODE(hc_xml_serialize(hc_xml_first(entry, "title"), 0, &out, &len), HC_OK);
    CHECK(strcmp((char *) out, "<title xmlns=\"http://www.w3.org/2005/Atom\">T \xe2\x98\xba</title>") == 0);
    hc_buffer_free(out);
    CHECK_CODE(hc_xml_serialize(entry, 0, &out, &len), HC_OK);
    hc_xml *back = NULL;
    CHECK_CODE(hc_xml_parse(out, len, NULL, &back), HC_OK);
    hc_buffer_free(out);
    CHECK(back != NULL && strcmp(hc_xml_namespace(back), "http://www.w3.org/2005/Atom") == 0);
    CHECK(strcmp(hc_xml_attribute(back, "id", "urn:m"), "7") == 0);
    CHECK(strcmp(hc_xml_namespace(hc_xml_first(back, "{urn:m}e")), "urn:m") == 0);
    CHECK(strcmp(hc_xml_namespace(hc_xml_first(back, "title")), "http://www.w3.org/2005/Atom") == 0);
    hc_xml_free(back);
    /* The root declares its own namespaces once, nothing more. */
    CHECK_CODE(hc_xml_serialize(root, 0, &out, &len), HC_OK);
    CHECK(strncmp((char *) out, "<feed xmlns=\"http://www.w3.org/2005/Atom\" xmlns:m=\"urn:m\"><entry", 64) == 0);
    hc_buffer_free(out);
    hc_response_free(r);
    hc_handler_free(h);
}

static void test_parse_options_and_errors(void) {
    hc_xml_options *o = hc_xml_options_new();
    int64_t v;
    CHECK_CODE(hc_xml_options_get(o, HC_XML_MAX_DEPTH, &v), HC_OK);
    CHECK(v == 256);
    CHECK_CODE(hc_xml_options_get(o, HC_XML_MAX_ENTITY_EXPANSION, &v), HC_OK);
    CHECK(v == 1048576);
    CHECK_CODE(hc_xml_options_get(o, HC_XML_KEEP_COMMENTS, &v), HC_OK);
    CHECK(v == 0);
    CHECK_CODE(hc_xml_options_set(o, HC_XML_MAX_DEPTH, 300), HC_EINVALID_ARG);
    CHECK_CODE(hc_xml_options_set(o, 99, 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_xml_options_set(o, HC_XML_KEEP_COMMENTS, 1), HC_OK);
    CHECK_CODE(hc_xml_options_set(o, HC_XML_KEEP_CDATA, 1), HC_OK);
    const char *doc = "<a><!--c--><![CDATA[<x>]]></a>";
    hc_xml *root = NULL;
    CHECK_CODE(hc_xml_parse((const uint8_t *) doc, strlen(doc), o, &root), HC_OK);
    CHECK(hc_xml_child_count(root) == 2);
    CHECK(hc_xml_kind(hc_xml_child_at(root, 0)) == HC_XML_COMMENT);
    CHECK(hc_xml_kind(hc_xml_child_at(root, 1)) == HC_XML_CDATA);
    hc_xml_free(root);
    CHECK_CODE(hc_xml_parse((const uint8_t *) doc, strlen(doc), NULL, &root), HC_OK);
    CHECK(hc_xml_child_count(root) == 1);
    hc_xml_free(root);
    CHECK_CODE(hc_xml_options_set(o, HC_XML_MAX_DEPTH, 2), HC_OK);
    const char *deep = "<a><b><c/></b></a>";
    CHECK_CODE(hc_xml_parse((const uint8_t *) deep, strlen(deep), o, &root), HC_EDECODE);
    CHECK(root == NULL);
    CHECK(strstr(hc_error_message(hc_error_last()), "deeper than 2") != NULL);
    const char *bad = "<a>\n<b></c></a>";
    CHECK_CODE(hc_xml_parse((const uint8_t *) bad, strlen(bad), NULL, &root), HC_EDECODE);
    CHECK(strstr(hc_error_message(hc_error_last()), "line 2") != NULL);
    hc_xml_options_free(o);
}

static void test_hostile_documents(void) {
    char laughs[4096];
    int n = snprintf(laughs, sizeof laughs, "<!DOCTYPE l [<!ENTITY l0 \"lol\">");
    for (int i = 1; i < 10; i++) {
        n += snprintf(laughs + n, sizeof laughs - n, "<!ENTITY l%d \"", i);
        for (int j = 0; j < 10; j++) n += snprintf(laughs + n, sizeof laughs - n, "&l%d;", i - 1);
        n += snprintf(laughs + n, sizeof laughs - n, "\">");
    }
    snprintf(laughs + n, sizeof laughs - n, "]><l>&l9;</l>");
    hc_handler *h = hc_handler_xml_new(NULL);
    hc_response *r = NULL;
    CHECK_CODE(send_long(doc_path(laughs, "text/xml"), h, &r), HC_EDECODE);
    const char *xxe = "<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;</r>";
    CHECK_CODE(send_long(doc_path(xxe, "text/xml"), h, &r), HC_EDECODE);
    CHECK(strstr(hc_error_message(hc_error_last()), "external entity") != NULL);
    hc_handler_free(h);
}

struct seen { int count; char last_id[64]; int stop_at; };

static int on_element(void *userdata, size_t path_index, const hc_xml *element) {
    struct seen *s = userdata;
    if (path_index != 0) return 99;
    const char *id;
    hc_xml_text(hc_xml_first(element, "id"), &id, NULL);
    snprintf(s->last_id, sizeof s->last_id, "%s", id);
    /* A streamed element serializes standalone: the feed's namespaces are declared on it. */
    uint8_t *out;
    size_t len;
    if (hc_xml_serialize(element, 0, &out, &len) != HC_OK) return 98;
    int standalone = strncmp((char *) out, "<entry xmlns=\"http://www.w3.org/2005/Atom\" "
                             "xmlns:media=\"http://search.yahoo.com/mrss/\" xml:lang=\"en\">", 101) == 0;
    hc_buffer_free(out);
    if (!standalone) return 97;
    s->count++;
    return s->count == s->stop_at ? HC_XML_STOP : 0;
}

static void test_element_callbacks(void) {
    const char *paths[] = {"feed/{http://www.w3.org/2005/Atom}entry"};
    struct seen s = {0, "", -1};
    hc_handler *h = hc_handler_xml_elements_new(paths, 1, NULL, on_element, &s);
    hc_response *r = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/xml/feed?n=500", h, &r), HC_OK);
    size_t count = 0;
    int stopped = -1;
    CHECK_CODE(hc_response_xml_elements(r, &count, &stopped), HC_OK);
    CHECK(count == 500 && stopped == 0 && s.count == 500);
    CHECK(strcmp(s.last_id, "urn:uuid:00000499") == 0);
    hc_response_free(r);
    s.count = 0;
    s.stop_at = 3;
    CHECK_CODE(hc_test_send(client, "GET", "/xml/feed?n=1000000", h, &r), HC_OK);
    CHECK_CODE(hc_response_xml_elements(r, &count, &stopped), HC_OK);
    CHECK(count == 3 && stopped == 1);
    CHECK(hc_response_xml(r) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    hc_response_free(r);
    hc_handler_free(h);
    CHECK(hc_handler_xml_elements_new(NULL, 1, NULL, on_element, &s) == NULL);
    CHECK(hc_handler_xml_elements_new(paths, 1, NULL, NULL, &s) == NULL);
    const char *empty[] = {""};
    CHECK(hc_handler_xml_elements_new(empty, 1, NULL, on_element, &s) == NULL);
}

/* XML events: each event appended to a log as text, compared with the sequence expected. */
struct event_log { char text[8192]; size_t n; int events, stop_at, abort_at; };

static int logged(struct event_log *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int logged(struct event_log *l, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(l->text + l->n, sizeof l->text - l->n, fmt, ap);
    va_end(ap);
    if (k > 0) l->n = l->n + (size_t)k < sizeof l->text ? l->n + (size_t)k : sizeof l->text - 1;
    l->events++;
    if (l->events == l->abort_at) return 42;
    return l->events == l->stop_at ? HC_XML_STOP : 0;
}

static int on_start(void *u, const char *name, const char *ns, const char *prefix,
                    const char *const *attributes, size_t count, size_t depth) {
    if (count == 0 && attributes != NULL) return 77;   /* "NULL when there are none" */
    char attrs[1024] = "";
    size_t n = 0;
    for (size_t i = 0; i < count && n < sizeof attrs; i++) {
        const char *ans = attributes[3 * i + 1];
        n += (size_t)snprintf(attrs + n, sizeof attrs - n, " {%s}%s=%s", ans ? ans : "", attributes[3 * i],
                              attributes[3 * i + 2]);
    }
    return logged(u, "%zu<%s%s%s%s%s%s%s>", depth, prefix ? prefix : "", prefix ? ":" : "", ns ? "{" : "",
                  ns ? ns : "", ns ? "}" : "", name, attrs);
}

static int on_text(void *u, const char *data, size_t len, int cdata, size_t depth) {
    if (strlen(data) != len) return 78;                 /* NUL-terminated, len bytes */
    return logged(u, "%zu%s[%s]", depth, cdata ? "D" : "T", data);
}

static int on_end(void *u, const char *name, const char *ns, size_t depth) {
    return logged(u, "%zu</%s%s%s%s>", depth, ns ? "{" : "", ns ? ns : "", ns ? "}" : "", name);
}

static int on_comment(void *u, const char *data, size_t len, size_t depth) {
    if (strlen(data) != len) return 78;
    return logged(u, "%zuC[%s]", depth, data);
}

static const hc_xml_callbacks event_callbacks = {HC_XML_CALLBACKS_VERSION, on_start, on_text, on_end, on_comment};

static const char events_doc[] =
    "<?xml version='1.0'?><!-- before --><r xmlns='urn:d' xmlns:p='urn:p' a='1' p:b='&lt;2&gt;'>"
    "one &amp; <p:c>two<![CDATA[ <three> ]]></p:c><!-- four --><e xmlns=''/>tail</r>";

static void test_events_handler(void) {
    static const char *want =
        "1<{urn:d}r {}a=1 {urn:p}b=<2>>1T[one & ]2<p:{urn:p}c>2T[two <three> ]2</{urn:p}c>"
        "2<e>2</e>1T[tail]1</{urn:d}r>";
    hc_handler *h = NULL;
    /* Whole and one byte per chunk: the same events. */
    for (int chunk = 0; chunk <= 1; chunk++) {
        struct event_log log = {"", 0, 0, -1, -1};
        h = hc_handler_xml_events_new(NULL, &event_callbacks, &log);
        CHECK(h != NULL);
        static char path[17000];
        snprintf(path, sizeof path, "%s&chunk=%d", doc_path(events_doc, "application/xml"), chunk);
        hc_response *r = NULL;
        CHECK_CODE(send_long(path, h, &r), HC_OK);
        if (strcmp(log.text, want) != 0) fprintf(stderr, "events (chunk %d): %s\n", chunk, log.text);
        CHECK(strcmp(log.text, want) == 0);
        hc_response_free(r);
        hc_handler_free(h);
    }
    /* Stopping with HC_XML_STOP ends the transfer with success; another code is HC_ECALLBACK. */
    struct event_log log = {"", 0, 0, 3, -1};
    h = hc_handler_xml_events_new(NULL, &event_callbacks, &log);
    hc_response *r = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/xml/feed?n=1000000", h, &r), HC_OK);
    CHECK(log.events == 3);
    hc_response_free(r);
    hc_handler_free(h);
    struct event_log aborted = {"", 0, 0, -1, 5};
    h = hc_handler_xml_events_new(NULL, &event_callbacks, &aborted);
    CHECK_CODE(hc_test_send(client, "GET", "/xml/feed?n=100", h, &r), HC_ECALLBACK);
    CHECK(aborted.events == 5);
    hc_handler_free(h);
    /* Hostile input: the security of the tree handler. */
    struct event_log hostile = {"", 0, 0, -1, -1};
    h = hc_handler_xml_events_new(NULL, &event_callbacks, &hostile);
    const char *xxe = "<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;</r>";
    CHECK_CODE(send_long(doc_path(xxe, "text/xml"), h, &r), HC_EDECODE);
    CHECK(strstr(hc_error_message(hc_error_last()), "external entity") != NULL);
    hc_handler_free(h);
}

static void test_events_parse_and_options(void) {
    hc_xml_options *o = hc_xml_options_new();
    hc_xml_options_set(o, HC_XML_KEEP_COMMENTS, 1);
    hc_xml_options_set(o, HC_XML_KEEP_CDATA, 1);
    struct event_log log = {"", 0, 0, -1, -1};
    CHECK_CODE(hc_xml_events_parse((const uint8_t *)events_doc, strlen(events_doc), o, &event_callbacks, &log), HC_OK);
    static const char *want =
        "1<{urn:d}r {}a=1 {urn:p}b=<2>>1T[one & ]2<p:{urn:p}c>2T[two]2D[ <three> ]2</{urn:p}c>"
        "1C[ four ]2<e>2</e>1T[tail]1</{urn:d}r>";
    if (strcmp(log.text, want) != 0) fprintf(stderr, "events (comments, CDATA): %s\n", log.text);
    CHECK(strcmp(log.text, want) == 0);
    /* Only the callbacks given are called. */
    hc_xml_callbacks ends_only = {HC_XML_CALLBACKS_VERSION, NULL, NULL, on_end, NULL};
    struct event_log ends = {"", 0, 0, -1, -1};
    CHECK_CODE(hc_xml_events_parse((const uint8_t *)events_doc, strlen(events_doc), NULL, &ends_only, &ends), HC_OK);
    CHECK(strcmp(ends.text, "2</{urn:p}c>2</e>1</{urn:d}r>") == 0);
    /* A malformed document: the events before the bad byte, then HC_EDECODE. */
    struct event_log bad = {"", 0, 0, -1, -1};
    const char *broken = "<a><b>x</c></a>";
    CHECK_CODE(hc_xml_events_parse((const uint8_t *)broken, strlen(broken), NULL, &event_callbacks, &bad), HC_EDECODE);
    CHECK(strncmp(bad.text, "1<a>2<b>", 8) == 0);
    struct event_log deep = {"", 0, 0, -1, -1};
    hc_xml_options_set(o, HC_XML_MAX_DEPTH, 2);
    CHECK_CODE(hc_xml_events_parse((const uint8_t *)"<a><b><c/></b></a>", 18, o, &event_callbacks, &deep), HC_EDECODE);
    CHECK_CODE(hc_xml_events_parse((const uint8_t *)"", 0, NULL, &event_callbacks, &deep), HC_EDECODE);
    hc_xml_callbacks wrong = event_callbacks;
    wrong.version = 2;
    CHECK_CODE(hc_xml_events_parse((const uint8_t *)"<a/>", 4, NULL, &wrong, &deep), HC_EINVALID_ARG);
    hc_xml_options_free(o);
}

/* AFNetworking's compound serializer: JSON, XML and property lists chosen by Content-Type (the
 * first whose types accept the response takes it; XML before plist, whose defaults include
 * text/xml). The getters look through the compound. */
static void test_compound_chooses_json_xml_or_plist(void) {
    hc_handler *parts[] = {hc_handler_json_new(NULL), hc_handler_xml_new(NULL), hc_handler_plist_new(NULL)};
    hc_handler *h = hc_handler_compound_new(parts, 3);
    for (int i = 0; i < 3; i++) hc_handler_free(parts[i]);
    hc_response *r = NULL;
    int64_t n = 0;
    CHECK_CODE(hc_test_send(client, "GET", "/xml/doc?ctype=application/json&doc=%7B%22a%22%3A%207%7D", h, &r), HC_OK);
    CHECK(hc_response_handler_index(r) == 0);
    CHECK_CODE(hc_json_int64(hc_json_get(hc_response_json(r), "a"), &n), HC_OK);
    CHECK(n == 7);
    hc_response_free(r);
    CHECK_CODE(send_long(doc_path("<r xmlns='urn:r'><a>t</a></r>", "text/xml"), h, &r), HC_OK);
    CHECK(hc_response_handler_index(r) == 1);
    CHECK(hc_response_xml(r) && strcmp(hc_xml_namespace(hc_response_xml(r)), "urn:r") == 0);
    CHECK(hc_response_plist(r) == NULL);
    hc_response_free(r);
    /* The same plist as XML (application/x-plist) and binary (application/x-bplist). */
    const char *xml_plist = "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key><integer>7</integer>"
                            "<key>s</key><string>caf\xc3\xa9</string></dict></plist>";
    hc_plist *value = NULL;
    CHECK_CODE(hc_plist_parse((const uint8_t *)xml_plist, strlen(xml_plist), NULL, &value), HC_OK);
    uint8_t *binary = NULL;
    size_t binary_len = 0;
    CHECK_CODE(hc_plist_serialize(value, HC_PLIST_BINARY, &binary, &binary_len), HC_OK);
    static char path[4096];
    for (int round = 0; round < 2; round++) {
        const uint8_t *body = round == 0 ? (const uint8_t *)xml_plist : binary;
        size_t len = round == 0 ? strlen(xml_plist) : binary_len;
        int k = snprintf(path, sizeof path, "/plist?ctype=%s&hex=", round == 0 ? "application/x-plist" : "application/x-bplist");
        for (size_t i = 0; i < len && k < (int)sizeof path - 3; i++) k += snprintf(path + k, sizeof path - k, "%02x", body[i]);
        CHECK_CODE(send_long(path, h, &r), HC_OK);
        CHECK(hc_response_handler_index(r) == 2);
        n = 0;
        CHECK_CODE(hc_plist_int64(hc_plist_get(hc_response_plist(r), "a"), &n), HC_OK);
        const char *s = NULL;
        size_t slen = 0;
        CHECK_CODE(hc_plist_string(hc_plist_get(hc_response_plist(r), "s"), &s, &slen), HC_OK);
        CHECK(n == 7 && s && strcmp(s, "caf\xc3\xa9") == 0);
        CHECK(hc_response_xml(r) == NULL);
        hc_response_free(r);
    }
    hc_buffer_free(binary);
    hc_plist_free(value);
    CHECK_CODE(hc_test_send(client, "GET", "/xml/doc?ctype=text/plain&doc=x", h, &r), HC_EUNACCEPTABLE_CONTENT_TYPE);
    hc_handler_free(h);
}

static void test_null_safety(void) {
    CHECK(hc_xml_kind(NULL) == HC_XML_INVALID);
    CHECK(hc_xml_name(NULL) == NULL);
    CHECK(hc_xml_child_count(NULL) == 0);
    CHECK(hc_xml_child_at(NULL, 0) == NULL);
    CHECK(hc_xml_first(NULL, "a") == NULL);
    CHECK_CODE(hc_xml_text(NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_xml_parse(NULL, 3, NULL, NULL), HC_EINVALID_ARG);
    CHECK(hc_response_xml(NULL) == NULL);
    CHECK_CODE(hc_response_xml_elements(NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_xml_options_set(NULL, HC_XML_MAX_DEPTH, 3), HC_EINVALID_ARG);
    hc_xml_free(NULL);
    hc_xml_options_free(NULL);
}

int main(void) {
    hc_test_server_start();
    client = hc_client_new();
    CHECK(client != NULL);
    test_tree_handler();
    test_parse_options_and_errors();
    test_hostile_documents();
    test_element_callbacks();
    test_events_handler();
    test_events_parse_and_options();
    test_compound_chooses_json_xml_or_plist();
    test_null_safety();
    hc_client_free(client);
    return hc_test_finish();
}
