/* The promises of include/httpcontent.h that a C user relies on, each checked against the
 * library: error lifetime and copies, every header of a rejected response, its URL and method,
 * empty bodies for the JSON handlers, a strict text error's body, schemes refused up front, a
 * finished part answered with 416, batch_add's one-callback rule, proxies, and JSON built from C
 * values. docs/c-abi-contract.md maps each promise to the check here that pins it. */
#include "testutil.h"
#include <pthread.h>
#include <sys/stat.h>

static hc_client *client;

static hc_code send_path(const char *method, const char *path, hc_handler *handler, hc_response **out) {
    return hc_test_send(client, method, path, handler, out);
}

/* Promise: hc_error_last() is borrowed until the next *failing* call or hc_error_clear(); a
 * successful call never frees it. hc_response_json() on an empty body used to clear it
 * (a use after free under valgrind). */
static void test_a_success_never_frees_the_last_error(void) {
    hc_response *resp = NULL;
    CHECK_CODE(send_path("GET", "/status/404", NULL, &resp), HC_EUNACCEPTABLE_STATUS);
    const hc_error *err = hc_error_last();
    const char *message = hc_error_message(err);
    char saved[256];
    snprintf(saved, sizeof saved, "%s", message);

    hc_handler *json = hc_handler_json_new(NULL);
    CHECK_CODE(send_path("GET", "/status/204", json, &resp), HC_OK);
    CHECK(hc_response_json(resp) == NULL);          /* empty: no value, and no failure */
    CHECK(hc_error_last() == err);                  /* the same error, still alive */
    CHECK_CODE(hc_error_code(err), HC_EUNACCEPTABLE_STATUS);
    CHECK(strcmp(hc_error_message(err), saved) == 0);
    CHECK(hc_error_status(err) == 404);
    hc_response_free(resp);
    hc_handler_free(json);
}

/* Promise: hc_error_copy gives an error the caller owns, which outlives later failures and
 * hc_error_clear, and which another thread may read; hc_error_free leaves the borrowed one. */
static void *read_copy_on_another_thread(void *arg) {
    const hc_error *copy = arg;
    static int ok;
    ok = hc_error_code(copy) == HC_EUNACCEPTABLE_STATUS && hc_error_status(copy) == 404
         && strstr(hc_error_message(copy), "404") != NULL && hc_error_header_count(copy) > 0;
    return &ok;
}

static void test_an_error_can_be_kept_with_a_copy(void) {
    hc_response *resp = NULL;
    CHECK_CODE(send_path("POST", "/status/404", NULL, &resp), HC_EUNACCEPTABLE_STATUS);
    hc_error *copy = hc_error_copy(hc_error_last());
    CHECK(copy != NULL);
    hc_error_clear();
    CHECK_CODE(hc_error_code(hc_error_last()), HC_OK);
    CHECK(hc_request_new("GET", "nota url") == NULL);   /* a later failure */
    CHECK_CODE(hc_error_code(copy), HC_EUNACCEPTABLE_STATUS);
    CHECK(strcmp(hc_error_method(copy), "POST") == 0);
    const uint8_t *body; size_t len;
    CHECK_CODE(hc_error_body(copy, &body, &len), HC_OK);
    CHECK(len == strlen("status 404") && memcmp(body, "status 404", len) == 0);

    pthread_t t;
    void *result = NULL;
    CHECK(pthread_create(&t, NULL, read_copy_on_another_thread, copy) == 0);
    pthread_join(t, &result);
    CHECK(result && *(int *)result == 1);

    hc_error_free((hc_error *)hc_error_last());        /* not a copy: left alone */
    CHECK_CODE(hc_error_code(hc_error_last()), HC_EINVALID_ARG);
    hc_error_free(copy);
    hc_error_free(NULL);

    hc_error_clear();
    hc_error *none = hc_error_copy(hc_error_last());   /* a copy of "no error" */
    CHECK_CODE(hc_error_code(none), HC_OK);
    CHECK(strcmp(hc_error_message(none), "") == 0 && hc_error_url(none) == NULL);
    hc_error_free(none);
    CHECK(hc_error_copy(NULL) == NULL);
    CHECK_CODE(hc_error_code(hc_error_last()), HC_EINVALID_ARG);
}

/* Promise: every header of a rejected response, in order, with the request's URL and method;
 * for a failure with no response, the URL it was sent to. */
