/* Issue 31 on the C front: links that misbehave (Tests/server/faultproxy.py between the client
 * and the test server). A download reset mid-way resumes to the exact bytes (the file handler's
 * digest covers the part kept on disk, and every byte is compared); a stall fires the read and
 * low-speed limits, a capped link the total limit, each as HC_ETIMEOUT within bounds; a dripped
 * head, a capped link and latency with jitter still deliver the exact body; an event stream cut
 * mid-event reconnects with Last-Event-ID and no event is lost, repeated or spliced; a reset is
 * HC_ETRANSPORT with libcurl's receive error and the response it broke. Each test is bounded by
 * its limits (seconds), and checks that the proxy did inject its fault. */
#include "faultproxy.h"
#include <sys/stat.h>

#define CURLE_RECV_ERROR 56

static hc_client *client;
static int upstream;

/* GET `url` into `handler` (NULL: bytes) with `client`. */
static hc_code get(hc_client *c, const char *url, hc_handler *handler, hc_response **out) {
    hc_request *req = hc_request_new("GET", url);
    if (!req) return hc_error_code(hc_error_last());
    if (handler) hc_request_set_handler(req, handler);
    hc_code rc = hc_client_send(c, req, out);
    hc_request_free(req);
    return rc;
}

/* A client whose only limit is `timeout_ms` total (0: none) and `read_timeout_ms` of silence. */
static hc_client *client_with(long timeout_ms, long read_timeout_ms) {
    hc_client *c = hc_client_new();
    CHECK_CODE(hc_client_set_timeout_ms(c, timeout_ms), HC_OK);
    CHECK_CODE(hc_client_set_read_timeout_ms(c, read_timeout_ms), HC_OK);
    return c;
}

static int64_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

/* Whether the file at `path` holds exactly the first `n` bytes of /range (i % 251). */
static int file_is_expected(const char *path, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static uint8_t buf[65536];
    size_t at = 0, got;
    int same = 1;
    while (same && (got = fread(buf, 1, sizeof buf, f)) > 0) {
        same = fault_expected(buf, got, at);
        at += got;
    }
    fclose(f);
    return same && at == n;
}

/* ---------------------------------------------------------------- downloads */

static void test_a_reset_download_resumes_to_the_exact_bytes(void) {
    /* sha256 of /range/3000000 (byte i is i % 251), as hashlib computes it. */
    const char *sha256 = "4d3870d4655ed773027a713ea136507d22e076248e0e9cc920a996039653b76f";
    const size_t n = 3000000;
    char dir[] = "/tmp/hc-faults-XXXXXX", path[128], part[160], meta[192];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/big.bin", dir);
    snprintf(part, sizeof part, "%s.part", path);
    snprintf(meta, sizeof meta, "%s.part.meta", path);
    const char *args[] = {"--reset-after", "1200000", "--faulty", "1", NULL};
    fault_proxy proxy = fault_proxy_start(upstream, args);
    const char *url = fault_url(&proxy, "/range/3000000");

    hc_handler *file = hc_handler_file_new(path, HC_FILE_RESUME);
    CHECK_CODE(hc_handler_file_set_digest(file, "sha256", sha256), HC_OK);
    hc_response *resp = NULL;
    CHECK_CODE(get(client, url, file, &resp), HC_ETRANSPORT);
    CHECK(hc_error_curl_code(hc_error_last()) == CURLE_RECV_ERROR);
    CHECK(resp == NULL && file_size(path) == -1);          /* nothing half-written in its place */
    int64_t kept = file_size(part);
    CHECK(kept > 0 && kept <= 1200000);
    CHECK(file_is_expected(part, (size_t)kept));            /* the part is the origin's prefix */

    CHECK_CODE(get(client, url, file, &resp), HC_OK);      /* the second connection is clean */
    int64_t written = -1, size = -1;
    int resumed = -1;
    CHECK_CODE(hc_response_file(resp, NULL, &written, &size, &resumed), HC_OK);
    CHECK(hc_response_status(resp) == 206 && resumed == 1);
    CHECK(size == (int64_t)n && written == (int64_t)n - kept);
    hc_response_free(resp);
    CHECK(file_is_expected(path, n));                       /* and the digest matched, or no OK */
    CHECK(file_size(part) == -1);
    int connections, resets;
    fault_proxy_stats(&proxy, &connections, &resets);
    CHECK(connections == 2 && resets == 1);
    fault_proxy_stop(&proxy);
    hc_handler_free(file);
    unlink(meta);
    rmdir(dir);
}

