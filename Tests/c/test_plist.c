/* Property lists from C: the builder, both formats written and read back, a request body sent to
 * the test server and read back through the plist handler, value getters, errors, hostile input,
 * options and their defaults, NULL safety. */
#include "testutil.h"
#include <httpcontent_binding.h>
#include <stdint.h>

static hc_client *client;

#define KEY(b, k) hc_plist_builder_key((b), (k), strlen(k))

/* {"s": "héllo", "min": INT64_MIN, "umax": UINT64_MAX, "r": 3.0, "t": true, "d1900": 1900-01-01,
 *  "d2100": 2100-01-01, "data": 00 01 FF, "uid": UID 42, "a": [1, [], {}]} */
static hc_plist *build_document(int with_uid) {
    hc_plist_builder *b = hc_plist_builder_new();
    CHECK(b != NULL);
    CHECK_CODE(hc_plist_builder_begin_dict(b), HC_OK);
    CHECK_CODE(KEY(b, "s"), HC_OK);
    CHECK_CODE(hc_plist_builder_string(b, "h\xc3\xa9llo", 6), HC_OK);
    CHECK_CODE(KEY(b, "min"), HC_OK);
    CHECK_CODE(hc_plist_builder_int64(b, INT64_MIN), HC_OK);
    CHECK_CODE(KEY(b, "umax"), HC_OK);
    CHECK_CODE(hc_plist_builder_uint64(b, UINT64_MAX), HC_OK);
    CHECK_CODE(KEY(b, "r"), HC_OK);
    CHECK_CODE(hc_plist_builder_real(b, 3.0), HC_OK);
    CHECK_CODE(KEY(b, "t"), HC_OK);
    CHECK_CODE(hc_plist_builder_bool(b, 1), HC_OK);
    CHECK_CODE(KEY(b, "d1900"), HC_OK);
    CHECK_CODE(hc_plist_builder_date(b, -2208988800.0), HC_OK);
    CHECK_CODE(KEY(b, "d2100"), HC_OK);
    CHECK_CODE(hc_plist_builder_date(b, 4102444800.0), HC_OK);
    CHECK_CODE(KEY(b, "data"), HC_OK);
    CHECK_CODE(hc_plist_builder_data(b, (const uint8_t *)"\x00\x01\xff", 3), HC_OK);
    if (with_uid) {
        CHECK_CODE(KEY(b, "uid"), HC_OK);
        CHECK_CODE(hc_plist_builder_uid(b, 42), HC_OK);
    }
    CHECK_CODE(KEY(b, "a"), HC_OK);
    CHECK_CODE(hc_plist_builder_begin_array(b), HC_OK);
    CHECK_CODE(hc_plist_builder_int64(b, 1), HC_OK);
    CHECK_CODE(hc_plist_builder_begin_array(b), HC_OK);
    CHECK_CODE(hc_plist_builder_end_array(b), HC_OK);
    CHECK_CODE(hc_plist_builder_begin_dict(b), HC_OK);
    CHECK_CODE(hc_plist_builder_end_dict(b), HC_OK);
    CHECK_CODE(hc_plist_builder_end_array(b), HC_OK);
    /* Misuse leaves the builder as it was. */
    CHECK_CODE(hc_plist_builder_int64(b, 5), HC_EINVALID_ARG);      /* a value without its key */
    CHECK_CODE(hc_plist_builder_end_array(b), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_builder_end_dict(b), HC_OK);
    CHECK_CODE(hc_plist_builder_int64(b, 5), HC_EINVALID_ARG);      /* a second top-level value */
    hc_plist *doc = NULL;
    CHECK_CODE(hc_plist_builder_finish(b, &doc), HC_OK);
    hc_plist_builder_free(b);
    return doc;
}