static void test_a_rejected_response_gives_all_its_headers_url_and_method(void) {
    hc_response *resp = NULL;
    CHECK_CODE(send_path("DELETE", "/redirect-to?url=/status/403", NULL, &resp), HC_EUNACCEPTABLE_STATUS);
    hc_error *err = hc_error_copy(hc_error_last());
    size_t n = hc_error_header_count(err);
    CHECK(n >= 3);   /* Content-Type, Content-Length, Server, Date... */
    int saw_type = 0, saw_length = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = NULL, *value = NULL;
        CHECK_CODE(hc_error_header_at(err, i, &name, &value), HC_OK);
        CHECK(name != NULL && value != NULL);
        if (strcasecmp(name, "content-type") == 0) saw_type = 1;
        if (strcasecmp(name, "content-length") == 0) saw_length = strcmp(value, "10") == 0;
    }
    CHECK(saw_type && saw_length);
    const char *name, *value;
    CHECK_CODE(hc_error_header_at(err, n, &name, &value), HC_EINVALID_ARG);
    CHECK_CODE(hc_error_header_at(err, 0, NULL, &value), HC_EINVALID_ARG);
    /* The final URL, after the redirect, and the method sent. */
    CHECK(hc_error_url(err) && strcmp(hc_error_url(err), hc_url("/status/403")) == 0);
    CHECK(hc_error_method(err) && strcmp(hc_error_method(err), "DELETE") == 0);
    hc_error_free(err);

    hc_request *req = hc_request_new("PUT", "http://127.0.0.1:1/nothing-listens");
    CHECK_CODE(hc_client_send(client, req, &resp), HC_ETRANSPORT);
    const hc_error *last = hc_error_last();
    CHECK(hc_error_header_count(last) == 0 && hc_error_status(last) == 0);
    CHECK(hc_error_url(last) && strcmp(hc_error_url(last), "http://127.0.0.1:1/nothing-listens") == 0);
    CHECK(hc_error_method(last) && strcmp(hc_error_method(last), "PUT") == 0);
    hc_request_free(req);

    CHECK(hc_request_new("GET", "gopher://x/") == NULL);   /* not tied to a request */
    CHECK(hc_error_url(hc_error_last()) == NULL && hc_error_method(hc_error_last()) == NULL);
    CHECK(hc_error_header_count(NULL) == 0 && hc_error_url(NULL) == NULL);
}

/* Promise: every handler honours hc_handler_empty_statuses / hc_handler_empty_methods, the JSON
 * handlers too (they used a fixed list). */
static void test_json_handlers_honour_the_configured_empty_statuses_and_methods(void) {
    const char *empty_json = "/ctype?type=application/json&body=";
    hc_response *resp = NULL;
    hc_handler *json = hc_handler_json_new(NULL);
    CHECK_CODE(send_path("GET", empty_json, json, &resp), HC_EDECODE);   /* default: 200 is not empty */

    int codes[] = {200};
    CHECK_CODE(hc_handler_empty_statuses(json, codes, 1), HC_OK);
    CHECK_CODE(send_path("GET", empty_json, json, &resp), HC_OK);
    CHECK(hc_response_json(resp) == NULL && hc_response_status(resp) == 200);
    hc_response_free(resp);
    /* 204 is no longer in the list: its empty body is now an error, as for an image handler. */
    CHECK_CODE(send_path("GET", "/status/204", json, &resp), HC_EDECODE);

    const char *none[] = {NULL};
    int no_content[] = {204};
    CHECK_CODE(hc_handler_empty_statuses(json, no_content, 1), HC_OK);
    CHECK_CODE(hc_handler_empty_methods(json, none, 0), HC_OK);
    CHECK_CODE(send_path("HEAD", "/json?doc=%7B%7D", json, &resp), HC_EDECODE);
    const char *post[] = {"POST"};
    CHECK_CODE(hc_handler_empty_methods(json, post, 1), HC_OK);
    CHECK_CODE(send_path("POST", "/ctype?type=application/json&body=", json, &resp), HC_OK);
    hc_response_free(resp);
    hc_handler_free(json);

    /* The items handler follows the same rule. */
    const char *prefixes[] = {"item"};
    hc_handler *items = hc_handler_json_items_new(prefixes, 1, NULL, NULL, NULL);
    CHECK(items == NULL);   /* a NULL callback is refused */
}