/* A part resumed after a reset and then spliced with the wrong bytes would be caught: the
 * digest covers the part already on disk. A wrong digest fails, and leaves no file and no part. */
static void test_a_resumed_download_with_the_wrong_digest_leaves_nothing(void) {
    char dir[] = "/tmp/hc-faults-XXXXXX", path[128], part[160];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/big.bin", dir);
    snprintf(part, sizeof part, "%s.part", path);
    const char *args[] = {"--reset-after", "300000", "--faulty", "1", NULL};
    fault_proxy proxy = fault_proxy_start(upstream, args);
    const char *url = fault_url(&proxy, "/range/1000000");
    hc_handler *file = hc_handler_file_new(path, HC_FILE_RESUME);
    CHECK_CODE(hc_handler_file_set_digest(file, "sha256",
               "0000000000000000000000000000000000000000000000000000000000000000"), HC_OK);
    hc_response *resp = NULL;
    CHECK_CODE(get(client, url, file, &resp), HC_ETRANSPORT);
    CHECK(file_size(part) > 0);
    CHECK_CODE(get(client, url, file, &resp), HC_ECHECKSUM_MISMATCH);
    CHECK(resp == NULL && file_size(path) == -1 && file_size(part) == -1);
    fault_proxy_stop(&proxy);
    hc_handler_free(file);
    char meta[192];
    snprintf(meta, sizeof meta, "%s.meta", part);
    unlink(meta);
    rmdir(dir);
}

/* ---------------------------------------------------------------- time limits */

/* GET `path` through a proxy started with `args`, on a client with `timeout_ms` total,
 * `read_timeout_ms` of silence and a low-speed limit of `low_speed` B/s for 1 s (0: none):
 * checks HC_ETIMEOUT came after more than `at_least` s and within `at_most` (times the valgrind
 * slack), with no response. Returns the status the error names (0: no head had arrived). */
static int expect_timeout(const char *const *args, const char *path, long timeout_ms,
                          long read_timeout_ms, long low_speed, double at_least, double at_most) {
    fault_proxy proxy = fault_proxy_start(upstream, args);
    hc_client *c = client_with(timeout_ms, read_timeout_ms);
    if (low_speed) CHECK_CODE(hc_client_set_low_speed(c, low_speed, 1), HC_OK);
    hc_response *resp = NULL;
    double start = fault_now();
    CHECK_CODE(get(c, fault_url(&proxy, path), NULL, &resp), HC_ETIMEOUT);
    double waited = fault_now() - start;
    int status = hc_error_status(hc_error_last());
    if (!(waited > at_least && waited < at_most * fault_slack()))
        fprintf(stderr, "%s: the limit fired after %.2f s, not within %.1f-%.1f s\n", path, waited, at_least, at_most);
    CHECK(waited > at_least && waited < at_most * fault_slack());
    CHECK(resp == NULL);
    hc_client_free(c);
    fault_proxy_stop(&proxy);
    return status;
}

/* A stall of 5 s after 20 kB: the 0.5 s read limit fires, not the stall's end; the head had
 * arrived, and the error names its status. */
static void test_a_stall_fires_the_read_timeout(void) {
    const char *args[] = {"--stall-after", "20000", "--stall", "5", NULL};
    CHECK(expect_timeout(args, "/bytes/200000", 0, 500, 0, 0.4, 4.0) == 200);
}

/* A link capped at 500 B/s under a low-speed limit of 1000 B/s for 1 s: HC_ETIMEOUT once the
 * second has passed, within seconds. */
static void test_a_slow_link_fires_the_low_speed_limit(void) {
    const char *args[] = {"--rate", "500", NULL};
    expect_timeout(args, "/bytes/200000", 0, 0, 1000, 0.9, 4.0);
}

/* A stall after a 20 kB burst under the same limit: HC_ETIMEOUT too, but libcurl measures the
 * speed as an average over its last 5 seconds, so the burst keeps the average up for as long:
 * the limit fires 5 to 6 s into the stall, not 1 s (the header says so). */
static void test_a_stall_after_a_burst_fires_the_low_speed_limit_late(void) {
    const char *args[] = {"--stall-after", "20000", "--stall", "15", NULL};
    expect_timeout(args, "/bytes/200000", 0, 0, 1000, 0.9, 9.0);
}

