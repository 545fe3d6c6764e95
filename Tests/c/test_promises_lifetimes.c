/* "Borrowed: valid until ..." : the tests take borrowed pointers, then do other work
 * (successful and failing sends, frees of the request and the handler, other errors) and only
 * then read them and compare with copies saved at the start (valgrind reports a use after free
 * too); the thread's last error, copies and static strings.
 * (The audit of the headers' promises, issue 14: see promises.h.) */
#include "promises.h"
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <pthread.h>

/* ------------------------------------------------------------------------------------------ */
/* Lifetimes: "Borrowed: valid until the response is freed"                                   */
/* ------------------------------------------------------------------------------------------ */

static void test_response_strings_live_until_the_response_is_freed(void) {
    hc_request *req = hc_request_new("GET", hc_url("/text?charset=iso-8859-1&text=caf%C3%A9%20cr%C3%A8me"));
    hc_handler *text = hc_handler_text_new(HC_ENCODING_AUTO, 1);
    CHECK_CODE(hc_request_set_handler(req, text), HC_OK);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);

    const char *url = hc_response_url(resp);
    const char *length = hc_response_header(resp, "Content-Length");
    const char *name0 = NULL, *value0 = NULL;
    CHECK_CODE(hc_response_header_at(resp, 0, &name0, &value0), HC_OK);
    const uint8_t *raw = NULL; size_t raw_len = 0;
    CHECK_CODE(hc_response_headers_raw(resp, &raw, &raw_len), HC_OK);
    const char *media = hc_response_media_type(resp);
    const char *charset = hc_response_charset(resp);
    const char *body = NULL; size_t body_len = 0;
    CHECK_CODE(hc_response_text(resp, &body, &body_len), HC_OK);
    CHECK(url && length && name0 && value0 && raw && media && charset && body);
    CHECK(same_text(media, "text/plain") && same_text(charset, "iso-8859-1"));
    CHECK(body_len == strlen("caf\xc3\xa9 cr\xc3\xa8me") && memcmp(body, "caf\xc3\xa9 cr\xc3\xa8me", body_len) == 0);
    CHECK(body && body[body_len] == 0);                     /* NUL-terminated, not counted */
    char *s_url = dup_or_null(url), *s_length = dup_or_null(length), *s_name0 = dup_or_null(name0),
         *s_value0 = dup_or_null(value0), *s_body = dup_or_null(body);
    uint8_t *s_raw = malloc(raw_len);
    if (s_raw && raw) memcpy(s_raw, raw, raw_len);

    /* Other getters on the same response (each lends more strings), other work, and the
     * request and handler freed: none of it may move or free what was lent. */
    for (size_t i = 0; i < hc_response_header_count(resp); i++) {
        const char *n, *v;
        CHECK_CODE(hc_response_header_at(resp, i, &n, &v), HC_OK);
        CHECK(hc_response_header(resp, n) != NULL);
    }
    CHECK(hc_response_header(resp, "X-Not-There") == NULL);
    churn();
    hc_request_free(req);
    hc_handler_free(text);
    churn();

    CHECK(same_text(url, s_url) && same_text(url, hc_url("/text?charset=iso-8859-1&text=caf%C3%A9%20cr%C3%A8me")));
    CHECK(same_text(length, s_length) && same_text(name0, s_name0) && same_text(value0, s_value0));
    CHECK(s_raw && memcmp(raw, s_raw, raw_len) == 0 && raw_len > 10 && memcmp(raw + raw_len - 2, "\r\n", 2) == 0);
    CHECK(same_text(media, "text/plain") && same_text(charset, "iso-8859-1"));
    CHECK(same_text(body, s_body));
    hc_response_free(resp);
    free(s_url); free(s_length); free(s_name0); free(s_value0); free(s_body); free(s_raw);
}

static void test_bytes_file_and_fetch_results_live_until_the_response_is_freed(void) {
    /* hc_response_bytes, and hc_client_fetch's bytes (borrowed from its response). */
    hc_handler *bytes = hc_handler_bytes_new(0);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/70000", bytes, &resp), HC_OK);
    hc_handler_free(bytes);
    const uint8_t *data = NULL; size_t len = 0;
    CHECK_CODE(hc_response_bytes(resp, &data, &len), HC_OK);
    hc_fetch_result fr;
    CHECK_CODE(hc_client_fetch(client, "GET", hc_url("/bytes/5000"), NULL, 0, -1, &fr), HC_OK);
    churn();
    CHECK(len == 70000 && data != NULL);
    int ok = 1;
    for (size_t i = 0; data && i < len; i++) ok &= data[i] == i % 251;
    CHECK(ok);
    CHECK(fr.bytes_len == 5000 && fr.status == 200 && fr.bytes && fr.bytes[4999] == 4999 % 251);
    const uint8_t *again = NULL; size_t again_len = 0;
    CHECK_CODE(hc_response_bytes(fr.response, &again, &again_len), HC_OK);
    CHECK(again == fr.bytes && again_len == fr.bytes_len);
    hc_response_free(fr.response);
    hc_response_free(resp);

    /* hc_response_file's path: the handler (which holds the path it was given) is freed first. */
    char dir[] = "/tmp/hc-promises-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/f.bin", dir);
    hc_handler *file = hc_handler_file_new(path, 0);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/100", file, &resp), HC_OK);
    hc_handler_free(file);
    const char *written = NULL;
    CHECK_CODE(hc_response_file(resp, &written, NULL, NULL, NULL), HC_OK);
    churn();
    CHECK(same_text(written, path));
    hc_response_free(resp);
    unlink(path);
    rmdir(dir);
}