static int count_item(void *userdata, size_t prefix_index, const hc_json *value) {
    (void)prefix_index; (void)value;
    (*(int *)userdata)++;
    return 0;
}

static void test_json_items_honour_the_configured_empty_statuses(void) {
    int seen = 0;
    const char *prefixes[] = {"item"};
    hc_handler *items = hc_handler_json_items_new(prefixes, 1, NULL, count_item, &seen);
    hc_response *resp = NULL;
    CHECK_CODE(send_path("GET", "/ctype?type=application/json&body=", items, &resp), HC_EDECODE);
    int codes[] = {200, 204};
    CHECK_CODE(hc_handler_empty_statuses(items, codes, 2), HC_OK);
    CHECK_CODE(send_path("GET", "/ctype?type=application/json&body=", items, &resp), HC_OK);
    size_t count = 99;
    CHECK_CODE(hc_response_json_items(resp, &count, NULL), HC_OK);
    CHECK(count == 0 && seen == 0);
    hc_response_free(resp);
    hc_handler_free(items);
}

/* Promise: a decode error carries the body's first bytes (hc_error_body), the strict text
 * handler's too (it had none). */
static void test_a_strict_text_error_carries_the_body(void) {
    hc_handler *text = hc_handler_text_new(HC_ENCODING_UTF8, 1);
    hc_response *resp = NULL;
    CHECK_CODE(send_path("GET", "/text?raw_hex=68c3a96cff6c6f", text, &resp), HC_EDECODE);
    const hc_error *err = hc_error_last();
    CHECK(hc_error_offset(err) == 4);
    const uint8_t *body; size_t len;
    CHECK_CODE(hc_error_body(err, &body, &len), HC_OK);
    static const uint8_t sent[] = {0x68, 0xc3, 0xa9, 0x6c, 0xff, 0x6c, 0x6f};
    CHECK(len == sizeof sent && memcmp(body, sent, len) == 0);
    CHECK(hc_error_status(err) == 200);
    hc_handler_free(text);
}

/* Promise (HC_EINVALID_ARG: "bad URL"): other schemes are refused before any connection. */
static void test_other_schemes_are_refused_up_front(void) {
    static const char *const urls[] = {"ftp://127.0.0.1:21/x", "gopher://127.0.0.1/x", "file:///etc/passwd",
                                       "dict://127.0.0.1/d:x"};
    for (size_t i = 0; i < sizeof urls / sizeof *urls; i++) {
        CHECK(hc_request_new("GET", urls[i]) == NULL);
        CHECK_CODE(hc_error_code(hc_error_last()), HC_EINVALID_ARG);
        CHECK(strstr(hc_error_message(hc_error_last()), "scheme") != NULL);
        CHECK(hc_error_curl_code(hc_error_last()) == 0);
    }
    hc_request *ok = hc_request_new("GET", "HTTPS://127.0.0.1:1/");   /* schemes are case-insensitive */
    CHECK(ok != NULL);
    hc_request_free(ok);
}

/* Promise (HC_FILE_RESUME): a 416 whose Content-Range says the part is the whole file
 * completes the download (the part used to be deleted); a part longer than that is dropped. */
static void test_a_complete_part_answered_with_416_is_renamed_into_place(void) {
    char dir[] = "/tmp/hc-contract-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], part[300];
    snprintf(path, sizeof path, "%s/whole.bin", dir);
    snprintf(part, sizeof part, "%s.part", path);

    /* The part holds all 1000 bytes: the server answers 416 "bytes * /1000" (no space). */
    hc_handler *file = hc_handler_file_new(path, 0);
    hc_response *resp = NULL;
    CHECK_CODE(send_path("GET", "/range/1000", file, &resp), HC_OK);
    hc_response_free(resp);
    hc_handler_free(file);
    CHECK(rename(path, part) == 0);

    hc_handler *resume = hc_handler_file_new(path, HC_FILE_RESUME);
    CHECK_CODE(send_path("GET", "/range/1000", resume, &resp), HC_OK);
    int64_t written = -1, size = -1; int resumed = -1;
    CHECK_CODE(hc_response_file(resp, NULL, &written, &size, &resumed), HC_OK);
    CHECK(written == 0 && size == 1000 && resumed == 1 && hc_response_status(resp) == 416);
    hc_response_free(resp);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == 1000);
    CHECK(stat(part, &st) != 0);
    FILE *f = fopen(path, "rb");
    uint8_t buf[1000];
    CHECK(f && fread(buf, 1, sizeof buf, f) == sizeof buf);
    if (f) fclose(f);
    int same = 1;
    for (int i = 0; i < 1000; i++) same &= buf[i] == i % 251;
    CHECK(same);

    /* A part of 1200 bytes is not this file: 416 fails and the part goes. */
    f = fopen(part, "wb");
    for (int i = 0; i < 1200 && f; i++) fputc(0, f);
    if (f) fclose(f);
    CHECK_CODE(send_path("GET", "/range/1000", resume, &resp), HC_EUNACCEPTABLE_STATUS);
    CHECK(stat(part, &st) != 0);
    hc_handler_free(resume);
    unlink(path);
    rmdir(dir);
}

