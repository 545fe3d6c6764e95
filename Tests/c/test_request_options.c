/* hc_request_options: a request's settings in one versioned struct and one call, the same
 * effect as the setters; checked as a whole before anything is applied; the library's defaults
 * read through hc_default_*. */
#include "testutil.h"

static hc_client *client;

/* The request to `path` with `opts` applied, sent; returns the code (the response freed). */
static hc_code send_with(const char *path, const hc_request_options *opts, int *status) {
    hc_request *req = hc_request_new("GET", hc_url(path));
    hc_code rc = hc_request_apply_options(req, opts);
    if (rc == HC_OK) {
        hc_response *resp = NULL;
        rc = hc_client_send(client, req, &resp);
        if (status) *status = resp ? hc_response_status(resp) : 0;
        hc_response_free(resp);
    }
    hc_request_free(req);
    return rc;
}

static void test_init_leaves_every_setting_to_the_client(void) {
    hc_request_options opts;
    memset(&opts, 0x7f, sizeof opts);
    CHECK_CODE(hc_request_options_init(&opts, sizeof opts), HC_OK);
    CHECK(opts.struct_size == sizeof opts);
    CHECK(opts.timeout_ms == 0 && opts.connect_timeout_ms == 0 && opts.read_timeout_ms == 0);
    CHECK(opts.follow_redirects == -1 && opts.max_redirects == -1 && opts.proxy == NULL);
    int status = 0;
    CHECK_CODE(send_with("/redirect/2", &opts, &status), HC_OK);   /* the client follows */
    CHECK(status == 200);
}

static void test_one_call_sets_redirects_and_time_limits(void) {
    hc_request_options opts;
    hc_request_options_init(&opts, sizeof opts);
    opts.follow_redirects = 0;
    int status = 0;
    CHECK_CODE(send_with("/redirect/2", &opts, &status), HC_OK);   /* the 302 is the answer */
    CHECK(status == 302);
    hc_request_options_init(&opts, sizeof opts);
    opts.max_redirects = 1;
    CHECK_CODE(send_with("/redirect/3", &opts, NULL), HC_ETOO_MANY_REDIRECTS);
    hc_request_options_init(&opts, sizeof opts);
    opts.timeout_ms = 100;
    CHECK_CODE(send_with("/slow?bytes=100&delay=1", &opts, NULL), HC_ETIMEOUT);
    opts.timeout_ms = HC_TIMEOUT_NONE;   /* lifts a client's limit */
    CHECK_CODE(send_with("/slow?bytes=100&delay=0.05", &opts, NULL), HC_OK);
}

static void test_a_bad_field_leaves_the_request_unchanged(void) {
    hc_request_options opts;
    hc_request_options_init(&opts, sizeof opts);
    opts.follow_redirects = 0;
    opts.timeout_ms = -5;   /* checked before follow_redirects is applied */
    hc_request *req = hc_request_new("GET", hc_url("/redirect/1"));
    CHECK_CODE(hc_request_apply_options(req, &opts), HC_EINVALID_ARG);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    CHECK(resp && hc_response_status(resp) == 200);   /* still followed */
    hc_response_free(resp);
    hc_request_options_init(&opts, sizeof opts);
    opts.proxy = "gopher://127.0.0.1:1";
    CHECK_CODE(hc_request_apply_options(req, &opts), HC_EINVALID_ARG);
    hc_request_options_init(&opts, sizeof opts);
    opts.max_redirects = -2;
    CHECK_CODE(hc_request_apply_options(req, &opts), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_apply_options(NULL, &opts), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_apply_options(req, NULL), HC_EINVALID_ARG);
    hc_request_free(req);
}

/* The struct is versioned by its size: too small is refused, larger is read when the fields
 * this library does not know are zero (a newer header's, left at their defaults). */
static void test_struct_size_versions_the_struct(void) {
    struct { hc_request_options known; long newer_field; } bigger;
    CHECK_CODE(hc_request_options_init(&bigger.known, sizeof bigger), HC_OK);
    CHECK(bigger.known.struct_size == sizeof bigger && bigger.newer_field == 0);
    bigger.known.follow_redirects = 0;
    int status = 0;
    CHECK_CODE(send_with("/redirect/1", &bigger.known, &status), HC_OK);
    CHECK(status == 302);
    bigger.newer_field = 7;
    CHECK_CODE(send_with("/redirect/1", &bigger.known, NULL), HC_EINVALID_ARG);
    hc_request_options small;
    CHECK_CODE(hc_request_options_init(&small, sizeof small - 1), HC_EINVALID_ARG);
    hc_request_options_init(&small, sizeof small);
    small.struct_size = 8;
    CHECK_CODE(send_with("/redirect/1", &small, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_options_init(NULL, sizeof small), HC_EINVALID_ARG);
}

static void test_the_defaults_are_the_documented_ones(void) {
    CHECK(hc_default_connect_timeout_ms() == 30000);
    CHECK(hc_default_max_redirects() == 10);
    CHECK(hc_default_rejected_body_limit() == 65536);
    CHECK(hc_default_retry_total() == 3);
    CHECK(hc_default_retry_backoff_ms() == 100);
    CHECK(hc_default_retry_cap_ms() == 30000);
    {
        int statuses[8] = {0};
        CHECK(hc_default_retry_statuses(NULL, 0) == 4);
        CHECK(hc_default_retry_statuses(statuses, 2) == 4);
        CHECK(statuses[0] == 429 && statuses[1] == 502 && statuses[2] == 0);
        CHECK(hc_default_retry_statuses(statuses, 8) == 4);
        CHECK(statuses[2] == 503 && statuses[3] == 504 && statuses[4] == 0);
    }
    /* And a client uses them: 10 redirects followed, the 11th refused. */
    hc_request_options opts;
    hc_request_options_init(&opts, sizeof opts);
    CHECK_CODE(send_with("/redirect/10", &opts, NULL), HC_OK);
    CHECK_CODE(send_with("/redirect/11", &opts, NULL), HC_ETOO_MANY_REDIRECTS);
}

int main(void) {
    hc_test_server_start();
    client = hc_client_new();
    test_init_leaves_every_setting_to_the_client();
    test_one_call_sets_redirects_and_time_limits();
    test_a_bad_field_leaves_the_request_unchanged();
    test_struct_size_versions_the_struct();
    test_the_defaults_are_the_documented_ones();
    hc_client_free(client);
    return hc_test_finish();
}
