/* The transport end to end from C: bytes, headers, errors, limits, cancellation, NULL safety. */
#include "testutil.h"

static hc_client *client;

static hc_code fetch(const char *method, const char *path, hc_handler *handler, hc_response **out) {
    return hc_test_send(client, method, path, handler, out);
}

static void test_bytes_arrive_exactly(void) {
    hc_response *resp = NULL;
    CHECK_CODE(fetch("GET", "/bytes/100000", NULL, &resp), HC_OK);
    const uint8_t *data = NULL;
    size_t len = 0;
    CHECK_CODE(hc_response_bytes(resp, &data, &len), HC_OK);
    CHECK(len == 100000);
    int same = 1;
    for (size_t i = 0; i < len; i++) if (data[i] != i % 251) { same = 0; break; }
    CHECK(same);
    CHECK(hc_response_status(resp) == 200);
    CHECK(strcmp(hc_response_media_type(resp), "application/octet-stream") == 0);
    CHECK(hc_response_header(resp, "CONTENT-LENGTH") && strcmp(hc_response_header(resp, "content-length"), "100000") == 0);
    CHECK(hc_response_header(resp, "x-not-there") == NULL);
    CHECK(strstr(hc_response_url(resp), "/bytes/100000") != NULL);
    size_t n = hc_response_header_count(resp);
    CHECK(n >= 2);
    const char *name = NULL, *value = NULL;
    CHECK_CODE(hc_response_header_at(resp, 0, &name, &value), HC_OK);
    CHECK(name && value);
    CHECK_CODE(hc_response_header_at(resp, n, &name, &value), HC_EINVALID_ARG);
    const uint8_t *raw = NULL;
    size_t raw_len = 0;
    CHECK_CODE(hc_response_headers_raw(resp, &raw, &raw_len), HC_OK);
    CHECK(raw_len > 20 && memmem(raw, raw_len, "Content-Length: 100000\r\n", 24) != NULL);
    int64_t wire = 0, decoded = 0;
    double secs = -1;
    CHECK_CODE(hc_response_metrics(resp, &wire, &decoded, &secs), HC_OK);
    CHECK(wire == 100000 && decoded == 100000 && secs >= 0);
    hc_response_free(resp);
}

static void test_chunked_and_gzip_bodies_are_decoded(void) {
    hc_response *resp = NULL;
    CHECK_CODE(fetch("GET", "/bytes/50000?chunked=1&chunk=777", NULL, &resp), HC_OK);
    const uint8_t *data; size_t len;
    hc_response_bytes(resp, &data, &len);
    CHECK(len == 50000 && data[49999] == 49999 % 251);
    hc_response_free(resp);

    CHECK_CODE(fetch("GET", "/gzip/60000", NULL, &resp), HC_OK);
    hc_response_bytes(resp, &data, &len);
    CHECK(len == 60000 && data[59999] == 59999 % 251);
    int64_t wire = 0, decoded = 0;
    hc_response_metrics(resp, &wire, &decoded, NULL);
    CHECK(decoded == 60000 && wire < decoded);
    CHECK(strcmp(hc_response_header(resp, "content-encoding"), "gzip") == 0);
    hc_response_free(resp);
}

static void test_rejected_status_carries_status_headers_and_body(void) {
    hc_response *resp = (hc_response *)0x1;
    CHECK_CODE(fetch("GET", "/status/404", NULL, &resp), HC_EUNACCEPTABLE_STATUS);
    CHECK(resp == NULL);
    const hc_error *err = hc_error_last();
    CHECK(hc_error_code(err) == HC_EUNACCEPTABLE_STATUS);
    CHECK(hc_error_status(err) == 404);
    CHECK(strstr(hc_error_message(err), "404") != NULL);
    CHECK(hc_error_header(err, "content-type") != NULL);
    const uint8_t *body; size_t len;
    CHECK_CODE(hc_error_body(err, &body, &len), HC_OK);
    CHECK(len == 10 && memcmp(body, "status 404", 10) == 0);

    /* Accepting 404 explicitly makes it a success. */
    hc_handler *h = hc_handler_bytes_new(0);
    CHECK_CODE(hc_handler_accept_status(h, 404, 404), HC_OK);
    CHECK_CODE(fetch("GET", "/status/404", h, &resp), HC_OK);
    CHECK(hc_response_status(resp) == 404);
    hc_response_free(resp);
    CHECK_CODE(hc_handler_accept_any_status(h), HC_OK);
    CHECK_CODE(fetch("GET", "/status/500", h, &resp), HC_OK);
    hc_response_free(resp);
    hc_handler_free(h);
}