static void test_a_json_tree_lives_until_the_response_is_freed(void) {
    hc_request *req = hc_request_new("GET", hc_url("/json?doc=%7B%22name%22%3A%22Ada%20Lovelace%22%2C%22n%22%3A%5B1.25%2C2%5D%7D"));
    hc_handler *json = hc_handler_json_new(NULL);
    hc_request_set_handler(req, json);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    const hc_json *root = hc_response_json(resp);
    const char *name = NULL; size_t name_len = 0;
    CHECK_CODE(hc_json_string(hc_json_get(root, "name"), &name, &name_len), HC_OK);
    const char *key = NULL;
    const hc_json *n = hc_json_object_member_at(root, 1, &key, NULL);
    const char *num = hc_json_number_text(hc_json_array_at(n, 0));
    hc_request_free(req);
    hc_handler_free(json);
    churn();
    CHECK(hc_json_type(root) == HC_JSON_OBJECT && hc_json_object_size(root) == 2);
    CHECK(name_len == 12 && name && memcmp(name, "Ada Lovelace", 13) == 0);
    CHECK(same_text(key, "n") && same_text(num, "1.25"));
    hc_json_free((hc_json *)root);   /* borrowed from the response: "does nothing" */
    CHECK(hc_json_array_length(n) == 2 && same_text(key, "n"));
    hc_response_free(resp);
}

/* ------------------------------------------------------------------------------------------ */
/* Lifetimes: the thread's last error, copies, static strings                                  */
/* ------------------------------------------------------------------------------------------ */

static void test_the_last_error_and_its_strings_survive_every_successful_call(void) {
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "PATCH", "/status/422?json=1&message=no%20such%20field", NULL, &resp),
               HC_EUNACCEPTABLE_STATUS);
    const hc_error *err = hc_error_last();
    const char *message = hc_error_message(err);
    const char *ctype = hc_error_header(err, "content-type");
    const char *name0 = NULL, *value0 = NULL;
    CHECK_CODE(hc_error_header_at(err, 0, &name0, &value0), HC_OK);
    CHECK(hc_error_last() == err);                          /* a successful getter changed nothing */
    const char *url = hc_error_url(err), *method = hc_error_method(err);
    const char *server = hc_error_server_message(err);
    const uint8_t *body = NULL; size_t body_len = 0;
    CHECK_CODE(hc_error_body(err, &body, &body_len), HC_OK);
    CHECK(same_text(server, "no such field") && same_text(method, "PATCH") && ctype && name0 && value0);
    CHECK(body_len > 0 && body != NULL);
    char *s_message = dup_or_null(message), *s_ctype = dup_or_null(ctype), *s_name0 = dup_or_null(name0),
         *s_value0 = dup_or_null(value0), *s_url = dup_or_null(url);
    uint8_t *s_body = malloc(body_len);
    if (s_body && body) memcpy(s_body, body, body_len);

    /* Successful calls of every kind, none of which may free or replace the last error. */
    hc_handler *json = hc_handler_json_new(NULL);
    CHECK_CODE(hc_test_send(client, "GET", "/status/204", json, &resp), HC_OK);
    CHECK(hc_response_json(resp) == NULL);                  /* an empty body: no value, no failure */
    CHECK(hc_response_header(resp, "X-Not-There") == NULL);
    hc_response_free(resp);
    hc_handler_free(json);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/10", NULL, &resp), HC_OK);
    hc_response_free(resp);
    hc_json *doc = NULL;
    CHECK_CODE(hc_json_parse((const uint8_t *)"[1]", 3, NULL, &doc), HC_OK);
    CHECK(hc_json_get(doc, "0") != NULL);
    hc_json_free(doc);
    hc_form *form = hc_form_new();
    hc_form_add(form, "a", "b");
    uint8_t *enc = NULL; size_t enc_len = 0;
    CHECK_CODE(hc_form_encode(form, &enc, &enc_len), HC_OK);
    hc_buffer_free(enc);
    hc_form_free(form);
    hc_error *copy = hc_error_copy(err);
    hc_error_free(copy);
    hc_cancel *token = hc_cancel_new();
    hc_cancel_cancel(token);
    hc_cancel_free(token);
    hc_defaults_reset();
    (void)hc_error_header_count(err);
    (void)hc_live_handles();

    CHECK(hc_error_last() == err);
    CHECK_CODE(hc_error_code(err), HC_EUNACCEPTABLE_STATUS);
    CHECK(hc_error_status(err) == 422);
    CHECK(same_text(message, s_message) && same_text(ctype, s_ctype) && same_text(name0, s_name0)
          && same_text(value0, s_value0) && same_text(url, s_url));
    CHECK(same_text(server, "no such field") && same_text(method, "PATCH"));
    CHECK(s_body && memcmp(body, s_body, body_len) == 0);
    free(s_message); free(s_ctype); free(s_name0); free(s_value0); free(s_url); free(s_body);
    hc_error_clear();
}

