/* Issue 28 ("Mends"): what the library decides for every front, seen through the C ABI. Run
 * under valgrind by scripts/valgrind.sh, with no suppression: pooled handles reset between
 * requests of a client with cookies must not leak libcurl's cookie-file list. */
#include "testutil.h"

/* A pooled handle is reset after a request with a body (or a custom method): the next request
 * configures it again, joining the client's cookie jar again. */
static void test_handles_reset_between_requests_keep_the_jar(void) {
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/cookie?set=k=v", NULL, &r), HC_OK);
    hc_response_free(r);
    for (int i = 0; i < 3; i++) {
        hc_request *post = hc_request_new("POST", hc_url("/echo"));
        CHECK_CODE(hc_request_set_body(post, (const uint8_t *)"x", 1, "text/plain"), HC_OK);
        CHECK_CODE(hc_client_send(client, post, &r), HC_OK);
        hc_response_free(r);
        hc_request_free(post);
        CHECK_CODE(hc_test_send(client, "GET", "/cookie", NULL, &r), HC_OK);
        const uint8_t *data = NULL;
        size_t len = 0;
        CHECK_CODE(hc_response_bytes(r, &data, &len), HC_OK);
        CHECK(len > 0 && memmem(data, len, "k=v", 3) != NULL);
        hc_response_free(r);
    }
    /* A request refused after its handle was configured, then the client freed. */
    hc_handler *json = hc_handler_json_new(NULL);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/10", json, &r), HC_EUNACCEPTABLE_CONTENT_TYPE);
    hc_handler_free(json);
    hc_client_free(client);
}

static void test_text_decode_follows_the_text_handler(void) {
    static const uint8_t bom16[] = {0xFF, 0xFE, 'h', 0, 'i', 0};
    static const uint8_t latin1[] = {'c', 'a', 'f', 0xE9};
    uint8_t *out = NULL;
    size_t len = 0;
    CHECK_CODE(hc_text_decode(bom16, sizeof bom16, "text/plain", HC_ENCODING_AUTO, 1, &out, &len), HC_OK);
    CHECK(len == 2 && memcmp(out, "hi", 2) == 0);
    hc_buffer_free(out);
    CHECK_CODE(hc_text_decode(latin1, sizeof latin1, "text/plain; charset=latin1", HC_ENCODING_AUTO, 1, &out, &len),
               HC_OK);
    CHECK(len == 5 && strcmp((char *)out, "caf\xc3\xa9") == 0);
    hc_buffer_free(out);
    CHECK_CODE(hc_text_decode(latin1, sizeof latin1, NULL, HC_ENCODING_AUTO, 1, &out, &len), HC_EDECODE);
    CHECK(hc_error_offset(hc_error_last()) == 3);
    CHECK_CODE(hc_text_decode(latin1, sizeof latin1, NULL, HC_ENCODING_AUTO, 0, &out, &len), HC_OK);
    CHECK(len == 6 && memcmp(out, "caf\xef\xbf\xbd", 6) == 0);
    hc_buffer_free(out);
    CHECK_CODE(hc_text_decode(NULL, 0, NULL, HC_ENCODING_AUTO, 1, &out, &len), HC_OK);
    CHECK(len == 0 && out[0] == 0);
    hc_buffer_free(out);
    CHECK_CODE(hc_text_decode(latin1, sizeof latin1, NULL, HC_ENCODING_AUTO, 1, NULL, &len), HC_EINVALID_ARG);
}

static void test_check_status_fails_as_a_rejection(void) {
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    const char *path = "/status/404?json=1&message=gone";
    CHECK_CODE(hc_test_send(client, "GET", path, NULL, &r), HC_EUNACCEPTABLE_STATUS);
    char rejected[256];
    snprintf(rejected, sizeof rejected, "%s", hc_error_message(hc_error_last()));
    hc_handler *any = hc_handler_bytes_new(0);
    CHECK_CODE(hc_handler_accept_any_status(any), HC_OK);
    CHECK_CODE(hc_test_send(client, "GET", path, any, &r), HC_OK);
    CHECK_CODE(hc_response_check_status(r), HC_EUNACCEPTABLE_STATUS);
    const hc_error *err = hc_error_last();
    CHECK(strcmp(hc_error_message(err), rejected) == 0 && strcmp(rejected, "HTTP 404 Not Found: gone") == 0);
    CHECK(hc_error_status(err) == 404 && strcmp(hc_error_method(err), "GET") == 0);
    CHECK(strcmp(hc_error_url(err), hc_url(path)) == 0);
    CHECK(hc_error_server_message(err) && strcmp(hc_error_server_message(err), "gone") == 0);
    hc_response_free(r);
    CHECK_CODE(hc_test_send(client, "GET", "/status/201", any, &r), HC_OK);
    CHECK_CODE(hc_response_check_status(r), HC_OK);
    hc_response_free(r);
    CHECK_CODE(hc_response_check_status(NULL), HC_EINVALID_ARG);
    hc_handler_free(any);
    hc_client_free(client);
}