static void test_content_type_acceptance(void) {
    hc_handler *h = hc_handler_bytes_new(0);
    CHECK_CODE(hc_handler_accept_type(h, "application/*+json"), HC_OK);
    hc_response *resp = NULL;
    CHECK_CODE(fetch("GET", "/ctype?type=application/problem%2Bjson&body=x", h, &resp), HC_OK);
    hc_response_free(resp);
    CHECK_CODE(fetch("GET", "/ctype?type=text/html&body=x", h, &resp), HC_EUNACCEPTABLE_CONTENT_TYPE);
    CHECK_CODE(hc_handler_accept_type(h, "not a type"), HC_EINVALID_ARG);
    hc_handler_free(h);
}

static void test_size_limit_counts_decoded_bytes(void) {
    hc_handler *h = hc_handler_bytes_new(100000);
    hc_response *resp = NULL;
    CHECK_CODE(fetch("GET", "/gzip-bomb/5000000", h, &resp), HC_ETOO_LARGE);
    CHECK_CODE(fetch("GET", "/bytes/200000?chunked=1", h, &resp), HC_ETOO_LARGE);
    CHECK_CODE(fetch("GET", "/bytes/100000", h, &resp), HC_OK);
    hc_response_free(resp);
    hc_handler_free(h);
}

/* A HEAD response declares the length of the body a GET would get, but carries none: a size
 * limit has nothing to refuse (it failed with HC_ETOO_LARGE before any body). */
static void test_size_limit_ignores_the_length_a_head_response_declares(void) {
    hc_handler *h = hc_handler_bytes_new(10);
    hc_response *resp = NULL;
    CHECK_CODE(fetch("HEAD", "/bytes/100", h, &resp), HC_OK);
    const uint8_t *data = NULL; size_t len = 1;
    CHECK_CODE(hc_response_bytes(resp, &data, &len), HC_OK);
    CHECK(len == 0);
    CHECK(hc_response_header(resp, "Content-Length") && strcmp(hc_response_header(resp, "Content-Length"), "100") == 0);
    hc_response_free(resp);
    resp = NULL;
    CHECK_CODE(fetch("GET", "/bytes/100", h, &resp), HC_ETOO_LARGE);
    hc_handler_free(h);
}

static void test_discard_keeps_no_bytes(void) {
    hc_handler *h = hc_handler_discard_new();
    hc_response *resp = NULL;
    CHECK_CODE(fetch("GET", "/bytes/1000", h, &resp), HC_OK);
    const uint8_t *data; size_t len;
    CHECK_CODE(hc_response_bytes(resp, &data, &len), HC_EINVALID_ARG);
    CHECK(hc_response_status(resp) == 200);
    hc_response_free(resp);
    hc_handler_free(h);
}

static void test_transport_failures_have_distinct_codes(void) {
    hc_response *resp = NULL;
    CHECK_CODE(fetch("GET", "/truncated?bytes=100&declared=1000", NULL, &resp), HC_ETRANSPORT);
    CHECK(hc_error_curl_code(hc_error_last()) == 18); /* CURLE_PARTIAL_FILE */

    hc_request *req = hc_request_new("GET", hc_url("/stall?bytes=100"));
    CHECK_CODE(hc_request_set_timeout_ms(req, 300), HC_OK);
    CHECK_CODE(hc_client_send(client, req, &resp), HC_ETIMEOUT);
    hc_request_free(req);

    CHECK_CODE(fetch("GET", "/redirect/3", NULL, &resp), HC_OK);
    CHECK(strstr(hc_response_url(resp), "/redirect/0") != NULL);
    hc_response_free(resp);
    CHECK_CODE(fetch("GET", "/redirect-loop", NULL, &resp), HC_ETOO_MANY_REDIRECTS);
    CHECK_CODE(fetch("GET", "/redirect-to?url=file:///etc/passwd", NULL, &resp), HC_ETRANSPORT);

    req = hc_request_new("GET", "http://127.0.0.1:1/");
    CHECK_CODE(hc_client_send(client, req, &resp), HC_ETRANSPORT);
    hc_request_free(req);
    /* Header: a bad URL is HC_EINVALID_ARG. Other schemes are refused by hc_request_new, before
     * any connection, with a message naming the scheme (they were HC_ETRANSPORT from send). */
    static const char *const schemes[] = {"file:///etc/passwd", "ftp://127.0.0.1:1/x", "gopher://127.0.0.1:1/x"};
    static const char *const names[] = {"\"file\"", "\"ftp\"", "\"gopher\""};
    for (size_t i = 0; i < 3; i++) {
        CHECK(hc_request_new("GET", schemes[i]) == NULL);
        CHECK_CODE(hc_error_code(hc_error_last()), HC_EINVALID_ARG);
        CHECK(strstr(hc_error_message(hc_error_last()), names[i]) != NULL);
    }
    CHECK(hc_request_new("GET", "127.0.0.1:8080/x") == NULL);
    CHECK_CODE(hc_error_code(hc_error_last()), HC_EINVALID_ARG);
    hc_fetch_result fr;
    CHECK_CODE(hc_client_fetch(client, "GET", "FTP://127.0.0.1:1/x", NULL, 0, -1, &fr), HC_EINVALID_ARG);
    CHECK(fr.response == NULL);
}