/* Promise (hc_batch_add): HC_OK means exactly one done call; a request that cannot start gets
 * it during the add, with its code; a NULL argument fails the add and no done comes. */
struct done_log { int calls; hc_code code; };

static void log_done(void *userdata, hc_code code, hc_response *response) {
    struct done_log *log = userdata;
    log->calls++;
    log->code = code;
    hc_response_free(response);
}

static void test_batch_add_reports_a_request_that_cannot_start_through_done(void) {
    char path[] = "/tmp/hc-contract-exists-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    hc_batch *batch = hc_batch_new(client);
    hc_request *req = hc_request_new("GET", hc_url("/bytes/10"));
    hc_handler *no_overwrite = hc_handler_file_new(path, HC_FILE_NO_OVERWRITE);
    hc_request_set_handler(req, no_overwrite);
    struct done_log log = {0, HC_OK};
    CHECK_CODE(hc_batch_add(batch, req, log_done, &log), HC_OK);
    CHECK(log.calls == 1 && log.code == HC_ELOCAL_IO);                /* during the add */
    CHECK_CODE(hc_error_code(hc_error_last()), HC_ELOCAL_IO);
    CHECK(hc_batch_pending(batch) == 0);
    CHECK_CODE(hc_batch_run(batch), HC_OK);
    CHECK(log.calls == 1);                                      /* and never again */

    struct done_log none = {0, HC_OK};
    CHECK_CODE(hc_batch_add(batch, req, NULL, &none), HC_EINVALID_ARG);
    CHECK_CODE(hc_batch_add(batch, NULL, log_done, &none), HC_EINVALID_ARG);
    CHECK_CODE(hc_batch_add(NULL, req, log_done, &none), HC_EINVALID_ARG);
    CHECK_CODE(hc_batch_run(batch), HC_OK);
    CHECK(none.calls == 0);

    hc_request *good = hc_request_new("GET", hc_url("/bytes/10"));
    struct done_log ok = {0, HC_ELOCAL_IO};
    CHECK_CODE(hc_batch_add(batch, good, log_done, &ok), HC_OK);
    CHECK(ok.calls == 0);
    CHECK_CODE(hc_batch_run(batch), HC_OK);
    CHECK(ok.calls == 1 && ok.code == HC_OK);
    hc_request_free(good);
    hc_handler_free(no_overwrite);
    hc_request_free(req);
    hc_batch_free(batch);
    unlink(path);
}

/* The request target the test server saw for /echo: absolute-form means it came through a
 * proxy (the test server itself plays the proxy). */
static int came_through_proxy(hc_client *c, const char *request_proxy) {
    hc_request *req = hc_request_new("GET", hc_url("/echo"));
    if (request_proxy) CHECK_CODE(hc_request_set_proxy(req, request_proxy), HC_OK);
    hc_handler *text = hc_handler_text_new(HC_ENCODING_AUTO, 1);
    hc_request_set_handler(req, text);
    hc_response *resp = NULL;
    int through = -1;
    if (hc_client_send(c, req, &resp) == HC_OK) {
        const char *body; size_t len;
        hc_response_text(resp, &body, &len);
        char absolute[1100];
        snprintf(absolute, sizeof absolute, "\"target\": \"%s\"", hc_url("/echo"));
        through = strstr(body, absolute) != NULL ? 1 : strstr(body, "\"target\": \"/echo\"") ? 0 : -1;
        hc_response_free(resp);
    }
    hc_handler_free(text);
    hc_request_free(req);
    return through;
}

