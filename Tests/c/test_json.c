/* JSON from C: tree handler and value handles, path streaming (per item and batched), standalone
 * parsing and serialization, options and their defaults, errors, NULL safety. */
#include "testutil.h"
#include <httpcontent_binding.h>

static hc_client *client;

/* "/json?doc=" with the document percent-encoded. */
static const char *json_path(const char *doc) {
    static char buf[4096];
    size_t n = (size_t)snprintf(buf, sizeof buf, "/json?doc=");
    for (const unsigned char *p = (const unsigned char *)doc; *p && n + 4 < sizeof buf; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) buf[n++] = (char)*p;
        else n += (size_t)snprintf(buf + n, sizeof buf - n, "%%%02X", *p);
    }
    buf[n] = 0;
    return buf;
}

static hc_code fetch(const char *path, hc_handler *handler, hc_response **out) {
    return hc_test_send(client, "GET", path, handler, out);
}

static void test_tree_handler_and_value_handles(void) {
    hc_handler *h = hc_handler_json_new(NULL);
    hc_response *resp = NULL;
    CHECK_CODE(fetch(json_path("{\"user\":{\"followers\":[{\"name\":\"ann\"},{\"name\":\"b\\u0000b\"}]},"
                               "\"n\":[1,2.5,-7,true,null],\"a.b\":{\"0\":\"x\"}}"), h, &resp), HC_OK);
    const hc_json *root = hc_response_json(resp);
    CHECK(root != NULL);
    CHECK(hc_json_type(root) == HC_JSON_OBJECT);
    CHECK(hc_json_object_size(root) == 3);

    const char *s = NULL; size_t len = 0;
    const hc_json *name = hc_json_get(root, "user.followers.0.name");
    CHECK_CODE(hc_json_string(name, &s, &len), HC_OK);
    CHECK(len == 3 && strcmp(s, "ann") == 0);
    CHECK(hc_json_get(root, "user.followers.0.name") == name); /* same borrowed handle */
    CHECK_CODE(hc_json_string(hc_json_get(root, "user.followers.1.name"), &s, &len), HC_OK);
    CHECK(len == 3 && memcmp(s, "b\0b", 3) == 0);               /* NUL-safe */
    CHECK(hc_json_get(root, "user.followers.2") == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    const char *comps[] = {"a.b", "0"};
    CHECK_CODE(hc_json_string(hc_json_get_path(root, comps, 2), &s, &len), HC_OK);
    CHECK(strcmp(s, "x") == 0);

    const hc_json *n = hc_json_get(root, "n");
    CHECK(hc_json_type(n) == HC_JSON_ARRAY && hc_json_array_length(n) == 5);
    int64_t i = 0; double d = 0; int b = -1;
    CHECK_CODE(hc_json_int64(hc_json_array_at(n, 0), &i), HC_OK);
    CHECK(i == 1);
    CHECK(hc_json_type(hc_json_array_at(n, 1)) == HC_JSON_DOUBLE);
    CHECK_CODE(hc_json_double(hc_json_array_at(n, 1), &d), HC_OK);
    CHECK(d == 2.5);
    CHECK_CODE(hc_json_int64(hc_json_array_at(n, 1), &i), HC_EINVALID_ARG);
    CHECK(strcmp(hc_json_number_text(hc_json_array_at(n, 2)), "-7") == 0);
    CHECK_CODE(hc_json_bool(hc_json_array_at(n, 3), &b), HC_OK);
    CHECK(b == 1);
    CHECK(hc_json_type(hc_json_array_at(n, 4)) == HC_JSON_NULL);
    CHECK(hc_json_array_at(n, 5) == NULL);
    CHECK_CODE(hc_json_string(n, &s, &len), HC_EINVALID_ARG);

    const char *key = NULL; size_t key_len = 0;
    const hc_json *first = hc_json_object_member_at(root, 0, &key, &key_len);
    CHECK(first != NULL && key_len == 4 && strcmp(key, "user") == 0);
    CHECK(hc_json_object_member_at(root, 3, &key, &key_len) == NULL);

    uint8_t *text = NULL; size_t text_len = 0;
    CHECK_CODE(hc_json_serialize(n, 0, &text, &text_len), HC_OK);
    CHECK(text_len == 20 && memcmp(text, "[1,2.5,-7,true,null]", 20) == 0);
    hc_buffer_free(text);

    hc_json_free((hc_json *)root); /* borrowed: ignored */
    hc_response_free(resp);        /* frees every borrowed handle */
    hc_handler_free(h);
}

static void test_decode_errors_and_empty_bodies(void) {
    hc_handler *h = hc_handler_json_new(NULL);
    hc_response *resp = NULL;
    CHECK_CODE(fetch(json_path("{\"a\": [1, 2}"), h, &resp), HC_EDECODE);
    const hc_error *err = hc_error_last();
    CHECK(strstr(hc_error_message(err), "byte 11") != NULL); /* the index of the bad "}" */
    CHECK(hc_error_offset(err) == 11);
    const uint8_t *body; size_t len;
    CHECK_CODE(hc_error_body(err, &body, &len), HC_OK);
    CHECK(len == 12 && memcmp(body, "{\"a\": [1, 2}", 12) == 0);

    CHECK_CODE(fetch("/json?doc=", h, &resp), HC_EDECODE);   /* empty 200 */
    CHECK_CODE(fetch(json_path("[1,\f2]"), h, &resp), HC_EDECODE);  /* form feed */

    hc_request *head = hc_request_new("HEAD", hc_url(json_path("[1]")));
    hc_request_set_handler(head, h);
    CHECK_CODE(hc_client_send(client, head, &resp), HC_OK);
    CHECK(hc_response_json(resp) == NULL);
    /* Empty is no failure: the last error (the form feed's) is left as it was, not cleared. */
    CHECK(hc_error_code(hc_error_last()) == HC_EDECODE);
    hc_response_free(resp);
    /* The length a HEAD response declares is not a body: HC_JSON_MAX_SIZE does not refuse it. */
    hc_json_options *small = hc_json_options_new();
    CHECK_CODE(hc_json_options_set(small, HC_JSON_MAX_SIZE, 2), HC_OK);
    hc_handler *limited = hc_handler_json_new(small);
    hc_request_set_handler(head, limited);
    resp = NULL;
    CHECK_CODE(hc_client_send(client, head, &resp), HC_OK);
    CHECK(resp != NULL && hc_response_json(resp) == NULL);
    hc_response_free(resp);
    CHECK_CODE(fetch(json_path("[1]"), limited, &resp), HC_ETOO_LARGE);
    hc_handler_free(limited);
    hc_json_options_free(small);
    hc_request_free(head);

    /* A rejected JSON error document gives the server's message. */
    CHECK_CODE(fetch("/status/401?json=1", h, &resp), HC_EUNACCEPTABLE_STATUS);
    err = hc_error_last();
    CHECK(hc_error_server_message(err) != NULL &&
          strcmp(hc_error_server_message(err), "You are not authorized to access this resource.") == 0);
    CHECK(strcmp(hc_error_message(err), "HTTP 401 Unauthorized: You are not authorized to access this resource.") == 0);
    hc_handler_free(h);

    /* Not a JSON response. */
    hc_handler *bytes = hc_handler_bytes_new(0);
    CHECK_CODE(fetch(json_path("[1]"), bytes, &resp), HC_OK);
    CHECK(hc_response_json(resp) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    hc_response_free(resp);
    hc_handler_free(bytes);
}

static void test_options_defaults_and_effects(void) {
    hc_json_options *o = hc_json_options_new();
    int64_t v = -1;
    struct { hc_json_option opt; int64_t def; } defaults[] = {
        {HC_JSON_REMOVE_NULLS, 0}, {HC_JSON_ALLOW_COMMENTS, 0}, {HC_JSON_ALLOW_MULTIPLE_VALUES, 0},
        {HC_JSON_MAX_DEPTH, 512}, {HC_JSON_MAX_SIZE, 0}, {HC_JSON_STRICT_UTF8, 1}, {HC_JSON_KEEP_NUMBER_TEXT, 0},
        {HC_JSON_ALLOW_EMPTY, 0}, {HC_JSON_ITEMS_LIMIT, 0}, {HC_JSON_ITEMS_STOP_WHEN_CLOSED, 0},
        {HC_JSON_ITEMS_REQUIRE_PREFIX, 0}, {HC_JSON_BATCH_BYTES, 65536}, {HC_JSON_ALLOW_TRAILING_GARBAGE, 0},
        {HC_JSON_ALLOW_PARTIAL_VALUES, 0}, {HC_JSON_ERROR_BODY_LIMIT, 65536},
    };
    for (size_t k = 0; k < sizeof defaults / sizeof defaults[0]; k++) {
        CHECK_CODE(hc_json_options_get(o, defaults[k].opt, &v), HC_OK);
        if (v != defaults[k].def) fprintf(stderr, "option %d default %lld\n", defaults[k].opt, (long long)v);
        CHECK(v == defaults[k].def);
    }
    CHECK_CODE(hc_json_options_set(o, (hc_json_option)99, 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_options_set(o, HC_JSON_MAX_DEPTH, 0), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_options_set(o, HC_JSON_MAX_DEPTH, -5), HC_EINVALID_ARG);

    const char *doc = "{\"a\":null,\"b\":[{\"c\":null,\"d\":12345678901234567890123}] /* c */}";
    hc_json *value = NULL;
    CHECK_CODE(hc_json_parse((const uint8_t *)doc, strlen(doc), NULL, &value), HC_EDECODE);
    CHECK(value == NULL);
    CHECK_CODE(hc_json_options_set(o, HC_JSON_ALLOW_COMMENTS, 1), HC_OK);
    CHECK_CODE(hc_json_options_set(o, HC_JSON_REMOVE_NULLS, 1), HC_OK);
    CHECK_CODE(hc_json_options_set(o, HC_JSON_KEEP_NUMBER_TEXT, 1), HC_OK);
    CHECK_CODE(hc_json_parse((const uint8_t *)doc, strlen(doc), o, &value), HC_OK);
    uint8_t *text = NULL; size_t len = 0;
    CHECK_CODE(hc_json_serialize(value, 0, &text, &len), HC_OK);
    const char *want = "{\"b\":[{\"d\":12345678901234567890123}]}";
    CHECK(len == strlen(want) && memcmp(text, want, len) == 0);
    hc_buffer_free(text);
    CHECK(hc_json_type(hc_json_get(value, "b.0.d")) == HC_JSON_NUMBER);
    CHECK(strcmp(hc_json_number_text(hc_json_get(value, "b.0.d")), "12345678901234567890123") == 0);
    hc_json_free(value);

    /* Deep nesting is a clear error. */
    static char deep[200001];
    memset(deep, '[', 100000);
    memset(deep + 100000, ']', 100000);
    CHECK_CODE(hc_json_parse((const uint8_t *)deep, 200000, NULL, &value), HC_EDECODE);
    CHECK(strstr(hc_error_message(hc_error_last()), "maximum depth") != NULL);
    hc_json_options_free(o);
}

struct items { int count; int64_t sum; int stop_at; int fail_at; };

static int on_item(void *userdata, size_t prefix_index, const hc_json *value) {
    struct items *it = userdata;
    int64_t id = -1;
    if (prefix_index != 0 || hc_json_int64(hc_json_get(value, "id"), &id) != HC_OK) return 5;
    it->count++;
    it->sum += id;
    if (it->stop_at && it->count == it->stop_at) return HC_JSON_STOP;
    if (it->fail_at && it->count == it->fail_at) return 42;
    return 0;
}

static void test_items_handler(void) {
    const char *prefixes[] = {"item"};
    struct items it = {0, 0, 0, 0};
    hc_handler *h = hc_handler_json_items_new(prefixes, 1, NULL, on_item, &it);
    CHECK(h != NULL);
    hc_response *resp = NULL;
    CHECK_CODE(fetch("/big-json-array?n=3000", h, &resp), HC_OK);
    CHECK(it.count == 3000 && it.sum == 3000LL * 2999 / 2);
    size_t count = 0; int stopped = -1;
    CHECK_CODE(hc_response_json_items(resp, &count, &stopped), HC_OK);
    CHECK(count == 3000 && stopped == 0);
    hc_response_free(resp);

    it = (struct items){0, 0, 7, 0};
    CHECK_CODE(fetch("/big-json-array?n=100000", h, &resp), HC_OK);
    CHECK(it.count == 7);
    CHECK_CODE(hc_response_json_items(resp, &count, &stopped), HC_OK);
    CHECK(count == 7 && stopped == 1);
    hc_response_free(resp);

    it = (struct items){0, 0, 0, 3};
    CHECK_CODE(fetch("/big-json-array?n=100", h, &resp), HC_ECALLBACK);
    CHECK(it.count == 3);
    hc_handler_free(h);

    /* A limit from the options. */
    hc_json_options *o = hc_json_options_new();
    hc_json_options_set(o, HC_JSON_ITEMS_LIMIT, 4);
    it = (struct items){0, 0, 0, 0};
    h = hc_handler_json_items_new(prefixes, 1, o, on_item, &it);
    CHECK_CODE(fetch("/big-json-array?n=1000", h, &resp), HC_OK);
    CHECK(it.count == 4);
    hc_response_free(resp);
    hc_handler_free(h);
    hc_json_options_free(o);

    /* Bad prefixes are refused up front. */
    const char *overlapping[] = {"a", "a.b"};
    CHECK(hc_handler_json_items_new(overlapping, 2, NULL, on_item, &it) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    CHECK(hc_handler_json_items_new(NULL, 1, NULL, on_item, &it) == NULL);
    CHECK(hc_handler_json_items_new(prefixes, 1, NULL, NULL, &it) == NULL);
}

struct batches { size_t items; int calls; int bad; int stop_after; };

static int on_batch(void *userdata, size_t prefix_index, const uint8_t *json, size_t len, size_t count) {
    struct batches *b = userdata;
    hc_json *arr = NULL;
    if (prefix_index != 0 || hc_json_parse(json, len, NULL, &arr) != HC_OK || hc_json_array_length(arr) != count) b->bad++;
    hc_json_free(arr);
    b->items += count;
    b->calls++;
    return b->stop_after && b->calls >= b->stop_after ? HC_JSON_STOP : 0;
}

static void test_batches_handler(void) {
    const char *prefixes[] = {"item"};
    struct batches b = {0, 0, 0, 0};
    hc_json_options *o = hc_json_options_new();
    hc_json_options_set(o, HC_JSON_BATCH_BYTES, 4096);
    hc_handler *h = hc_handler_json_batches_new(prefixes, 1, o, on_batch, &b);
    hc_json_options_free(o);
    hc_response *resp = NULL;
    CHECK_CODE(fetch("/big-json-array?n=20000", h, &resp), HC_OK);
    CHECK(b.items == 20000 && b.bad == 0 && b.calls > 20);
    hc_response_free(resp);

    /* HC_JSON_STOP from a batch callback ends the transfer with success. */
    b = (struct batches){0, 0, 0, 2};
    CHECK_CODE(fetch("/big-json-array?n=100000", h, &resp), HC_OK);
    CHECK(b.calls == 2 && b.items < 100000);
    size_t count = 0; int stopped = 0;
    CHECK_CODE(hc_response_json_items(resp, &count, &stopped), HC_OK);
    CHECK(stopped == 1 && count >= b.items);
    hc_response_free(resp);
    hc_handler_free(h);
}

static void test_json_request_body(void) {
    hc_json *v = NULL;
    const char *doc = "{\"k\":[1,\"v\"]}";
    CHECK_CODE(hc_json_parse((const uint8_t *)doc, strlen(doc), NULL, &v), HC_OK);
    hc_request *req = hc_request_new("POST", hc_url("/echo/raw"));
    CHECK_CODE(hc_request_set_json_value(req, v), HC_OK);
    hc_json_free(v);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    const uint8_t *data; size_t len;
    hc_response_bytes(resp, &data, &len);
    CHECK(len == strlen(doc) && memcmp(data, doc, len) == 0);
    CHECK(strcmp(hc_response_header(resp, "x-request-content-type"), "application/json") == 0);
    hc_response_free(resp);
    hc_request_free(req);
}

static void test_null_safety(void) {
    const char *s; size_t len; int64_t i; double d; int b;
    CHECK(hc_json_type(NULL) == HC_JSON_INVALID);
    CHECK(hc_json_get(NULL, "a") == NULL);
    CHECK(hc_json_get_path(NULL, NULL, 0) == NULL);
    CHECK(hc_json_array_length(NULL) == 0);
    CHECK(hc_json_array_at(NULL, 0) == NULL);
    CHECK(hc_json_object_size(NULL) == 0);
    CHECK(hc_json_object_member_at(NULL, 0, NULL, NULL) == NULL);
    CHECK_CODE(hc_json_string(NULL, &s, &len), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_int64(NULL, &i), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_double(NULL, &d), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_bool(NULL, &b), HC_EINVALID_ARG);
    CHECK(hc_json_number_text(NULL) == NULL);
    CHECK_CODE(hc_json_serialize(NULL, 0, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_parse(NULL, 3, NULL, NULL), HC_EINVALID_ARG);
    hc_json *v = NULL;
    CHECK_CODE(hc_json_parse(NULL, 3, NULL, &v), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_options_set(NULL, HC_JSON_MAX_DEPTH, 3), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_options_get(NULL, HC_JSON_MAX_DEPTH, NULL), HC_EINVALID_ARG);
    CHECK(hc_response_json(NULL) == NULL);
    CHECK_CODE(hc_response_json_items(NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_json_value(NULL, NULL), HC_EINVALID_ARG);
    hc_json_free(NULL);
    hc_buffer_free(NULL);
    hc_json_options_free(NULL);
    CHECK_CODE(hc_json_parse((const uint8_t *)"[1]", 3, NULL, &v), HC_OK);
    CHECK(hc_json_string(v, NULL, NULL) == HC_EINVALID_ARG);
    hc_json_free(v);
}

/* Strings and member names of a parsed document are lent from its tape: the same pointer every
 * time, NUL-terminated, embedded NULs counted; with strict UTF-8 off, invalid bytes still come
 * back repaired (U+FFFD), as a copy. */
static void test_strings_lent_from_the_document(void) {
    static const char doc[] = "{\"caf\u00e9\": [\"a\\u0000b\", \"long string of more than sixteen bytes\", 12.50]}";
    hc_json_options *o = hc_json_options_new();
    CHECK_CODE(hc_json_options_set(o, HC_JSON_KEEP_NUMBER_TEXT, 1), HC_OK);
    hc_json *root = NULL;
    CHECK_CODE(hc_json_parse((const uint8_t *)doc, sizeof doc - 1, o, &root), HC_OK);
    const char *key = NULL, *key2 = NULL;
    size_t key_len = 0;
    const hc_json *list = hc_json_object_member_at(root, 0, &key, &key_len);
    CHECK(list != NULL && key_len == 5 && memcmp(key, "caf\xc3\xa9", 6) == 0);
    CHECK(hc_json_object_member_at(root, 0, &key2, NULL) == list && key2 == key);
    const char *s1 = NULL, *s2 = NULL;
    size_t n1 = 0, n2 = 0;
    CHECK_CODE(hc_json_string(hc_json_array_at(list, 0), &s1, &n1), HC_OK);
    CHECK_CODE(hc_json_string(hc_json_array_at(list, 0), &s2, &n2), HC_OK);
    CHECK(s1 == s2 && n1 == 3 && memcmp(s1, "a\0b", 4) == 0);
    CHECK_CODE(hc_json_string(hc_json_array_at(list, 1), &s1, &n1), HC_OK);
    CHECK(n1 == 38 && strcmp(s1, "long string of more than sixteen bytes") == 0);
    const char *num = hc_json_number_text(hc_json_array_at(list, 2));
    CHECK(num != NULL && strcmp(num, "12.50") == 0);
    hc_json_free(root);

    static const char bad[] = "[\"x\xff\"]";
    CHECK_CODE(hc_json_options_set(o, HC_JSON_STRICT_UTF8, 0), HC_OK);
    CHECK_CODE(hc_json_parse((const uint8_t *)bad, sizeof bad - 1, o, &root), HC_OK);
    CHECK_CODE(hc_json_string(hc_json_array_at(root, 0), &s1, &n1), HC_OK);
    CHECK(n1 == 4 && memcmp(s1, "x\xef\xbf\xbd", 5) == 0);
    hc_json_free(root);
    hc_json_options_free(o);
}

static int count_item(void *userdata, size_t prefix_index, const hc_json *value) {
    (void)prefix_index; (void)value;
    (*(int *)userdata)++;
    return 0;
}

/* A compound whose JSON handler took the body: the JSON getters look through it, as the other
 * content getters do (they failed with HC_EINVALID_ARG, leaving the tree out of reach). */
static void test_json_getters_look_through_a_compound(void) {
    hc_handler *json = hc_handler_json_new(NULL);
    hc_handler *bytes = hc_handler_bytes_new(0);
    hc_handler *pair[2] = {json, bytes};
    hc_handler *compound = hc_handler_compound_new(pair, 2);
    hc_response *resp = NULL;
    CHECK_CODE(fetch(json_path("[1,2]"), compound, &resp), HC_OK);
    CHECK(hc_response_handler_index(resp) == 0);
    const hc_json *root = hc_response_json(resp);
    CHECK(root != NULL && hc_json_array_length(root) == 2);
    hc_response_free(resp);
    CHECK_CODE(fetch("/ctype?type=text/plain&body=hi", compound, &resp), HC_OK);
    CHECK(hc_response_handler_index(resp) == 1);
    CHECK(hc_response_json(resp) == NULL && hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    hc_response_free(resp);
    hc_handler_free(compound);

    const char *prefixes[] = {"item"};
    int seen = 0;
    hc_handler *items = hc_handler_json_items_new(prefixes, 1, NULL, count_item, &seen);
    hc_handler *pair2[2] = {items, bytes};
    compound = hc_handler_compound_new(pair2, 2);
    CHECK_CODE(fetch(json_path("[1,2,3]"), compound, &resp), HC_OK);
    size_t count = 0; int stopped = -1;
    CHECK_CODE(hc_response_json_items(resp, &count, &stopped), HC_OK);
    CHECK(seen == 3 && count == 3 && stopped == 0);
    hc_response_free(resp);
    hc_handler_free(compound);

    hc_handler *marshal = hc_handler_json_pymarshal_new(NULL);
    hc_handler *pair3[2] = {marshal, bytes};
    compound = hc_handler_compound_new(pair3, 2);
    CHECK_CODE(fetch(json_path("[1]"), compound, &resp), HC_OK);
    const uint8_t *data = NULL; size_t len = 0;
    CHECK_CODE(hc_response_json_pymarshal(resp, &data, &len), HC_OK);
    CHECK(data != NULL && len > 0);
    hc_response_free(resp);
    hc_handler_free(compound);
    hc_handler_free(marshal);
    hc_handler_free(items);
    hc_handler_free(json);
    hc_handler_free(bytes);
}

int main(void) {
    hc_test_server_start();
    client = hc_client_new();
    CHECK(client != NULL);
    test_tree_handler_and_value_handles();
    test_decode_errors_and_empty_bodies();
    test_options_defaults_and_effects();
    test_items_handler();
    test_batches_handler();
    test_json_request_body();
    test_null_safety();
    test_strings_lent_from_the_document();
    test_json_getters_look_through_a_compound();
    hc_client_free(client);
    return hc_test_finish();
}
