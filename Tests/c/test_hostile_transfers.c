/* Framing, headers, encoding and size: a body longer or shorter than announced, broken
 * chunks, resets, headers that never end or flood, bad gzip, bombs, endless and dripping bodies.
 * (Hostile servers and the security defaults: see hostile.h.) */
#include "hostile.h"

/* ---------------------------------------------------------------- framing */

static void test_body_longer_than_content_length_is_cut_and_the_excess_never_read_as_a_response(void) {
    begin();
    hc_response *r = NULL;
    CHECK_CODE(send_on(client, url("/overlong?declared=10"), hc_handler_bytes_new(0), &r, NULL), HC_OK);
    const uint8_t *data; size_t len;
    const uint8_t first[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    CHECK(hc_response_bytes(r, &data, &len) == HC_OK && len == 10 && memcmp(data, first, 10) == 0);
    hc_response_free(r);
    /* The excess carried a forged response: the next request must get the genuine one. */
    CHECK(strcmp(body_of(url("/plain"), client), "genuine") == 0);
    CHECK_CODE(get("/overlong?declared=10", hc_handler_file_new(target, 0), NULL), HC_OK);
    CHECK(file_is(target, first, 10) && entries(dir) == 1);
    end();
}

static void test_body_shorter_than_content_length_fails_and_keeps_the_old_file(void) {
    begin();
    int curl = 0;
    CHECK_CODE(get("/truncated?bytes=5000", file_handler(0), &curl), HC_ETRANSPORT);
    CHECK(curl == 18);
    CHECK(left_intact());
    end();
}

static void test_invalid_chunked_encoding_fails_and_keeps_the_old_file(void) {
    static const char *kinds[] = {"hex", "crlf", "overflow", "eof"};
    begin();
    for (int i = 0; i < 4; i++) {
        char path[64];
        snprintf(path, sizeof path, "/bad-chunk/%s", kinds[i]);
        int curl = 0;
        CHECK_CODE(get(path, file_handler(0), &curl), HC_ETRANSPORT);
        CHECK(curl == 18 || curl == 56);
        CHECK(left_intact());
    }
    end();
}

static void test_connection_reset_mid_download_keeps_the_old_file_and_no_temp_file(void) {
    begin();
    int curl = 0;
    CHECK_CODE(get("/reset-mid-body?bytes=50000", file_handler(0), &curl), HC_ETRANSPORT);
    CHECK(curl == 56);
    CHECK(left_intact());
    end();
}

/* ---------------------------------------------------------------- headers */

static void test_headers_that_never_end_time_out(void) {
    begin();
    hc_request *req = hc_request_new("GET", url("/endless-headers?delay=0.05"));
    hc_handler *h = file_handler(0);
    hc_request_set_handler(req, h);
    hc_handler_free(h);
    hc_request_set_timeout_ms(req, 1000);
    hc_response *r = NULL;
    double start = now();
    CHECK_CODE(hc_client_send(client, req, &r), HC_ETIMEOUT);
    CHECK(r == NULL && now() - start < 2.0);
    hc_request_free(req);
    CHECK(left_intact());
    end();
}

static void test_a_flood_of_headers_is_cut_off_long_before_the_timeout(void) {
    begin();
    double start = now();
    CHECK_CODE(get("/header-flood", file_handler(0), NULL), HC_ETRANSPORT);
    CHECK(now() - start < 1.5);
    CHECK(left_intact());
    end();
}

static void test_a_100_kb_header_line_is_refused(void) {
    begin();
    CHECK_CODE(get("/long-header?size=103424", file_handler(0), NULL), HC_ETRANSPORT);
    /* libcurl reports it as CURLE_OUT_OF_MEMORY with no detail: the message says what it was. */
    CHECK(strstr(hc_error_message(hc_error_last()), "header line") != NULL);
    CHECK(left_intact());
    end();
}

/* ---------------------------------------------------------------- encoding and size */

static void test_invalid_gzip_fails_and_keeps_the_old_file(void) {
    begin();
    int curl = 0;
    CHECK_CODE(get("/bad-gzip", file_handler(0), &curl), HC_ETRANSPORT);
    CHECK(curl == 61);
    CHECK(left_intact());
    end();
}

static void test_gzip_bomb_is_stopped_by_the_decoded_size_limit(void) {
    begin();
    CHECK_CODE(get("/gzip-bomb?mb=64", hc_handler_bytes_new(1 << 20), NULL), HC_ETOO_LARGE);
    CHECK_CODE(get("/gzip-bomb?mb=64", file_handler(1 << 20), NULL), HC_ETOO_LARGE);
    CHECK(left_intact());
    end();
}

static void test_a_body_that_never_ends_is_stopped_by_the_size_limit(void) {
    begin();
    double start = now();
    CHECK_CODE(get("/endless", hc_handler_bytes_new(4 << 20), NULL), HC_ETOO_LARGE);
    CHECK_CODE(get("/endless", file_handler(4 << 20), NULL), HC_ETOO_LARGE);
    CHECK(now() - start < 2.0);
    CHECK(left_intact());
    end();
}

static void test_a_drip_feed_slower_than_the_low_speed_limit_times_out(void) {
    begin();
    hc_client *slow = hc_client_new();
    CHECK_CODE(hc_client_set_low_speed(slow, 100, 1), HC_OK);
    CHECK_CODE(hc_client_set_timeout_ms(slow, 5000), HC_OK);
    double start = now();
    int curl = 0;
    CHECK_CODE(send_on(slow, url("/drip?interval=0.3"), file_handler(0), NULL, &curl), HC_ETIMEOUT);
    CHECK(curl == 28 && now() - start < 2.5);
    hc_client_free(slow);
    CHECK(left_intact());
    end();
}

HOSTILE_MAIN(test_body_longer_than_content_length_is_cut_and_the_excess_never_read_as_a_response,
             test_body_shorter_than_content_length_fails_and_keeps_the_old_file,
             test_invalid_chunked_encoding_fails_and_keeps_the_old_file,
             test_connection_reset_mid_download_keeps_the_old_file_and_no_temp_file,
             test_headers_that_never_end_time_out,
             test_a_flood_of_headers_is_cut_off_long_before_the_timeout,
             test_a_100_kb_header_line_is_refused,
             test_invalid_gzip_fails_and_keeps_the_old_file,
             test_gzip_bomb_is_stopped_by_the_decoded_size_limit,
             test_a_body_that_never_ends_is_stopped_by_the_size_limit,
             test_a_drip_feed_slower_than_the_low_speed_limit_times_out)