static void test_defaults_are_the_librarys(void) {
    CHECK(hc_batch_default_concurrency() == 64);
    CHECK(hc_form_default_array_encoding() == HC_FORM_ARRAYS_BRACKETS);
}

static int count_record(void *userdata, size_t index, const hc_json *value) {
    (void)index; (void)value;
    ++*(int *)userdata;
    return 0;
}

static void test_auto_framing_reads_json_seq(void) {
    hc_records_options opts;
    CHECK_CODE(hc_records_options_init(&opts, HC_RECORDS_OPTIONS_VERSION), HC_OK);
    CHECK(opts.framing == HC_JSON_AUTO);
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    int seen = 0;
    hc_handler *records = hc_handler_json_lines_new(count_record, NULL, &seen, NULL);
    CHECK_CODE(hc_test_send(client, "GET", "/ctype?type=application/json-seq&body=%1E1%0A%1E%7B%7D%0A", records, &r),
               HC_OK);
    CHECK(seen == 2);
    hc_response_free(r);
    hc_handler_free(records);
    hc_client_free(client);
}

static void test_redirect_not_followed_is_the_answer(void) {
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    hc_request *req = hc_request_new("GET", hc_url("/redirect/1"));
    CHECK_CODE(hc_request_set_follow_redirects(req, 0), HC_OK);
    CHECK_CODE(hc_client_send(client, req, &r), HC_OK);
    CHECK(hc_response_status(r) == 302);
    CHECK(hc_response_header(r, "location") && strcmp(hc_response_header(r, "location"), "/redirect/0") == 0);
    hc_response_free(r);
    hc_request_free(req);
    hc_client_free(client);
}

static void test_links(void) {
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/ctype?link=%3Chttps%3A%2F%2Fx%2F2%3E%3B%20rel%3D%22next%22", NULL, &r),
               HC_OK);
    CHECK(hc_response_link_count(r) == 1);
    const char *url = NULL, *name = NULL, *value = NULL;
    size_t params = 0;
    CHECK_CODE(hc_response_link_at(r, 0, &url, &params), HC_OK);
    CHECK(url && strcmp(url, "https://x/2") == 0 && params == 1);
    CHECK_CODE(hc_response_link_param_at(r, 0, 0, &name, &value), HC_OK);
    CHECK(strcmp(name, "rel") == 0 && strcmp(value, "next") == 0);
    CHECK_CODE(hc_response_link_param_at(r, 0, 1, &name, &value), HC_EINVALID_ARG);
    CHECK_CODE(hc_response_link_at(r, 1, &url, NULL), HC_EINVALID_ARG);
    hc_response_free(r);
    hc_client_free(client);
}

struct seen_progress { int64_t first_received; int64_t last_received; int64_t last_expected; int calls; };

static int note_progress(void *userdata, int64_t received, int64_t expected, int64_t decoded, int64_t sent,
                         int64_t to_send) {
    struct seen_progress *s = userdata;
    (void)decoded; (void)sent; (void)to_send;
    if (s->calls++ == 0) s->first_received = received;
    s->last_received = received;
    if (expected) s->last_expected = expected;
    return 0;
}

static void test_resumed_progress_counts_the_part(void) {
    char dir[] = "/tmp/hc-mends-XXXXXX", path[128], part[160];
    if (!mkdtemp(dir)) { CHECK(!"mkdtemp"); return; }
    snprintf(path, sizeof path, "%s/big.bin", dir);
    snprintf(part, sizeof part, "%s.part", path);
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    hc_handler *file = hc_handler_file_new(path, HC_FILE_RESUME);
    CHECK(hc_test_send(client, "GET", "/range/100000?reset_after=40000", file, &r) != HC_OK);
    FILE *f = fopen(part, "rb");
    long held = 0;
    if (f) { fseek(f, 0, SEEK_END); held = ftell(f); fclose(f); }
    CHECK(held > 0 && held < 100000);
    struct seen_progress seen = {0, 0, 0, 0};
    hc_request *req = hc_request_new("GET", hc_url("/range/100000"));
    hc_request_set_handler(req, file);
    CHECK_CODE(hc_request_set_progress(req, note_progress, &seen), HC_OK);
    CHECK_CODE(hc_client_send(client, req, &r), HC_OK);
    CHECK(seen.calls > 0 && seen.first_received == held);
    CHECK(seen.last_received == 100000 && seen.last_expected == 100000);
    hc_response_free(r);
    hc_request_free(req);
    hc_handler_free(file);
    hc_client_free(client);
    char meta[176];
    snprintf(meta, sizeof meta, "%s.meta", part);
    unlink(path);
    unlink(part);
    unlink(meta);
    rmdir(dir);
}

int main(void) {
    hc_test_server_start();
    test_handles_reset_between_requests_keep_the_jar();
    test_text_decode_follows_the_text_handler();
    test_check_status_fails_as_a_rejection();
    test_defaults_are_the_librarys();
    test_auto_framing_reads_json_seq();
    test_redirect_not_followed_is_the_answer();
    test_links();
    test_resumed_progress_counts_the_part();
    return hc_test_finish();
}