static void check_document(const hc_plist *root, int with_uid) {
    CHECK(hc_plist_type(root) == HC_PLIST_DICT);
    CHECK(hc_plist_dict_size(root) == (size_t)(with_uid ? 10 : 9));
    const char *s = NULL; size_t len = 0;
    CHECK_CODE(hc_plist_string(hc_plist_get(root, "s"), &s, &len), HC_OK);
    CHECK(len == 6 && memcmp(s, "h\xc3\xa9llo", 6) == 0);
    int64_t i = 0; uint64_t u = 0; double d = 0; int b = 0;
    CHECK(hc_plist_type(hc_plist_get(root, "min")) == HC_PLIST_INT);
    CHECK_CODE(hc_plist_int64(hc_plist_get(root, "min"), &i), HC_OK);
    CHECK(i == INT64_MIN);
    CHECK_CODE(hc_plist_uint64(hc_plist_get(root, "min"), &u), HC_EINVALID_ARG);
    CHECK(hc_plist_type(hc_plist_get(root, "umax")) == HC_PLIST_UINT);
    CHECK_CODE(hc_plist_uint64(hc_plist_get(root, "umax"), &u), HC_OK);
    CHECK(u == UINT64_MAX);
    CHECK_CODE(hc_plist_int64(hc_plist_get(root, "umax"), &i), HC_EINVALID_ARG);
    CHECK(hc_plist_type(hc_plist_get(root, "r")) == HC_PLIST_REAL);
    CHECK_CODE(hc_plist_real(hc_plist_get(root, "r"), &d), HC_OK);
    CHECK(d == 3.0);
    CHECK_CODE(hc_plist_bool(hc_plist_get(root, "t"), &b), HC_OK);
    CHECK(b == 1);
    CHECK_CODE(hc_plist_date(hc_plist_get(root, "d1900"), &d), HC_OK);
    CHECK(d == -2208988800.0);
    CHECK_CODE(hc_plist_date(hc_plist_get(root, "d2100"), &d), HC_OK);
    CHECK(d == 4102444800.0);
    const uint8_t *data = NULL;
    CHECK_CODE(hc_plist_data(hc_plist_get(root, "data"), &data, &len), HC_OK);
    CHECK(len == 3 && memcmp(data, "\x00\x01\xff", 3) == 0);
    if (with_uid) {
        CHECK(hc_plist_type(hc_plist_get(root, "uid")) == HC_PLIST_UID);
        CHECK_CODE(hc_plist_uid(hc_plist_get(root, "uid"), &u), HC_OK);
        CHECK(u == 42);
    }
    const hc_plist *a = hc_plist_get(root, "a");
    CHECK(hc_plist_array_length(a) == 3);
    CHECK(hc_plist_type(hc_plist_array_at(a, 1)) == HC_PLIST_ARRAY);
    CHECK(hc_plist_type(hc_plist_get(root, "a.2")) == HC_PLIST_DICT);
    CHECK(hc_plist_array_at(a, 3) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    const char *key = NULL; size_t key_len = 0;
    CHECK(hc_plist_dict_member_at(root, 0, &key, &key_len) == hc_plist_get(root, "s")); /* same borrowed handle */
    CHECK(key_len == 1 && strcmp(key, "s") == 0);
    CHECK(hc_plist_get(root, "nope") == NULL);
}

static void test_builder_and_both_formats(void) {
    hc_plist *doc = build_document(1);
    check_document(doc, 1);
    uint8_t *bytes = NULL; size_t len = 0;
    CHECK_CODE(hc_plist_serialize(doc, HC_PLIST_BINARY, &bytes, &len), HC_OK);
    CHECK(len > 8 && memcmp(bytes, "bplist00", 8) == 0);
    hc_plist *back = NULL;
    CHECK_CODE(hc_plist_parse(bytes, len, NULL, &back), HC_OK);
    check_document(back, 1);
    hc_plist_free(back);
    hc_buffer_free(bytes);
    hc_plist_free(doc);

    doc = build_document(0);
    CHECK_CODE(hc_plist_serialize(doc, HC_PLIST_XML, &bytes, &len), HC_OK);
    CHECK(len > 5 && memcmp(bytes, "<?xml", 5) == 0);
    CHECK_CODE(hc_plist_parse(bytes, len, NULL, &back), HC_OK);
    check_document(back, 0);
    hc_plist_free(back);
    hc_buffer_free(bytes);
    hc_plist_free(doc);
}

static void test_request_body_and_handler(void) {
    hc_plist *doc = build_document(1);
    hc_request *req = hc_request_new("POST", hc_url("/plist?ctype=application/x-bplist"));
    CHECK_CODE(hc_request_set_plist_value(req, doc, HC_PLIST_BINARY), HC_OK);
    hc_plist_free(doc);  /* the body is the request's own */
    hc_handler *h = hc_handler_plist_new(NULL);
    hc_request_set_handler(req, h);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    const hc_plist *root = hc_response_plist(resp);
    CHECK(root != NULL);
    if (root) check_document(root, 1);
    hc_response_free(resp);
    hc_request_free(req);

    /* The content type each format is sent with. */
    doc = build_document(0);
    req = hc_request_new("POST", hc_url("/echo/raw"));
    CHECK_CODE(hc_request_set_plist_value(req, doc, HC_PLIST_XML), HC_OK);
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    const char *ctype = hc_response_header(resp, "X-Request-Content-Type");
    CHECK(ctype && strcmp(ctype, "application/x-plist") == 0);
    hc_response_free(resp);
    hc_request_free(req);
    CHECK_CODE(hc_request_set_plist_value(NULL, doc, HC_PLIST_XML), HC_EINVALID_ARG);
    hc_plist_free(doc);

    /* Another handler's response. */
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/3", NULL, &resp), HC_OK);
    CHECK(hc_response_plist(resp) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    hc_response_free(resp);
    hc_handler_free(h);
}

static void test_errors_and_hostile_input(void) {
    hc_handler *h = hc_handler_plist_new(NULL);
    hc_response *resp = NULL;
    const char *bad = "/plist?hex=3c706c6973743e3c646963743e3c6b65793e613c2f6b65793e3c2f706c6973743e"; /* <plist><dict><key>a</key></plist> */
    CHECK_CODE(hc_test_send(client, "GET", bad, h, &resp), HC_EDECODE);
    size_t len = 0;
    const uint8_t *body = NULL;
    CHECK_CODE(hc_error_body(hc_error_last(), &body, &len), HC_OK);
    CHECK(len == 33 && body && memcmp(body, "<plist><dict><key>a</key></plist>", 33) == 0);
    CHECK_CODE(hc_test_send(client, "GET", "/plist?ctype=application/json&hex=3c706c6973743e3c747275652f3e3c2f706c6973743e", h, &resp),
               HC_EUNACCEPTABLE_CONTENT_TYPE);
    hc_handler_free(h);

    /* Nesting far deeper than the limit: refused before libplist sees it. */
    size_t depth = 100000, n = 0;
    char *deep = malloc(depth * 15 + 32);
    n += (size_t)sprintf(deep, "<plist>");
    for (size_t i = 0; i < depth; i++) { memcpy(deep + n, "<array>", 7); n += 7; }
    for (size_t i = 0; i < depth; i++) { memcpy(deep + n, "</array>", 8); n += 8; }
    n += (size_t)sprintf(deep + n, "</plist>");
    hc_plist *out = (hc_plist *)1;
    CHECK_CODE(hc_plist_parse((const uint8_t *)deep, n, NULL, &out), HC_EDECODE);
    CHECK(out == NULL);
    CHECK(strstr(hc_error_message(hc_error_last()), "depth") != NULL);
    free(deep);

    /* 40 arrays of 5 references to the next: 5^40 values once expanded, in 323 bytes. */
    uint8_t bomb[512];
    size_t m = 8, offsets[48];
    memcpy(bomb, "bplist00", 8);
    for (int i = 0; i < 40; i++) {
        offsets[i] = m;
        bomb[m++] = 0xA5;
        for (int k = 0; k < 5; k++) bomb[m++] = (uint8_t)(i + 1);
    }
    offsets[40] = m;
    bomb[m++] = 0x10; bomb[m++] = 7;
    size_t table = m;
    for (int i = 0; i < 41; i++) bomb[m++] = (uint8_t)offsets[i];
    memset(bomb + m, 0, 32);
    bomb[m + 6] = 1; bomb[m + 7] = 1; bomb[m + 15] = 41; bomb[m + 31] = (uint8_t)table;
    m += 32;
    CHECK_CODE(hc_plist_parse(bomb, m, NULL, &out), HC_ETOO_LARGE);

    const char *entity = "<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
                         "<plist><string>&x;</string></plist>";
    CHECK_CODE(hc_plist_parse((const uint8_t *)entity, strlen(entity), NULL, &out), HC_EDECODE);
    CHECK_CODE(hc_plist_parse((const uint8_t *)"", 0, NULL, &out), HC_EDECODE);

    /* What the writer refuses. */
    hc_plist_builder *b = hc_plist_builder_new();
    CHECK_CODE(hc_plist_builder_string(b, "a\0b", 3), HC_OK);
    CHECK_CODE(hc_plist_builder_finish(b, &out), HC_OK);
    uint8_t *bytes = NULL;
    CHECK_CODE(hc_plist_serialize(out, HC_PLIST_BINARY, &bytes, &len), HC_EINVALID_ARG);
    CHECK(bytes == NULL);
    CHECK_CODE(hc_plist_serialize(out, 7, &bytes, &len), HC_EINVALID_ARG);
    hc_plist_free(out);
    CHECK_CODE(hc_plist_builder_string(b, "\xff", 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_builder_finish(b, &out), HC_EINVALID_ARG);
    hc_plist_builder_free(b);
}

static void test_options_and_defaults(void) {
    hc_plist_options *o = hc_plist_options_new();
    int64_t v = 0;
    CHECK_CODE(hc_plist_options_get(o, HC_PLIST_MAX_DEPTH, &v), HC_OK);
    CHECK(v == 512);
    CHECK_CODE(hc_plist_options_get(o, HC_PLIST_MAX_SIZE, &v), HC_OK);
    CHECK(v == 64 << 20);
    CHECK_CODE(hc_plist_options_get(o, HC_PLIST_MAX_OBJECTS, &v), HC_OK);
    CHECK(v == 10000000);
    CHECK_CODE(hc_plist_options_get(o, HC_PLIST_ALLOW_EMPTY, &v), HC_OK);
    CHECK(v == 0);
    CHECK_CODE(hc_plist_options_get(o, HC_PLIST_ERROR_BODY_LIMIT, &v), HC_OK);
    CHECK(v == 65536);
    CHECK_CODE(hc_plist_options_set(o, HC_PLIST_MAX_DEPTH, 0), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_options_set(o, HC_PLIST_MAX_DEPTH, 3000), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_options_set(o, (hc_plist_option)99, 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_options_set(o, HC_PLIST_MAX_DEPTH, 2), HC_OK);
    const char *nested = "<plist><array><array><array/></array></array></plist>";
    hc_plist *out = NULL;
    CHECK_CODE(hc_plist_parse((const uint8_t *)nested, strlen(nested), o, &out), HC_EDECODE);
    CHECK_CODE(hc_plist_parse((const uint8_t *)nested, strlen(nested), NULL, &out), HC_OK);
    hc_plist_free(out);
    CHECK_CODE(hc_plist_options_set(o, HC_PLIST_ALLOW_EMPTY, 1), HC_OK);
    hc_handler *h = hc_handler_plist_new(o);
    hc_plist_options_free(o);  /* the handler keeps its own copy */
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/plist", h, &resp), HC_OK);
    CHECK(hc_response_plist(resp) == NULL);
    hc_response_free(resp);
    hc_handler_free(h);
}

static void test_null_safety(void) {
    hc_plist *out = NULL;
    CHECK(hc_plist_type(NULL) == HC_PLIST_INVALID);
    CHECK(hc_plist_get(NULL, "a") == NULL);
    CHECK(hc_plist_array_length(NULL) == 0);
    CHECK(hc_plist_array_at(NULL, 0) == NULL);
    CHECK(hc_plist_dict_size(NULL) == 0);
    CHECK(hc_plist_dict_member_at(NULL, 0, NULL, NULL) == NULL);
    CHECK_CODE(hc_plist_string(NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_int64(NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_uint64(NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_real(NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_bool(NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_date(NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_data(NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_uid(NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_serialize(NULL, HC_PLIST_XML, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_parse(NULL, 5, NULL, &out), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_parse(NULL, 0, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_options_set(NULL, HC_PLIST_MAX_DEPTH, 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_builder_int64(NULL, 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_builder_finish(NULL, &out), HC_EINVALID_ARG);
    CHECK_CODE(hc_plist_pypickle(NULL, NULL, NULL), HC_EINVALID_ARG);
    const uint8_t *pickle = NULL;
    size_t pickle_len = 0;
    CHECK_CODE(hc_response_plist_pypickle(NULL, &pickle, &pickle_len), HC_EINVALID_ARG);
    CHECK(pickle == NULL && pickle_len == 0);
    CHECK_CODE(hc_response_plist_pypickle(NULL, NULL, NULL), HC_EINVALID_ARG);
    hc_handler *pickled = hc_handler_plist_pypickle_new(NULL);
    CHECK(pickled != NULL);
    hc_handler_free(pickled);
    CHECK(hc_response_plist(NULL) == NULL);
    hc_plist_free(NULL);
    hc_plist_options_free(NULL);
    hc_plist_builder_free(NULL);
}

int main(void) {
    hc_test_server_start();
    int64_t handles = hc_live_handles();
    client = hc_client_new();
    CHECK(client != NULL);
    test_builder_and_both_formats();
    test_request_body_and_handler();
    test_errors_and_hostile_input();
    test_options_and_defaults();
    test_null_safety();
    hc_client_free(client);
    CHECK(hc_live_handles() == handles);
    return hc_test_finish();
}