static void test_a_copys_strings_live_as_long_as_the_copy(void) {
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/status/418?json=1&message=teapot", NULL, &resp), HC_EUNACCEPTABLE_STATUS);
    hc_error *copy = hc_error_copy(hc_error_last());
    const char *message = hc_error_message(copy), *server = hc_error_server_message(copy);
    const char *url = hc_error_url(copy), *method = hc_error_method(copy);
    const char *name0 = NULL, *value0 = NULL;
    CHECK_CODE(hc_error_header_at(copy, 0, &name0, &value0), HC_OK);
    const uint8_t *body = NULL; size_t body_len = 0;
    CHECK_CODE(hc_error_body(copy, &body, &body_len), HC_OK);
    char *s_message = dup_or_null(message), *s_name0 = dup_or_null(name0), *s_value0 = dup_or_null(value0);
    uint8_t *s_body = malloc(body_len);
    if (s_body && body) memcpy(s_body, body, body_len);
    /* The error it was copied from goes, later failures replace the thread's error. */
    hc_error_clear();
    churn();
    const char *n; const char *v;
    CHECK_CODE(hc_error_header_at(copy, 999, &n, &v), HC_EINVALID_ARG);   /* fails: replaces the last error, not the copy */
    CHECK(hc_error_last() != copy);
    CHECK(same_text(message, s_message) && same_text(server, "teapot") && same_text(method, "GET"));
    CHECK(same_text(url, hc_url("/status/418?json=1&message=teapot")));
    CHECK(same_text(name0, s_name0) && same_text(value0, s_value0));
    CHECK(s_body && body && memcmp(body, s_body, body_len) == 0);
    CHECK_CODE(hc_error_code(copy), HC_EUNACCEPTABLE_STATUS);
    hc_error_free(copy);
    free(s_message); free(s_name0); free(s_value0); free(s_body);
    hc_error_clear();
}

struct thread_view { hc_code code_before; int empty_message; hc_code code_after; };
static void *fail_on_another_thread(void *arg) {
    struct thread_view *view = arg;
    view->code_before = hc_error_code(hc_error_last());
    view->empty_message = hc_error_last() != NULL && hc_error_message(hc_error_last())[0] == 0;
    hc_cancel_cancel(NULL);
    view->code_after = hc_error_code(hc_error_last());
    return NULL;
}

static void test_the_last_error_is_per_thread_and_never_null(void) {
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/status/404", NULL, &resp), HC_EUNACCEPTABLE_STATUS);
    const hc_error *mine = hc_error_last();
    struct thread_view view = {HC_ELOCAL_IO, 0, HC_OK};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fail_on_another_thread, &view) == 0);
    pthread_join(t, NULL);
    /* A new thread starts with "no error": HC_OK, empty message, never NULL. */
    CHECK(view.code_before == HC_OK && view.empty_message && view.code_after == HC_EINVALID_ARG);
    /* Its failure did not touch this thread's error. */
    CHECK(hc_error_last() == mine && hc_error_code(mine) == HC_EUNACCEPTABLE_STATUS && hc_error_status(mine) == 404);
    hc_error_clear();
    CHECK(hc_error_last() != NULL && hc_error_code(hc_error_last()) == HC_OK);
    CHECK(strcmp(hc_error_message(hc_error_last()), "") == 0 && hc_error_status(hc_error_last()) == 0);
    const uint8_t *d = (const uint8_t *)1; size_t n = 1;
    CHECK_CODE(hc_error_body(hc_error_last(), &d, &n), HC_OK);
    CHECK(d == NULL && n == 0);                             /* "*data is NULL when there is none" */
    CHECK(hc_error_offset(hc_error_last()) == -1 && hc_error_curl_code(hc_error_last()) == 0);
}

