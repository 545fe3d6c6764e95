/* Codes: which hc_code in which situation, for those no other test pins, and settings no
 * other C test exercised.
 * (The audit of the headers' promises, issue 14: see promises.h.) */
#include "promises.h"
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------------------------ */
/* Codes: which hc_code in which situation, for those no other test pins                      */
/* ------------------------------------------------------------------------------------------ */

static void test_getters_of_another_handlers_content_are_invalid_arguments(void) {
    hc_response *bytes_resp = NULL, *text_resp = NULL;
    hc_handler *text = hc_handler_text_new(HC_ENCODING_AUTO, 0);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/5", NULL, &bytes_resp), HC_OK);
    CHECK_CODE(hc_test_send(client, "GET", "/text", text, &text_resp), HC_OK);
    const uint8_t *d; const char *s; size_t n; size_t count; int stopped;
    CHECK_CODE(hc_response_bytes(text_resp, &d, &n), HC_EINVALID_ARG);
    CHECK_CODE(hc_response_text(bytes_resp, &s, &n), HC_EINVALID_ARG);
    CHECK_CODE(hc_response_image(bytes_resp, NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_response_file(bytes_resp, NULL, NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_response_json_items(bytes_resp, &count, &stopped), HC_EINVALID_ARG);
    hc_error_clear();
    CHECK(hc_response_json(bytes_resp) == NULL && hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    hc_error_clear();
    CHECK(hc_response_streamed(bytes_resp) == -1);          /* documented values, not failures */
    CHECK(hc_response_handler_index(bytes_resp) == -1);
    CHECK(hc_error_code(hc_error_last()) == HC_OK);
    const char *hn, *hv;
    CHECK_CODE(hc_response_header_at(bytes_resp, hc_response_header_count(bytes_resp), &hn, &hv), HC_EINVALID_ARG);
    hc_error_clear();
    CHECK(hc_response_header(bytes_resp, "X-Absent") == NULL && hc_error_code(hc_error_last()) == HC_OK);
    hc_response_free(bytes_resp);
    hc_response_free(text_resp);
    hc_handler_free(text);
}

static void test_json_getters_give_their_documented_codes(void) {
    hc_json *doc = NULL;
    static const char text[] = "{\"s\": \"x\", \"i\": 3, \"d\": 1.5, \"b\": false, \"a\": [1], \"big\": 1e300}";
    CHECK_CODE(hc_json_parse((const uint8_t *)text, sizeof text - 1, NULL, &doc), HC_OK);
    const char *s; size_t n; int64_t i; double dbl; int b; const char *key = (const char *)1; size_t key_len = 7;
    hc_error_clear();
    CHECK(hc_json_get(doc, "nope") == NULL && hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    CHECK(hc_json_get(doc, "") == doc);                     /* "" is the value itself */
    CHECK(hc_json_get(doc, "a.1") == NULL);
    hc_error_clear();
    CHECK(hc_json_array_at(hc_json_get(doc, "a"), 1) == NULL && hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    hc_error_clear();
    CHECK(hc_json_object_member_at(doc, 6, &key, &key_len) == NULL && hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    CHECK(hc_json_array_length(doc) == 0 && hc_json_object_size(hc_json_get(doc, "a")) == 0);   /* "0 for anything else" */
    CHECK_CODE(hc_json_string(hc_json_get(doc, "i"), &s, &n), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_int64(hc_json_get(doc, "d"), &i), HC_EINVALID_ARG);     /* not an exact integer */
    CHECK_CODE(hc_json_int64(hc_json_get(doc, "big"), &i), HC_EINVALID_ARG);   /* out of range */
    CHECK_CODE(hc_json_int64(hc_json_get(doc, "s"), &i), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_double(hc_json_get(doc, "s"), &dbl), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_double(hc_json_get(doc, "i"), &dbl), HC_OK);            /* "integers converted" */
    CHECK(dbl == 3.0);
    CHECK_CODE(hc_json_bool(hc_json_get(doc, "i"), &b), HC_EINVALID_ARG);
    CHECK_CODE(hc_json_bool(hc_json_get(doc, "b"), &b), HC_OK);
    CHECK(b == 0);
    hc_error_clear();
    CHECK(hc_json_number_text(hc_json_get(doc, "s")) == NULL && hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    CHECK(same_text(hc_json_number_text(hc_json_get(doc, "i")), "3"));
    CHECK(same_text(hc_json_number_text(hc_json_get(doc, "d")), "1.5"));
    hc_json_free(doc);

    hc_json_options *o = hc_json_options_new();
    int64_t v = -5;
    CHECK_CODE(hc_json_options_get(o, HC_JSON_MAX_DEPTH, &v), HC_OK);
    CHECK(v == 512);
    CHECK_CODE(hc_json_options_set(o, (hc_json_option)99, 1), HC_EINVALID_ARG);   /* unknown option */
    CHECK_CODE(hc_json_options_set(o, HC_JSON_MAX_DEPTH, 0), HC_EINVALID_ARG);    /* "at least 1" */
    CHECK_CODE(hc_json_options_get(o, HC_JSON_MAX_DEPTH, &v), HC_OK);
    CHECK(v == 512);                                        /* a refused value changed nothing */
    CHECK_CODE(hc_json_options_get(o, (hc_json_option)99, &v), HC_EINVALID_ARG);
    hc_json_options_free(o);
    hc_json *out = (hc_json *)1;
    CHECK_CODE(hc_json_parse((const uint8_t *)"[1,", 3, NULL, &out), HC_EDECODE);
    CHECK(out == NULL);                                     /* "on failure *out is NULL" */

    /* hc_json_serialize: "HC_EINVALID_ARG for nesting deeper than 127"; 127 itself is written.
     * (The header said 128: yajl_gen refuses the open that reaches its YAJL_MAX_DEPTH of 128.) */
    for (int depth = 127; depth <= 128; depth++) {
        hc_json_builder *b = hc_json_builder_new();
        for (int k = 0; k < depth; k++) hc_json_builder_begin_array(b);
        for (int k = 0; k < depth; k++) hc_json_builder_end_array(b);
        hc_json *nested = NULL;
        CHECK_CODE(hc_json_builder_finish(b, &nested), HC_OK);
        uint8_t *text = NULL; size_t text_len = 0;
        CHECK_CODE(hc_json_serialize(nested, 0, &text, &text_len), depth == 127 ? HC_OK : HC_EINVALID_ARG);
        CHECK(depth == 128 || text_len == 254);
        hc_buffer_free(text);
        hc_json_free(nested);
        hc_json_builder_free(b);
    }
}

/* hc_handler_json_new: sends "Accept: application/json" unless the request sets one; a client
 * header goes with every request that does not set the same name. */
static void test_json_accept_header_and_client_headers(void) {
    hc_client *c = hc_client_new();
    CHECK_CODE(hc_client_add_header(c, "X-Team", "client"), HC_OK);
    hc_handler *json = hc_handler_json_new(NULL);
    hc_request *req = hc_request_new("GET", hc_url("/echo"));
    hc_request_set_handler(req, json);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(c, req, &resp), HC_OK);
    const hc_json *headers = hc_json_get(hc_response_json(resp), "headers");
    int accept_json = 0, team_client = 0;
    for (size_t i = 0; i < hc_json_array_length(headers); i++) {
        const char *k = NULL, *v = NULL; size_t kl, vl;
        hc_json_string(hc_json_array_at(hc_json_array_at(headers, i), 0), &k, &kl);
        hc_json_string(hc_json_array_at(hc_json_array_at(headers, i), 1), &v, &vl);
        if (k && v && strcasecmp(k, "Accept") == 0) accept_json = strcmp(v, "application/json") == 0;
        if (k && v && strcasecmp(k, "X-Team") == 0) team_client = strcmp(v, "client") == 0;
    }
    CHECK(accept_json && team_client);
    hc_response_free(resp);
    hc_request_free(req);

    /* The request's own Accept and X-Team win; each is sent once. */
    req = hc_request_new("GET", hc_url("/echo"));
    hc_request_add_header(req, "Accept", "application/x-mine+json");
    hc_request_add_header(req, "X-Team", "request");
    hc_request_set_handler(req, json);
    CHECK_CODE(hc_client_send(c, req, &resp), HC_OK);
    headers = hc_json_get(hc_response_json(resp), "headers");
    int accepts = 0, teams = 0, mine = 0, team_request = 0;
    for (size_t i = 0; i < hc_json_array_length(headers); i++) {
        const char *k = NULL, *v = NULL; size_t kl, vl;
        hc_json_string(hc_json_array_at(hc_json_array_at(headers, i), 0), &k, &kl);
        hc_json_string(hc_json_array_at(hc_json_array_at(headers, i), 1), &v, &vl);
        if (k && v && strcasecmp(k, "Accept") == 0) { accepts++; mine = strcmp(v, "application/x-mine+json") == 0; }
        if (k && v && strcasecmp(k, "X-Team") == 0) { teams++; team_request = strcmp(v, "request") == 0; }
    }
    CHECK(accepts == 1 && mine && teams == 1 && team_request);
    hc_response_free(resp);
    hc_request_free(req);
    hc_handler_free(json);
    hc_client_free(c);
}

static void test_form_and_body_codes(void) {
    hc_form *form = hc_form_new();
    CHECK_CODE(hc_form_close(form), HC_EINVALID_ARG);       /* "when none is open" */
    CHECK_CODE(hc_form_open_array(form, "a"), HC_OK);
    CHECK_CODE(hc_form_add(form, NULL, "1"), HC_OK);        /* NULL key inside an array */
    uint8_t *buf = (uint8_t *)1; size_t len = 1;
    CHECK_CODE(hc_form_encode(form, &buf, &len), HC_EINVALID_ARG);   /* "while an array ... is open" */
    CHECK_CODE(hc_form_close(form), HC_OK);
    CHECK_CODE(hc_form_encode(form, &buf, &len), HC_OK);
    CHECK(len == strlen("a%5B%5D=1") && memcmp(buf, "a%5B%5D=1", len) == 0);
    hc_buffer_free(buf);
    hc_form_free(form);

    hc_request *req = hc_request_new("POST", hc_url("/echo"));
    CHECK_CODE(hc_request_set_text_body(req, "\xe2\x82\xac", "iso-8859-1"), HC_EINVALID_ARG);   /* no euro sign */
    CHECK_CODE(hc_request_set_text_body(req, "x", "klingon-8"), HC_EINVALID_ARG);
    hc_multipart *mp = hc_multipart_new();
    CHECK_CODE(hc_multipart_add_file(mp, "f", "/nonexistent/hc-promises", NULL, NULL), HC_ELOCAL_IO);   /* "now" */
    CHECK_CODE(hc_multipart_add_field(mp, "a\r\nb", "v"), HC_EINVALID_ARG);
    hc_multipart_free(mp);
    CHECK_CODE(hc_request_set_file_body(req, "/nonexistent/hc-promises", NULL), HC_OK);
    hc_response *resp = (hc_response *)1;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_ELOCAL_IO);   /* at each send, before connecting */
    CHECK(resp == NULL && hc_error_status(hc_error_last()) == 0);
    hc_request_free(req);
    hc_handler *file = hc_handler_file_new("/nonexistent-dir/hc-promises/x", 0);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/1", file, &resp), HC_ELOCAL_IO);   /* unwritable: before sending */
    CHECK(hc_error_status(hc_error_last()) == 0);
    hc_handler_free(file);
    CHECK(hc_request_new("GET", "http://exa mple.com/") == NULL);
    CHECK_CODE(hc_error_code(hc_error_last()), HC_EINVALID_ARG);
}

/* Settings no other C test exercised: hc_handler_accept_any_type, hc_request_set_follow_redirects,
 * hc_batch_set_host_limit. */
static void test_type_acceptance_redirect_override_and_host_limit(void) {
    hc_handler *json = hc_handler_json_new(NULL);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/json?doc=%7B%7D&ctype=text/plain", json, &resp), HC_EUNACCEPTABLE_CONTENT_TYPE);
    CHECK_CODE(hc_handler_accept_any_type(json), HC_OK);     /* any type, or none */
    CHECK_CODE(hc_test_send(client, "GET", "/json?doc=%7B%7D&ctype=text/plain", json, &resp), HC_OK);
    hc_response_free(resp);
    hc_handler *bytes = hc_handler_bytes_new(0);
    CHECK_CODE(hc_handler_accept_type(bytes, "text/*"), HC_OK);
    CHECK_CODE(hc_handler_accept_any_type(bytes), HC_OK);    /* empties the set again */
    CHECK_CODE(hc_test_send(client, "GET", "/ctype?none=1&body=x", bytes, &resp), HC_OK);
    hc_response_free(resp);
    CHECK_CODE(hc_handler_accept_type(json, "application/json"), HC_OK);   /* until ranges are added */
    CHECK_CODE(hc_test_send(client, "GET", "/json?doc=%7B%7D&ctype=text/plain", json, &resp), HC_EUNACCEPTABLE_CONTENT_TYPE);
    hc_handler_free(json);

    /* The request's choice overrides the client's, both ways. */
    hc_handler_accept_any_status(bytes);
    hc_request *req = hc_request_new("GET", hc_url("/redirect/1"));
    hc_request_set_handler(req, bytes);
    CHECK_CODE(hc_request_set_follow_redirects(req, 0), HC_OK);
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    CHECK(hc_response_status(resp) == 302);
    hc_response_free(resp);
    hc_client *no_follow = hc_client_new();
    CHECK_CODE(hc_client_set_redirects(no_follow, 0, 10), HC_OK);
    CHECK_CODE(hc_request_set_follow_redirects(req, 1), HC_OK);
    CHECK_CODE(hc_client_send(no_follow, req, &resp), HC_OK);
    CHECK(hc_response_status(resp) == 200);
    hc_response_free(resp);
    hc_request_free(req);
    hc_client_free(no_follow);
    hc_handler_free(bytes);

    /* A host limit of 1: every request still completes, each once. */
    hc_batch *batch = hc_batch_new(client);
    CHECK_CODE(hc_batch_set_host_limit(batch, 1), HC_OK);
    struct done_count done[4] = {{0, HC_ELOCAL_IO, 0}, {0, HC_ELOCAL_IO, 0}, {0, HC_ELOCAL_IO, 0}, {0, HC_ELOCAL_IO, 0}};
    for (int i = 0; i < 4; i++) {
        req = hc_request_new("GET", hc_url("/bytes/50"));
        CHECK_CODE(hc_batch_add(batch, req, count_done, &done[i]), HC_OK);
        hc_request_free(req);
    }
    CHECK_CODE(hc_batch_run(batch), HC_OK);
    for (int i = 0; i < 4; i++) CHECK(done[i].calls == 1 && done[i].code == HC_OK && done[i].len == 50);
    hc_batch_free(batch);
}

PROMISES_MAIN(test_getters_of_another_handlers_content_are_invalid_arguments,
              test_json_getters_give_their_documented_codes,
              test_form_and_body_codes,
              test_type_acceptance_redirect_override_and_host_limit,
              test_json_accept_header_and_client_headers)
