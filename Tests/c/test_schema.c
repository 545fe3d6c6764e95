/* JSON Schema from C: the official JSON-Schema-Test-Suite (draft 2020-12) through the C ABI,
 * violations on errors, a schema on the JSON tree and items handlers, and request bodies. */
#include "schemasuite.h"

static void run_suite(void) {
    char suite[3072];
    if (!find_suite(suite, sizeof suite, "tests/draft2020-12", 0)) {
        printf("SKIP JSON-Schema-Test-Suite: absent (../shared/conformance, $HC_CONFORMANCE, /work/shared/conformance)\n");
        return;
    }
    suite_begin(suite, 0);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/draft2020-12", suite);
    int total = 0, passed = 0;
    run_folder(dir, NULL, "", 0, 0, &total, &passed);
    hc_schema_options_free(suite_opts);
    printf("JSON-Schema-Test-Suite draft2020-12 via C: %d of %d passed\n", passed, total);
    CHECK(total > 1200);
    CHECK(passed == total);
}

static hc_schema *schema_of(const char *text) {
    return hc_schema_new_from_json((const uint8_t *)text, strlen(text), NULL);
}

static void test_violations_name_the_place(void) {
    hc_schema *s = schema_of("{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},"
                             "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},\"required\":[\"id\"]}");
    CHECK(s != NULL);
    const char *bad = "{\"id\":\"x\",\"tags\":[\"a\",2]}";
    CHECK_CODE(hc_schema_validate(s, (const uint8_t *)bad, strlen(bad), 0), HC_EDECODE);
    const hc_error *err = hc_error_last();
    CHECK(hc_error_sub_kind(err) && strcmp(hc_error_sub_kind(err), "schema") == 0);
    CHECK(hc_error_schema_count(err) == 1);
    CHECK(strcmp(hc_error_schema_instance_path(err, 0), "/id") == 0);
    CHECK(strcmp(hc_error_schema_path(err, 0), "/properties/id/type") == 0);
    CHECK(strcmp(hc_error_schema_keyword(err, 0), "type") == 0);
    CHECK(strstr(hc_error_schema_message(err, 0), "integer") != NULL);
    CHECK(hc_error_schema_instance_path(err, 1) == NULL);

    CHECK_CODE(hc_schema_validate(s, (const uint8_t *)bad, strlen(bad), HC_SCHEMA_ALL_ERRORS), HC_EDECODE);
    err = hc_error_last();
    CHECK(hc_error_schema_count(err) == 2);
    CHECK(strcmp(hc_error_schema_instance_path(err, 1), "/tags/1") == 0);
    CHECK(strcmp(hc_error_schema_path(err, 1), "/properties/tags/items/type") == 0);

    const char *good = "{\"id\":3,\"tags\":[]}";
    CHECK_CODE(hc_schema_validate(s, (const uint8_t *)good, strlen(good), 0), HC_OK);
    /* A parse failure is a decode error without violations. */
    CHECK_CODE(hc_schema_validate(s, (const uint8_t *)"{", 1, 0), HC_EDECODE);
    CHECK(hc_error_sub_kind(hc_error_last()) == NULL);
    CHECK(hc_error_schema_count(hc_error_last()) == 0);
    hc_schema_free(s);

    /* Bad schemas and arguments. */
    CHECK(schema_of("{\"type\":\"nope\"}") == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    CHECK(schema_of("{\"$ref\":\"http://example.com/elsewhere.json\"}") == NULL);
    CHECK(strstr(hc_error_message(hc_error_last()), "nothing is fetched") != NULL);
    CHECK(schema_of("{\"pattern\":\"(\"}") == NULL);
    CHECK_CODE(hc_schema_validate(NULL, (const uint8_t *)"1", 1, 0), HC_EINVALID_ARG);
    CHECK_CODE(hc_handler_json_set_schema(NULL, NULL, 0), HC_EINVALID_ARG);
    hc_schema_free(NULL);
    hc_schema_options_free(NULL);
}

static void test_format_assertion_is_an_option(void) {
    const char *text = "{\"format\":\"date-time\"}";
    hc_schema *annotation = schema_of(text);
    hc_schema_options *o = hc_schema_options_new();
    CHECK_CODE(hc_schema_options_set_assert_format(o, 1), HC_OK);
    hc_schema *assertion = hc_schema_new_from_json((const uint8_t *)text, strlen(text), o);
    hc_schema_options_free(o);
    const char *bad = "\"2024-02-30T10:00:00Z\"", *good = "\"2024-02-29T10:00:00.5+01:00\"";
    CHECK_CODE(hc_schema_validate(annotation, (const uint8_t *)bad, strlen(bad), 0), HC_OK);
    CHECK_CODE(hc_schema_validate(assertion, (const uint8_t *)bad, strlen(bad), 0), HC_EDECODE);
    CHECK(strcmp(hc_error_schema_keyword(hc_error_last(), 0), "format") == 0);
    CHECK_CODE(hc_schema_validate(assertion, (const uint8_t *)good, strlen(good), 0), HC_OK);
    hc_schema_free(annotation);
    hc_schema_free(assertion);
}

static void test_json_handler_validates_the_body(hc_client *client) {
    hc_schema *s = schema_of("{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"array\",\"maxItems\":2}}}");
    hc_handler *h = hc_handler_json_new(NULL);
    CHECK_CODE(hc_handler_json_set_schema(h, s, 0), HC_OK);
    hc_schema_free(s); /* the handler keeps it */
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/json", h, &resp), HC_EDECODE);
    const hc_error *err = hc_error_last();
    CHECK(hc_error_status(err) == 200);
    CHECK(hc_error_schema_count(err) == 1);
    CHECK(strcmp(hc_error_schema_instance_path(err, 0), "/n") == 0);
    CHECK(strcmp(hc_error_schema_keyword(err, 0), "maxItems") == 0);
    const uint8_t *body = NULL;
    size_t body_len = 0;
    CHECK_CODE(hc_error_body(err, &body, &body_len), HC_OK);
    CHECK(body_len > 0 && memmem(body, body_len, "hello", 5) != NULL);
    CHECK(hc_error_header(err, "Content-Type") != NULL);
    CHECK(resp == NULL);
    /* Valid: content as usual. */
    CHECK_CODE(hc_test_send(client, "GET", "/json?doc=%7B%22n%22%3A%5B1%5D%7D", h, &resp), HC_OK);
    CHECK(resp && hc_response_json(resp) != NULL);
    hc_response_free(resp);
    /* Removing the schema. */
    CHECK_CODE(hc_handler_json_set_schema(h, NULL, 0), HC_OK);
    resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/json", h, &resp), HC_OK);
    hc_response_free(resp);
    hc_handler_free(h);

    /* Other handlers refuse a schema. */
    hc_handler *bytes = hc_handler_bytes_new(0);
    hc_schema *any = schema_of("true");
    CHECK_CODE(hc_handler_json_set_schema(bytes, any, 0), HC_EINVALID_ARG);
    hc_handler_free(bytes);
    hc_schema_free(any);
}

struct items { int seen; int sum; };

static int on_item(void *userdata, size_t prefix, const hc_json *value) {
    (void)prefix;
    struct items *it = userdata;
    int64_t v = 0;
    if (hc_json_int64(hc_json_get(value, "v"), &v) == HC_OK) it->sum += (int)v;
    it->seen++;
    return 0;
}

static void test_items_are_validated_before_the_callback(hc_client *client) {
    const char *prefixes[] = {"item"};
    hc_schema *s = schema_of("{\"required\":[\"v\"],\"properties\":{\"v\":{\"type\":\"integer\"}}}");
    /* [{"v":1},{"w":2},{"v":3}] */
    const char *path = "/json?doc=%5B%7B%22v%22%3A1%7D%2C%7B%22w%22%3A2%7D%2C%7B%22v%22%3A3%7D%5D";
    struct items it = {0, 0};
    hc_handler *h = hc_handler_json_items_new(prefixes, 1, NULL, on_item, &it);
    CHECK_CODE(hc_handler_json_set_schema(h, s, 0), HC_OK);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", path, h, &resp), HC_EDECODE);
    CHECK(it.seen == 1);
    CHECK(hc_error_schema_count(hc_error_last()) == 1);
    CHECK(strcmp(hc_error_schema_keyword(hc_error_last(), 0), "required") == 0);
    CHECK_CODE(hc_handler_json_set_schema(h, s, HC_SCHEMA_SKIP_INVALID), HC_OK);
    it.seen = it.sum = 0;
    CHECK_CODE(hc_test_send(client, "GET", path, h, &resp), HC_OK);
    CHECK(it.seen == 2 && it.sum == 4);
    hc_response_free(resp);
    hc_handler_free(h);
    hc_schema_free(s);
}

static void test_request_body_is_validated_before_sending(void) {
    hc_schema *s = schema_of("{\"type\":\"object\",\"required\":[\"name\"]}");
    hc_request *req = hc_request_new("POST", hc_url("/echo"));
    const char *bad = "{\"nam\":1}", *good = "{\"name\":\"x\"}";
    CHECK_CODE(hc_request_set_json_body_schema(req, (const uint8_t *)bad, strlen(bad), s, 0), HC_EINVALID_ARG);
    CHECK(hc_error_schema_count(hc_error_last()) == 1);
    CHECK(strcmp(hc_error_schema_keyword(hc_error_last(), 0), "required") == 0);
    CHECK_CODE(hc_request_set_json_body_schema(req, (const uint8_t *)"{", 1, s, 0), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_json_body_schema(req, (const uint8_t *)good, strlen(good), s, 0), HC_OK);
    CHECK_CODE(hc_request_set_json_body_schema(req, (const uint8_t *)good, strlen(good), NULL, 0), HC_EINVALID_ARG);
    hc_request_free(req);
    hc_schema_free(s);
}

/* Property lists: a schema written as a plist, dates matched by "format": "date-time", data by
 * "contentEncoding": "base64", on values, the plist handler and request bodies. */
static const char *plist_schema_xml =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict>"
    "<key>type</key><string>object</string>"
    "<key>required</key><array><string>when</string><string>blob</string></array>"
    "<key>properties</key><dict>"
    "<key>when</key><dict><key>type</key><string>string</string><key>format</key><string>date-time</string></dict>"
    "<key>blob</key><dict><key>type</key><string>string</string><key>contentEncoding</key><string>base64</string></dict>"
    "<key>n</key><dict><key>type</key><string>integer</string><key>maximum</key><integer>9</integer></dict>"
    "</dict></dict></plist>";

static hc_plist *plist_of(const char *body) {
    char doc[1024];
    snprintf(doc, sizeof doc, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict>%s</dict></plist>", body);
    hc_plist *v = NULL;
    CHECK_CODE(hc_plist_parse((const uint8_t *)doc, strlen(doc), NULL, &v), HC_OK);
    return v;
}

static const char *GOOD_PLIST = "<key>when</key><date>2024-05-01T12:00:00Z</date><key>blob</key><data>aGVsbG8=</data>"
                                "<key>n</key><integer>3</integer>";

static void check_plist_violation(const hc_schema *s, const char *body, const char *pointer, const char *keyword) {
    hc_plist *v = plist_of(body);
    CHECK_CODE(hc_schema_validate_plist(s, v, 0), HC_EDECODE);
    const hc_error *err = hc_error_last();
    CHECK(hc_error_schema_count(err) == 1);
    const char *got_pointer = hc_error_schema_instance_path(err, 0), *got_keyword = hc_error_schema_keyword(err, 0);
    CHECK(got_pointer && strcmp(got_pointer, pointer) == 0);
    CHECK(got_keyword && strcmp(got_keyword, keyword) == 0);
    hc_plist_free(v);
}

static void test_plist_values_match_schemas(void) {
    hc_schema_options *o = hc_schema_options_new();
    CHECK_CODE(hc_schema_options_set_assert_format(o, 1), HC_OK);
    hc_schema *s = hc_schema_new_from_plist((const uint8_t *)plist_schema_xml, strlen(plist_schema_xml), o);
    hc_schema_options_free(o);
    CHECK(s != NULL);
    if (!s) return;
    hc_plist *good = plist_of(GOOD_PLIST);
    CHECK_CODE(hc_schema_validate_plist(s, good, 0), HC_OK);
    /* Data is what contentEncoding base64 matches: a string there fails. */
    check_plist_violation(s, "<key>when</key><date>2024-05-01T12:00:00Z</date><key>blob</key><string>aGVsbG8=</string>",
                          "/blob", "contentEncoding");
    /* A date is a date-time; other strings and data are not. */
    check_plist_violation(s, "<key>when</key><string>yesterday</string><key>blob</key><data>aGVsbG8=</data>",
                          "/when", "format");
    check_plist_violation(s, "<key>when</key><data>aGVsbG8=</data><key>blob</key><data>aGVsbG8=</data>", "/when", "format");
    check_plist_violation(s, "<key>when</key><date>2024-05-01T12:00:00Z</date><key>blob</key><data>aGVsbG8=</data>"
                             "<key>n</key><integer>10</integer>", "/n", "maximum");
    check_plist_violation(s, "<key>blob</key><data>aGVsbG8=</data>", "", "required");

    /* Format annotations: the date is listed under date-time. */
    uint8_t *ann = NULL;
    size_t ann_len = 0;
    CHECK_CODE(hc_schema_plist_format_annotations(s, good, &ann, &ann_len), HC_OK);
    CHECK(ann && memmem(ann, ann_len, "[\"/when\",\"date-time\"]", 21) != NULL);
    hc_buffer_free(ann);
    hc_plist_free(good);

    /* The same schema written as JSON validates the same plists. */
    hc_schema *j = schema_of("{\"properties\":{\"blob\":{\"contentEncoding\":\"base64\"}}}");
    hc_plist *str = plist_of("<key>blob</key><string>aGVsbG8=</string>");
    CHECK_CODE(hc_schema_validate_plist(j, str, 0), HC_EDECODE);
    const char *as_json = "{\"blob\":\"aGVsbG8=\"}"; /* JSON documents: contentEncoding is an annotation */
    CHECK_CODE(hc_schema_validate(j, (const uint8_t *)as_json, strlen(as_json), 0), HC_OK);
    hc_plist_free(str);
    hc_schema_free(j);

    /* Bad documents and arguments. */
    CHECK(hc_schema_new_from_plist((const uint8_t *)"{}", 2, NULL) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    const char *bad_schema = "<plist><dict><key>type</key><string>nope</string></dict></plist>";
    CHECK(hc_schema_new_from_plist((const uint8_t *)bad_schema, strlen(bad_schema), NULL) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    CHECK_CODE(hc_schema_validate_plist(s, NULL, 0), HC_EINVALID_ARG);
    hc_schema_free(s);
}

/* "/plist?hex=..." for a plist document whose dict holds `body`. */
static void plist_url(char *out, size_t size, const char *body) {
    char doc[1024];
    snprintf(doc, sizeof doc, "<plist version=\"1.0\"><dict>%s</dict></plist>", body);
    size_t n = (size_t)snprintf(out, size, "/plist?hex=");
    for (const unsigned char *p = (const unsigned char *)doc; *p && n + 3 < size; p++) n += (size_t)snprintf(out + n, size - n, "%02x", *p);
}

static void test_plist_handler_and_body_are_validated(hc_client *client) {
    hc_schema *s = hc_schema_new_from_plist((const uint8_t *)plist_schema_xml, strlen(plist_schema_xml), NULL);
    hc_handler *h = hc_handler_plist_new(NULL);
    CHECK_CODE(hc_handler_plist_set_schema(h, s, HC_SCHEMA_ALL_ERRORS), HC_OK);
    char url[4096];
    plist_url(url, sizeof url, "<key>when</key><integer>1</integer><key>blob</key><string>x</string>");
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", url, h, &resp), HC_EDECODE);
    const hc_error *err = hc_error_last();
    CHECK(hc_error_status(err) == 200);
    CHECK(hc_error_schema_count(err) == 2);
    const uint8_t *body = NULL;
    size_t body_len = 0;
    CHECK_CODE(hc_error_body(err, &body, &body_len), HC_OK);
    CHECK(body_len > 0 && memmem(body, body_len, "<plist", 6) != NULL);
    CHECK(resp == NULL);
    plist_url(url, sizeof url, GOOD_PLIST);
    CHECK_CODE(hc_test_send(client, "GET", url, h, &resp), HC_OK);
    CHECK(resp && hc_plist_type(hc_plist_get(hc_response_plist(resp), "blob")) == HC_PLIST_DATA);
    hc_response_free(resp);
    CHECK_CODE(hc_handler_plist_set_schema(h, NULL, 0), HC_OK);
    plist_url(url, sizeof url, "<key>x</key><true/>");
    resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", url, h, &resp), HC_OK);
    hc_response_free(resp);
    hc_handler_free(h);
    hc_handler *json = hc_handler_json_new(NULL);
    CHECK_CODE(hc_handler_plist_set_schema(json, s, 0), HC_EINVALID_ARG);
    hc_handler_free(json);

    /* Request bodies: refused before anything is sent, then sent and echoed back. */
    hc_request *req = hc_request_new("POST", hc_url("/plist"));
    hc_plist *bad = plist_of("<key>when</key><date>2024-05-01T12:00:00Z</date>");
    CHECK_CODE(hc_request_set_plist_value_schema(req, bad, HC_PLIST_BINARY, s, 0), HC_EINVALID_ARG);
    CHECK(hc_error_schema_count(hc_error_last()) == 1);
    CHECK(strcmp(hc_error_schema_keyword(hc_error_last(), 0), "required") == 0);
    hc_plist *good = plist_of(GOOD_PLIST);
    CHECK_CODE(hc_request_set_plist_value_schema(req, good, HC_PLIST_BINARY, s, 0), HC_OK);
    CHECK_CODE(hc_request_set_plist_value_schema(req, good, 7, s, 0), HC_EINVALID_ARG);
    hc_handler *back = hc_handler_plist_new(NULL);
    CHECK_CODE(hc_handler_plist_set_schema(back, s, 0), HC_OK);
    CHECK_CODE(hc_request_set_handler(req, back), HC_OK);
    resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    double when = 0;
    CHECK_CODE(hc_plist_date(hc_plist_get(hc_response_plist(resp), "when"), &when), HC_OK);
    CHECK(when == 1714564800.0);
    hc_response_free(resp);
    hc_handler_free(back);
    hc_plist_free(bad);
    hc_plist_free(good);
    hc_request_free(req);
    hc_schema_free(s);
}

int main(void) {
    run_suite();
    test_violations_name_the_place();
    test_format_assertion_is_an_option();
    test_plist_values_match_schemas();
    hc_test_server_start();
    hc_client *client = hc_client_new();
    test_json_handler_validates_the_body(client);
    test_items_are_validated_before_the_callback(client);
    test_request_body_is_validated_before_sending();
    test_plist_handler_and_body_are_validated(client);
    hc_client_free(client);
    return hc_test_finish();
}