static void test_proxy_per_client_and_per_request(void) {
    char proxy[80];
    snprintf(proxy, sizeof proxy, "%s", hc_base);
    hc_client *c = hc_client_new();
    CHECK(came_through_proxy(c, NULL) == 0);
    CHECK_CODE(hc_client_set_proxy(c, proxy), HC_OK);
    CHECK(came_through_proxy(c, NULL) == 1);
    CHECK(came_through_proxy(c, "") == 0);                  /* the request says: direct */
    CHECK(came_through_proxy(c, NULL) == 1);                /* and the next one is the client's again */
    CHECK_CODE(hc_client_set_no_proxy(c, "127.0.0.1"), HC_OK);
    CHECK(came_through_proxy(c, NULL) == 0);
    CHECK_CODE(hc_client_set_no_proxy(c, NULL), HC_OK);
    CHECK(came_through_proxy(c, NULL) == 1);
    CHECK_CODE(hc_client_set_proxy(c, NULL), HC_OK);
    CHECK(came_through_proxy(c, NULL) == 0);
    CHECK(came_through_proxy(c, proxy) == 1);               /* a request of its own proxy */

    CHECK_CODE(hc_client_set_proxy(c, "ftp://127.0.0.1:21"), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_proxy(c, "http://127.0.0.1:1\r\nX: y"), HC_EINVALID_ARG);
    hc_request *req = hc_request_new("GET", hc_url("/echo"));
    CHECK_CODE(hc_request_set_proxy(req, "gopher://x"), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_proxy(NULL, proxy), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_proxy(NULL, proxy), HC_EINVALID_ARG);
    hc_request_free(req);
    CHECK(came_through_proxy(c, NULL) == 0);                /* a refused setting changed nothing */
    hc_client_free(c);
}