static int cancel_after_first(void *userdata, int64_t received, int64_t expected, int64_t decoded,
                              int64_t sent, int64_t to_send) {
    (void)expected; (void)decoded; (void)sent; (void)to_send;
    int *calls = userdata;
    (*calls)++;
    return received > 0;
}

static void test_cancel_from_progress_callback_and_token(void) {
    int calls = 0;
    hc_request *req = hc_request_new("GET", hc_url("/slow?bytes=100&delay=0.05"));
    CHECK_CODE(hc_request_set_progress(req, cancel_after_first, &calls), HC_OK);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_ECANCELLED);
    CHECK(calls > 0);
    hc_request_free(req);

    hc_cancel *token = hc_cancel_new();
    CHECK(hc_cancel_is_cancelled(token) == 0);
    CHECK_CODE(hc_cancel_cancel(token), HC_OK);
    CHECK(hc_cancel_is_cancelled(token) == 1);
    req = hc_request_new("GET", hc_url("/bytes/10"));
    CHECK_CODE(hc_request_set_cancel(req, token), HC_OK);
    hc_cancel_free(token); /* the request keeps its own reference */
    CHECK_CODE(hc_client_send(client, req, &resp), HC_ECANCELLED);
    hc_request_free(req);
}

static void test_header_injection_refused(void) {
    hc_request *req = hc_request_new("GET", hc_url("/headers"));
    CHECK_CODE(hc_request_add_header(req, "X-Evil", "a\r\nInjected: yes"), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_add_header(req, "Bad Name", "x"), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_add_header(req, "X-Good", "fine"), HC_OK);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    const uint8_t *data; size_t len;
    hc_response_bytes(resp, &data, &len);
    CHECK(memmem(data, len, "X-Good", 6) && !memmem(data, len, "Injected", 8));
    hc_response_free(resp);
    hc_request_free(req);
    CHECK(hc_request_new("GET", "http://x/a b") == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    CHECK(hc_request_new("GE T", "http://x/") == NULL);
}

static void test_post_body_and_user_agent(void) {
    hc_request *req = hc_request_new("POST", hc_url("/echo/raw"));
    const uint8_t body[] = {'a', 0, 'b', '\n'};
    CHECK_CODE(hc_request_set_body(req, body, sizeof body, "application/x-test"), HC_OK);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    const uint8_t *data; size_t len;
    hc_response_bytes(resp, &data, &len);
    CHECK(len == 4 && memcmp(data, body, 4) == 0);
    CHECK(strcmp(hc_response_header(resp, "x-request-content-type"), "application/x-test") == 0);
    hc_response_free(resp);
    hc_request_free(req);

    CHECK_CODE(fetch("GET", "/user-agent", NULL, &resp), HC_OK);
    hc_response_bytes(resp, &data, &len);
    CHECK(len > 12 && memcmp(data, "httpcontent/", 12) == 0);
    hc_response_free(resp);
}

static void test_null_handles_are_errors_not_crashes(void) {
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(NULL, NULL, &resp), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_send(client, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_add_header(NULL, "a", "b"), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_handler(NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_timeout_ms(NULL, 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_handler_accept_status(NULL, 200, 299), HC_EINVALID_ARG);
    CHECK_CODE(hc_cancel_cancel(NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_response_bytes(NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK(hc_response_status(NULL) == 0);
    CHECK(hc_response_url(NULL) == NULL);
    CHECK(hc_request_new(NULL, NULL) == NULL);
    CHECK(hc_error_code(NULL) == HC_EINVALID_ARG);
    hc_client_free(NULL);
    hc_request_free(NULL);
    hc_response_free(NULL);
    hc_handler_free(NULL);
    hc_cancel_free(NULL);
    hc_error_clear();
    CHECK(hc_error_code(hc_error_last()) == HC_OK);
    CHECK(strcmp(hc_error_message(hc_error_last()), "") == 0);
    CHECK(strcmp(hc_code_name(HC_ETIMEOUT), "timeout") == 0);
    CHECK(strcmp(hc_code_name((hc_code)99), "unknown") == 0);
    CHECK(strcmp(hc_version(), HC_VERSION_STRING) == 0);
}

/* The redirects followed before a response, oldest first, on the response and on an error. */
static void test_redirect_history_on_responses_and_errors(void) {
    hc_response *r = NULL;
    int status = 0;
    const char *url = NULL, *headers = NULL;
    char first[1024];
    CHECK_CODE(hc_test_send(client, "GET", "/redirect/2", NULL, &r), HC_OK);
    CHECK(hc_response_history_count(r) == 2);
    CHECK_CODE(hc_response_history_at(r, 0, &status, &url, &headers), HC_OK);
    snprintf(first, sizeof first, "%s", url);
    CHECK(status == 302 && strcmp(first, hc_url("/redirect/2")) == 0);
    CHECK(headers && strstr(headers, "Location: /redirect/1\r\n") != NULL);
    CHECK_CODE(hc_response_history_at(r, 1, &status, &url, NULL), HC_OK);
    CHECK(status == 302 && strcmp(url, hc_url("/redirect/1")) == 0);
    CHECK(strcmp(hc_response_url(r), hc_url("/redirect/0")) == 0);
    CHECK_CODE(hc_response_history_at(r, 2, &status, &url, &headers), HC_EINVALID_ARG);
    CHECK_CODE(hc_response_history_at(r, 0, NULL, NULL, NULL), HC_OK);  /* any may be NULL */
    hc_response_free(r);

    CHECK_CODE(hc_test_send(client, "GET", "/redirect/0", NULL, &r), HC_OK);
    CHECK(hc_response_history_count(r) == 0);
    hc_response_free(r);

    /* A rejected status after a redirect: the error has the redirect. */
    CHECK_CODE(hc_test_send(client, "GET", "/redirect-to?url=/status/404&status=301", NULL, &r), HC_EUNACCEPTABLE_STATUS);
    hc_error *err = hc_error_copy(hc_error_last());
    CHECK(hc_error_history_count(err) == 1);
    CHECK_CODE(hc_error_history_at(err, 0, &status, &url, &headers), HC_OK);
    CHECK(status == 301 && strcmp(url, hc_url("/redirect-to?url=/status/404&status=301")) == 0);
    CHECK(strstr(headers, "Location: /status/404\r\n") != NULL);
    CHECK(strcmp(hc_error_url(err), hc_url("/status/404")) == 0);
    CHECK_CODE(hc_error_history_at(err, 1, &status, &url, &headers), HC_EINVALID_ARG);
    hc_error_free(err);
}

static void test_fetch_in_one_call(void) {
    hc_fetch_result r;
    CHECK_CODE(hc_client_fetch(client, "GET", hc_url("/bytes/1000"), NULL, 0, -1, &r), HC_OK);
    CHECK(r.response != NULL && r.status == 200 && r.bytes_len == 1000 && r.bytes != NULL);
    CHECK(r.bytes[999] == 999 % 251);
    const uint8_t *data = NULL; size_t len = 0;
    CHECK_CODE(hc_response_bytes(r.response, &data, &len), HC_OK);
    CHECK(data == r.bytes && len == 1000);
    CHECK(strcmp(hc_response_header(r.response, "content-length"), "1000") == 0);
    hc_response_free(r.response);

    /* HEAD, then GET again on the same (reused) handle: the method does not stick. */
    CHECK_CODE(hc_client_fetch(client, "HEAD", hc_url("/bytes/1000"), NULL, 0, -1, &r), HC_OK);
    CHECK(r.status == 200 && r.bytes_len == 0);
    hc_response_free(r.response);
    CHECK_CODE(hc_client_fetch(client, "GET", hc_url("/bytes/10"), NULL, 0, -1, &r), HC_OK);
    CHECK(r.status == 200 && r.bytes_len == 10);
    hc_response_free(r.response);

    /* Redirects: not followed when asked, followed again by default afterwards. */
    hc_handler *any = hc_handler_bytes_new(0);
    hc_handler_accept_any_status(any);
    CHECK_CODE(hc_client_fetch(client, "GET", hc_url("/redirect/1"), any, 0, 0, &r), HC_OK);
    CHECK(r.status == 302);
    hc_response_free(r.response);
    CHECK_CODE(hc_client_fetch(client, "GET", hc_url("/redirect/1"), any, 0, -1, &r), HC_OK);
    CHECK(r.status == 200 && r.bytes_len == 4 && memcmp(r.bytes, "done", 4) == 0);
    hc_response_free(r.response);

    /* A per-request timeout, then none. */
    CHECK_CODE(hc_client_fetch(client, "GET", hc_url("/slow?bytes=4&delay=0.3"), any, 100, -1, &r), HC_ETIMEOUT);
    CHECK(r.response == NULL && r.status == 0);
    CHECK_CODE(hc_client_fetch(client, "GET", hc_url("/slow?bytes=2&delay=0.05"), any, 0, -1, &r), HC_OK);
    CHECK(r.status == 200 && r.bytes_len == 2);
    hc_response_free(r.response);
    hc_handler_free(any);

    /* Other handlers: no bytes; a rejected status is an error with the status. */
    hc_handler *discard = hc_handler_discard_new();
    CHECK_CODE(hc_client_fetch(client, "GET", hc_url("/bytes/10"), discard, 0, -1, &r), HC_OK);
    CHECK(r.status == 200 && r.bytes == NULL && r.bytes_len == 0);
    hc_response_free(r.response);
    hc_handler_free(discard);
    CHECK_CODE(hc_client_fetch(client, "GET", hc_url("/status/404"), NULL, 0, -1, &r), HC_EUNACCEPTABLE_STATUS);
    CHECK(r.response == NULL && hc_error_status(hc_error_last()) == 404);

    /* Invalid arguments. */
    CHECK_CODE(hc_client_fetch(client, "GET", hc_url("/bytes/1"), NULL, 0, -1, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_fetch(NULL, "GET", hc_url("/bytes/1"), NULL, 0, -1, &r), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_fetch(client, NULL, hc_url("/bytes/1"), NULL, 0, -1, &r), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_fetch(client, "GET", "http://127.0.0.1/a b", NULL, 0, -1, &r), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_fetch(client, "GET", hc_url("/bytes/1"), NULL, -5, -1, &r), HC_EINVALID_ARG);
}

/* The target the test server saw for /echo, as a text response of `c`. */
static int echo_target_is(hc_client *c, const char *expected) {
    hc_handler *text = hc_handler_text_new(HC_ENCODING_AUTO, 1);
    hc_response *r = NULL;
    int found = 0;
    if (hc_test_send(c, "GET", "/echo", text, &r) == HC_OK) {
        const char *body; size_t len;
        char want[256];
        snprintf(want, sizeof want, "\"target\": \"%s\"", expected);
        found = hc_response_text(r, &body, &len) == HC_OK && strstr(body, want) != NULL;
        hc_response_free(r);
    }
    hc_handler_free(text);
    return found;
}

/* Proxy variables are read when a client is made: one made before http_proxy is set connects
 * directly (it told libcurl there is none), one made after goes through the proxy, here the
 * test server itself, which then sees the absolute-form target a proxy gets. */
static void test_proxy_variables_are_read_when_a_client_is_made(void) {
    static const char *names[] = {"http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unsetenv(names[i]);
    hc_client *before = hc_client_new();
    setenv("http_proxy", hc_base, 1);
    hc_client *after = hc_client_new();
    CHECK(echo_target_is(before, "/echo"));
    CHECK(echo_target_is(after, hc_url("/echo")));
    unsetenv("http_proxy");
    hc_client_free(before);
    hc_client_free(after);
}

int main(void) {
    hc_test_server_start();
    client = hc_client_new();
    CHECK(client != NULL);
    test_bytes_arrive_exactly();
    test_chunked_and_gzip_bodies_are_decoded();
    test_rejected_status_carries_status_headers_and_body();
    test_content_type_acceptance();
    test_size_limit_counts_decoded_bytes();
    test_size_limit_ignores_the_length_a_head_response_declares();
    test_discard_keeps_no_bytes();
    test_transport_failures_have_distinct_codes();
    test_cancel_from_progress_callback_and_token();
    test_header_injection_refused();
    test_post_body_and_user_agent();
    test_fetch_in_one_call();
    test_redirect_history_on_responses_and_errors();
    test_null_handles_are_errors_not_crashes();
    test_proxy_variables_are_read_when_a_client_is_made();
    hc_client_free(client);
    return hc_test_finish();
}