/* 1 MB at 100 kB/s takes 10 s: a 0.7 s total limit fires, though bytes keep coming. */
static void test_a_total_timeout_fires_on_a_capped_link(void) {
    const char *args[] = {"--rate", "100000", NULL};
    expect_timeout(args, "/bytes/1000000", 700, 0, 0, 0.6, 4.0);
}

/* ~150 head bytes 50 ms apart take seconds: a 0.5 s total limit is a timeout, not a bad
 * response, and no response is named (no complete head). */
static void test_a_dripping_head_past_the_limit_is_a_timeout(void) {
    const char *args[] = {"--drip-headers", "0.05", NULL};
    CHECK(expect_timeout(args, "/bytes/10", 500, 0, 0, 0.4, 4.0) == 0);
}

/* ---------------------------------------------------------------- exact bodies */

static int body_is_expected(hc_response *resp, size_t n) {
    const uint8_t *data = NULL;
    size_t len = 0;
    return resp && hc_response_bytes(resp, &data, &len) == HC_OK && len == n && fault_expected(data, len, 0);
}

static void test_a_head_dripped_byte_by_byte_is_read_whole(void) {
    const char *args[] = {"--drip-headers", "0.002", NULL};
    fault_proxy proxy = fault_proxy_start(upstream, args);
    hc_response *resp = NULL;
    CHECK_CODE(get(client, fault_url(&proxy, "/bytes/1000"), NULL, &resp), HC_OK);
    CHECK(resp && hc_response_status(resp) == 200);
    const char *length = resp ? hc_response_header(resp, "Content-Length") : NULL;
    CHECK(length && strcmp(length, "1000") == 0);
    CHECK(body_is_expected(resp, 1000));
    hc_response_free(resp);
    fault_proxy_stop(&proxy);
}

/* 200 kB at 400 kB/s: at least 0.4 s, and every byte. */
static void test_a_bandwidth_cap_slows_the_body_and_keeps_it_whole(void) {
    const char *args[] = {"--rate", "400000", NULL};
    fault_proxy proxy = fault_proxy_start(upstream, args);
    hc_response *resp = NULL;
    double start = fault_now();
    CHECK_CODE(get(client, fault_url(&proxy, "/bytes/200000"), NULL, &resp), HC_OK);
    CHECK(fault_now() - start >= 0.4);
    CHECK(body_is_expected(resp, 200000));
    hc_response_free(resp);
    fault_proxy_stop(&proxy);
}

static void test_latency_and_jitter_keep_every_body_whole(void) {
    const char *args[] = {"--latency", "0.002", "--jitter", "0.01", NULL};
    fault_proxy proxy = fault_proxy_start(upstream, args);
    const size_t sizes[] = {1, 5000, 70000, 300000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char path[64];
        snprintf(path, sizeof path, "/bytes/%zu", sizes[i]);
        hc_response *resp = NULL;
        CHECK_CODE(get(client, fault_url(&proxy, path), NULL, &resp), HC_OK);
        CHECK(body_is_expected(resp, sizes[i]));
        hc_response_free(resp);
    }
    fault_proxy_stop(&proxy);
}

/* ---------------------------------------------------------------- errors */

/* A reset after 50 kB of a 500 kB body: the transport code with libcurl's receive error, not a
 * timeout, and the error names the response that broke. */
static void test_a_reset_mid_body_is_a_transport_error(void) {
    const char *args[] = {"--reset-after", "50000", NULL};
    fault_proxy proxy = fault_proxy_start(upstream, args);
    hc_response *resp = NULL;
    CHECK_CODE(get(client, fault_url(&proxy, "/bytes/500000"), NULL, &resp), HC_ETRANSPORT);
    const hc_error *err = hc_error_last();
    CHECK(hc_error_curl_code(err) == CURLE_RECV_ERROR);
    CHECK(hc_error_status(err) == 200);
    CHECK(resp == NULL);
    int connections, resets;
    fault_proxy_stats(&proxy, &connections, &resets);
    CHECK(connections == 1 && resets == 1);
    fault_proxy_stop(&proxy);
}

/* ---------------------------------------------------------------- event streams */

struct events { int n; char ids[16][8]; char data[16][32]; int bad; int comments; };

static int on_event(void *userdata, const char *event, size_t event_len, const char *data, size_t data_len,
                    const char *id, size_t id_len, int64_t retry) {
    (void)event; (void)event_len; (void)retry;
    struct events *e = userdata;
    if (e->n >= 16 || id_len >= sizeof e->ids[0] || data_len >= sizeof e->data[0]) { e->bad++; return 0; }
    memcpy(e->ids[e->n], id, id_len + 1);
    memcpy(e->data[e->n], data, data_len + 1);
    e->n++;
    return 0;
}