/* JSON request bodies built from C values, round-tripped through the server. */
static void test_json_built_from_c_values_round_trips(void) {
    hc_json_builder *b = hc_json_builder_new();
    CHECK(b != NULL);
    CHECK_CODE(hc_json_builder_begin_object(b), HC_OK);
    CHECK_CODE(hc_json_builder_key(b, "name", 4), HC_OK);
    CHECK_CODE(hc_json_builder_string(b, "Lucas Drance", 12), HC_OK);
    CHECK_CODE(hc_json_builder_key(b, "values", 6), HC_OK);
    CHECK_CODE(hc_json_builder_begin_array(b), HC_OK);
    CHECK_CODE(hc_json_builder_int64(b, INT64_MIN), HC_OK);
    CHECK_CODE(hc_json_builder_double(b, 2.5), HC_OK);
    CHECK_CODE(hc_json_builder_bool(b, 1), HC_OK);
    CHECK_CODE(hc_json_builder_null(b), HC_OK);
    CHECK_CODE(hc_json_builder_string(b, "a\0b\"\xc3\xa9", 6), HC_OK);
    CHECK_CODE(hc_json_builder_number_text(b, "123456789012345678901234567890"), HC_OK);
    CHECK_CODE(hc_json_builder_end_array(b), HC_OK);
    CHECK_CODE(hc_json_builder_key(b, "empty", 5), HC_OK);
    CHECK_CODE(hc_json_builder_begin_object(b), HC_OK);
    CHECK_CODE(hc_json_builder_end_object(b), HC_OK);
    /* Misuse is refused and changes nothing. */
    CHECK_CODE(hc_json_builder_int64(b, 1), HC_EINVALID_ARG);          /* no key */
    CHECK_CODE(hc_json_builder_end_array(b), HC_EINVALID_ARG);         /* an object is open */
    CHECK_CODE(hc_json_builder_double(b, 1.0 / 0.0), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_builder_number_text(b, "01"), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_builder_string(b, "\xff", 1), HC_EINVALID_ARG);
    hc_json *early = (hc_json *)1;
    CHECK_CODE(hc_json_builder_finish(b, &early), HC_EINVALID_ARG);    /* still open */
    CHECK(early == NULL);
    CHECK_CODE(hc_json_builder_end_object(b), HC_OK);
    CHECK_CODE(hc_json_builder_null(b), HC_EINVALID_ARG);              /* a second top-level value */
    hc_json *doc = NULL;
    CHECK_CODE(hc_json_builder_finish(b, &doc), HC_OK);
    CHECK(doc != NULL && hc_json_type(doc) == HC_JSON_OBJECT);

    hc_request *req = hc_request_new("POST", hc_url("/echo/raw"));
    CHECK_CODE(hc_request_set_json_value(req, doc), HC_OK);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    CHECK(hc_response_header(resp, "X-Request-Content-Type")
          && strcmp(hc_response_header(resp, "X-Request-Content-Type"), "application/json") == 0);
    const uint8_t *sent; size_t sent_len;
    CHECK_CODE(hc_response_bytes(resp, &sent, &sent_len), HC_OK);
    hc_json_options *keep = hc_json_options_new();
    hc_json_options_set(keep, HC_JSON_KEEP_NUMBER_TEXT, 1);
    hc_json *back = NULL;
    CHECK_CODE(hc_json_parse(sent, sent_len, keep, &back), HC_OK);
    const char *s; size_t n;
    CHECK_CODE(hc_json_string(hc_json_get(back, "name"), &s, &n), HC_OK);
    CHECK(n == 12 && memcmp(s, "Lucas Drance", 12) == 0);
    CHECK(hc_json_array_length(hc_json_get(back, "values")) == 6);
    int64_t i64 = 0;
    CHECK_CODE(hc_json_int64(hc_json_get(back, "values.0"), &i64), HC_OK);
    CHECK(i64 == INT64_MIN);
    CHECK(strcmp(hc_json_number_text(hc_json_get(back, "values.1")), "2.5") == 0);
    CHECK(hc_json_type(hc_json_get(back, "values.2")) == HC_JSON_BOOL);
    CHECK(hc_json_type(hc_json_get(back, "values.3")) == HC_JSON_NULL);
    CHECK_CODE(hc_json_string(hc_json_get(back, "values.4"), &s, &n), HC_OK);
    CHECK(n == 6 && memcmp(s, "a\0b\"\xc3\xa9", 6) == 0);
    CHECK(strcmp(hc_json_number_text(hc_json_get(back, "values.5")), "123456789012345678901234567890") == 0);
    CHECK(hc_json_object_size(hc_json_get(back, "empty")) == 0);
    /* The text itself is what serializing the built value gives. */
    uint8_t *text; size_t text_len;
    CHECK_CODE(hc_json_serialize(doc, 0, &text, &text_len), HC_OK);
    CHECK(text_len == sent_len && memcmp(text, sent, sent_len) == 0);
    hc_buffer_free(text);

    hc_json_free(back);
    hc_json_options_free(keep);
    hc_response_free(resp);
    hc_request_free(req);
    hc_json_free(doc);
    /* The builder is empty again, and reusable. */
    CHECK_CODE(hc_json_builder_int64(b, 7), HC_OK);
    CHECK_CODE(hc_json_builder_finish(b, &doc), HC_OK);
    CHECK(hc_json_type(doc) == HC_JSON_INT);
    hc_json_free(doc);
    hc_json_builder_free(b);
    hc_json_builder_free(NULL);
    CHECK_CODE(hc_json_builder_null(NULL), HC_EINVALID_ARG);
}

int main(void) {
    hc_test_server_start();
    client = hc_client_new();
    CHECK(client != NULL);
    void (*const tests[])(void) = {
        test_a_success_never_frees_the_last_error,
        test_an_error_can_be_kept_with_a_copy,
        test_a_rejected_response_gives_all_its_headers_url_and_method,
        test_json_handlers_honour_the_configured_empty_statuses_and_methods,
        test_json_items_honour_the_configured_empty_statuses,
        test_a_strict_text_error_carries_the_body,
        test_other_schemes_are_refused_up_front,
        test_a_complete_part_answered_with_416_is_renamed_into_place,
        test_batch_add_reports_a_request_that_cannot_start_through_done,
        test_proxy_per_client_and_per_request,
        test_json_built_from_c_values_round_trips,
    };
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
        int64_t before = hc_live_handles();
        tests[i]();
        /* Every handle a test made, it freed (the ABI's counting of _new and _free). */
        if (hc_live_handles() != before) fprintf(stderr, "test %zu: %lld handles left\n", i, (long long)(hc_live_handles() - before));
        CHECK(hc_live_handles() == before);
    }
    hc_error_clear();
    hc_client_free(client);
    return hc_test_finish();
}
