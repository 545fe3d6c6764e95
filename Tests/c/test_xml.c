/* XML from C: the tree API, the element-callback API, parsing, serializing, options, hostile
 * documents and NULL safety, against the local test server. */
#include "testutil.h"

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
    CHECK_CODE(hc_xml_serialize(hc_xml_first(entry, "{urn:m}e"), 0, &out, &len), HC_OK);
    CHECK(strcmp((char *) out, "<m:e/>") == 0 && len == 6);
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
    test_null_safety();
    hc_client_free(client);
    return hc_test_finish();
}