/* The server opens each connection with a comment naming the Last-Event-ID it received: it must
 * be the id of the last event dispatched before it ("" for none), or the stream lost or repeats
 * events. */
static int on_comment(void *userdata, const char *text, size_t len) {
    struct events *e = userdata;
    char want[64];
    snprintf(want, sizeof want, " last-event-id=%s", e->n > 0 ? e->ids[e->n - 1] : "");
    if (len != strlen(want) || memcmp(text, want, len) != 0) {
        fprintf(stderr, "after %d events the server got: %.*s\n", e->n, (int)len, text);
        e->bad++;
    }
    e->comments++;
    return 0;
}

/* The stream is cut at offsets that fall (with the test server's 167-byte head, a 34-byte
 * comment chunk, then one 27-byte chunk per event: "15\r\n" "id: k\n" "data: event k\n" "\n"
 * "\r\n") in the comment, between events 2 and 3, inside event 3's id line, inside event 4's
 * data line, after event 5's data line but before the blank line that dispatches it, just after
 * that blank line, and in the chunked body's last chunk. Each time it reconnects with
 * Last-Event-ID and events 1..8 arrive once each, whole, in order: nothing lost, repeated or
 * spliced from two connections (an event whose blank line never came is not dispatched, and
 * its id is not sent as Last-Event-ID, or it would be lost). */
static void test_an_event_stream_cut_mid_event_reconnects_with_nothing_lost_or_spliced(void) {
    hc_records_options opts;
    CHECK_CODE(hc_records_options_init(&opts, HC_RECORDS_OPTIONS_VERSION), HC_OK);
    opts.reconnect = 1;
    opts.max_reconnects = 3;
    const int cuts[] = {180, 255, 261, 297, 333, 334, 419};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        int cut = cuts[k];
        char at[16];
        snprintf(at, sizeof at, "%d", cut);
        const char *args[] = {"--reset-after", at, "--faulty", "1", NULL};
        fault_proxy proxy = fault_proxy_start(upstream, args);
        hc_request *req = hc_request_new("GET",
            fault_url(&proxy, "/records/sse-resume?total=8&per=8&mode=close&retry=10"));
        hc_request_set_timeout_ms(req, 20000);
        struct events e = {0};
        size_t count = 0;
        CHECK_CODE(hc_client_events(client, req, on_event, on_comment, &e, &opts, &count), HC_OK);
        CHECK(count == 8 && e.n == 8 && e.bad == 0 && e.comments >= 1);
        for (int i = 0; i < e.n && i < 8; i++) {
            char id[8], data[32];
            snprintf(id, sizeof id, "%d", i + 1);
            snprintf(data, sizeof data, "event %d", i + 1);
            if (strcmp(e.ids[i], id) != 0 || strcmp(e.data[i], data) != 0) {
                fprintf(stderr, "cut at %d: event %d is id %s data %s\n", cut, i, e.ids[i], e.data[i]);
                CHECK(0);
            }
        }
        int connections, resets;
        fault_proxy_stats(&proxy, &connections, &resets);
        CHECK(resets == 1 && connections >= 2);
        hc_request_free(req);
        fault_proxy_stop(&proxy);
    }
}

int main(void) {
    hc_test_server_start();
    upstream = fault_upstream_port();
    client = client_with(30000, 0);
    test_a_reset_download_resumes_to_the_exact_bytes();
    test_a_resumed_download_with_the_wrong_digest_leaves_nothing();
    test_a_stall_fires_the_read_timeout();
    test_a_slow_link_fires_the_low_speed_limit();
    test_a_stall_after_a_burst_fires_the_low_speed_limit_late();
    test_a_total_timeout_fires_on_a_capped_link();
    test_a_dripping_head_past_the_limit_is_a_timeout();
    test_a_head_dripped_byte_by_byte_is_read_whole();
    test_a_bandwidth_cap_slows_the_body_and_keeps_it_whole();
    test_latency_and_jitter_keep_every_body_whole();
    test_a_reset_mid_body_is_a_transport_error();
    test_an_event_stream_cut_mid_event_reconnects_with_nothing_lost_or_spliced();
    hc_client_free(client);
    return hc_test_finish();
}