static void test_code_names_and_version_are_static(void) {
    const char *first[12];
    for (int c = 0; c <= 11; c++) first[c] = hc_code_name((hc_code)c);
    const char *version = hc_version();
    churn();
    hc_error_clear();
    for (int c = 0; c <= 11; c++) {
        CHECK(first[c] == hc_code_name((hc_code)c));        /* the same storage, every time */
        for (int o = 0; o < c; o++) CHECK(strcmp(first[c], first[o]) != 0);   /* distinct */
    }
    CHECK(strcmp(hc_code_name(HC_ETIMEOUT), "timeout") == 0 && strcmp(hc_code_name(HC_EDECODE), "decode") == 0);
    CHECK(version == hc_version() && strcmp(version, HC_VERSION_STRING) == 0);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", HC_VERSION_MAJOR, HC_VERSION_MINOR, HC_VERSION_PATCH);
    CHECK(strcmp(version, expect) == 0);
}

static void test_json_values_live_as_long_as_their_document(void) {
    static const char text[] = "{\"k.1\": {\"s\": \"a\\u0000b\", \"x\": 1e3}, \"arr\": [true, null, \"long string well past sixteen bytes\"]}";
    hc_json *doc = NULL;
    CHECK_CODE(hc_json_parse((const uint8_t *)text, sizeof text - 1, NULL, &doc), HC_OK);
    const char *path[] = {"k.1", "s"};
    const hc_json *s = hc_json_get_path(doc, path, 2);
    const char *sdata = NULL; size_t slen = 0;
    CHECK_CODE(hc_json_string(s, &sdata, &slen), HC_OK);
    const hc_json *arr = hc_json_get(doc, "arr");
    const char *long_s = NULL; size_t long_len = 0;
    CHECK_CODE(hc_json_string(hc_json_array_at(arr, 2), &long_s, &long_len), HC_OK);
    const char *key0 = NULL; size_t key0_len = 0;
    CHECK(hc_json_object_member_at(doc, 0, &key0, &key0_len) != NULL);
    const char *x = hc_json_number_text(hc_json_get_path(doc, (const char *const[]){"k.1", "x"}, 2));
    /* Other documents come and go; a borrowed value freed "does nothing". */
    for (int i = 0; i < 3; i++) {
        hc_json *other = NULL;
        static const char other_text[] = "{\"s\": \"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\"}";
        CHECK_CODE(hc_json_parse((const uint8_t *)other_text, sizeof other_text - 1, NULL, &other), HC_OK);
        hc_json_free(other);
    }
    hc_json_free((hc_json *)s);
    hc_json_free((hc_json *)arr);
    churn();
    CHECK(slen == 3 && sdata && memcmp(sdata, "a\0b", 4) == 0);
    CHECK(long_len == strlen("long string well past sixteen bytes"));
    CHECK(long_s && memcmp(long_s, "long string well past sixteen bytes", long_len) == 0);
    CHECK(key0_len == 3 && same_text(key0, "k.1"));
    CHECK(x != NULL && strtod(x, NULL) == 1000.0);
    CHECK(hc_json_type(s) == HC_JSON_STRING && hc_json_array_length(arr) == 3);

    /* hc_json_serialize: the caller's buffer, NUL-terminated, freed with hc_buffer_free. */
    uint8_t *out = NULL; size_t out_len = 0;
    CHECK_CODE(hc_json_serialize(arr, 0, &out, &out_len), HC_OK);
    CHECK(out && out_len == strlen("[true,null,\"long string well past sixteen bytes\"]") && out[out_len] == 0);
    hc_json_free(doc);                                      /* the buffer outlives the document */
    CHECK(out && strcmp((char *)out, "[true,null,\"long string well past sixteen bytes\"]") == 0);
    hc_buffer_free(out);
    /* hc_form_encode likewise. */
    hc_form *form = hc_form_new();
    hc_form_add(form, "a b", "c&d");
    CHECK_CODE(hc_form_encode(form, &out, &out_len), HC_OK);
    hc_form_free(form);
    CHECK(out && out_len == strlen("a%20b=c%26d") && out[out_len] == 0 && strcmp((char *)out, "a%20b=c%26d") == 0);
    hc_buffer_free(out);
}

PROMISES_MAIN(test_response_strings_live_until_the_response_is_freed,
              test_bytes_file_and_fetch_results_live_until_the_response_is_freed,
              test_a_json_tree_lives_until_the_response_is_freed,
              test_the_last_error_and_its_strings_survive_every_successful_call,
              test_a_copys_strings_live_as_long_as_the_copy,
              test_the_last_error_is_per_thread_and_never_null,
              test_code_names_and_version_are_static,
              test_json_values_live_as_long_as_their_document)
