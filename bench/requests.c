/* Request-rate benchmark, C side (issue 6): N small GETs of one URL, sequentially on one reused
 * connection or concurrently on a multi handle / batch, through raw libcurl and through
 * libhttpcontent. Prints one line:
 *
 *   <mode> <requests> <seconds> <req/s> cpu=<user+sys seconds> hwm_kib=<peak RSS, KiB>
 *
 *   requests MODE URL COUNT [CONCURRENCY [EXPECTED_BYTES]]
 *
 * MODE:
 *   raw-seq        one easy handle, curl_easy_perform COUNT times (reset + options each time)
 *
 * The raw modes send the User-Agent libhttpcontent sends (httpcontent/<version>), as libcurl's
 * own examples set one: every contestant puts the same request on the wire. (libcurl formats
 * that line per request, a few thousand instructions; see BENCHMARKS.md.)
 *   hc-seq         one hc_client and one hc_request (bytes handler), hc_client_send COUNT times
 *   raw-multi      a curl_multi handle fed to CONCURRENCY transfers in flight, handles reused
 *   hc-batch       an hc_batch with concurrency CONCURRENCY (bytes handler), fed from the
 *                  completion callback so that at most CONCURRENCY requests are queued
 *   raw-multi-rss  raw-multi (it keeps nothing of the body anyway); for the memory measurement
 *   hc-batch-rss   hc-batch with hc_handler_discard_new(), so that the peak RSS counts the
 *                  per-transfer machinery, not the bodies being kept
 *
 * Every transfer must succeed with status 200, and, when EXPECTED_BYTES is given (> 0), deliver
 * exactly that many body bytes; otherwise the program exits 1. The peak RSS is VmHWM from
 * /proc/self/status at the end of the run.
 */
#include <curl/curl.h>
#include <httpcontent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "benchclock.h"

static long vm_hwm_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) { kib = strtol(line + 6, NULL, 10); break; }
    fclose(f);
    return kib;
}

static char user_agent[64]; /* "httpcontent/<version>", as hc sends it */
static int failures;
static long expected = 0; /* body bytes per transfer; 0: not checked */

static void fail(const char *what) {
    if (failures++ < 5) fprintf(stderr, "failed: %s\n", what);
}

static size_t sink(char *p, size_t s, size_t n, void *u) {
    (void)p;
    *(size_t *)u += s * n;
    return s * n;
}

static void raw_setup(CURL *h, const char *url, size_t *got) {
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_USERAGENT, user_agent);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, got);
    curl_easy_setopt(h, CURLOPT_PRIVATE, got);
}

static void raw_check(CURL *h, CURLcode code, size_t got) {
    long status = 0;
    if (code != CURLE_OK) { fail(curl_easy_strerror(code)); return; }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) fail("status is not 200");
    else if (expected > 0 && got != (size_t)expected) fail("wrong body size");
}

static void raw_seq(const char *url, int count) {
    CURL *h = curl_easy_init();
    size_t got = 0;
    for (int i = 0; i < count; i++) {
        got = 0;
        raw_setup(h, url, &got);
        CURLcode code = curl_easy_perform(h);
        raw_check(h, code, got);
    }
    curl_easy_cleanup(h);
}

static void hc_check(hc_code code, hc_response *resp, int keeps_bytes) {
    if (code != HC_OK) { fail("hc request failed"); return; }
    if (hc_response_status(resp) != 200) { fail("status is not 200"); return; }
    if (keeps_bytes && expected > 0) {
        const uint8_t *data = NULL;
        size_t len = 0;
        if (hc_response_bytes(resp, &data, &len) != HC_OK || len != (size_t)expected)
            fail("wrong body size");
    }
}

static void hc_seq(const char *url, int count) {
    hc_client *c = hc_client_new();
    hc_handler *h = hc_handler_bytes_new(0);
    hc_request *r = hc_request_new("GET", url);
    hc_request_set_handler(r, h);
    for (int i = 0; i < count; i++) {
        hc_response *resp = NULL;
        hc_code code = hc_client_send(c, r, &resp);
        hc_check(code, resp, 1);
        hc_response_free(resp);
    }
    hc_request_free(r);
    hc_handler_free(h);
    hc_client_free(c);
}

static void raw_multi(const char *url, int count, int conc) {
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)conc);
    int started = 0, done = 0, running = 0;
    CURL **idle = calloc(conc, sizeof *idle);
    size_t *counters = calloc(conc, sizeof *counters); /* one per handle, for the size check */
    int nidle = 0, made = 0;
    while (done < count) {
        while (started < count && started - done < conc) {
            CURL *h;
            size_t *got;
            if (nidle) {
                h = idle[--nidle];
                curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&got);
            } else {
                h = curl_easy_init();
                got = &counters[made++];
            }
            *got = 0;
            raw_setup(h, url, got);
            curl_multi_add_handle(m, h);
            started++;
        }
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left, finished = 0;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *h = msg->easy_handle;
            size_t *got;
            curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&got);
            raw_check(h, msg->data.result, *got);
            curl_multi_remove_handle(m, h);
            idle[nidle++] = h;
            done++;
            finished++;
        }
        /* Wait only when nothing finished: otherwise start the next transfers first (polling a
         * multi handle with no transfer in it would sleep for the whole timeout). */
        if (done < count && !finished) curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    for (int i = 0; i < nidle; i++) curl_easy_cleanup(idle[i]);
    free(idle);
    free(counters);
    curl_multi_cleanup(m);
}

struct batch_state { hc_batch *batch; hc_request *req; int added, done, count, keeps_bytes; };

static void on_done(void *u, hc_code code, hc_response *resp) {
    struct batch_state *s = u;
    hc_check(code, resp, s->keeps_bytes);
    hc_response_free(resp);
    s->done++;
    if (s->added < s->count) { /* keep the batch fed without queueing everything up front */
        s->added++;
        hc_batch_add(s->batch, s->req, on_done, s);
    }
}

static void hc_batch_mode(const char *url, int count, int conc, int discard) {
    hc_client *c = hc_client_new();
    hc_handler *h = discard ? hc_handler_discard_new() : hc_handler_bytes_new(0);
    struct batch_state s = {hc_batch_new(c), hc_request_new("GET", url), 0, 0, count, !discard};
    hc_request_set_handler(s.req, h);
    hc_batch_set_concurrency(s.batch, (size_t)conc);
    while (s.added < count && s.added < conc) {
        s.added++;
        hc_batch_add(s.batch, s.req, on_done, &s);
    }
    hc_batch_run(s.batch);
    if (s.done != count) fail("not every request completed");
    hc_batch_free(s.batch);
    hc_request_free(s.req);
    hc_handler_free(h);
    hc_client_free(c);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s raw-seq|hc-seq|raw-multi|hc-batch|raw-multi-rss|hc-batch-rss "
                        "URL COUNT [CONCURRENCY [EXPECTED_BYTES]]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *url = argv[2];
    int count = atoi(argv[3]), conc = argc > 4 ? atoi(argv[4]) : 1;
    expected = argc > 5 ? atol(argv[5]) : 0;
    if (count < 1 || conc < 1) { fprintf(stderr, "COUNT and CONCURRENCY must be >= 1\n"); return 2; }
    curl_global_init(CURL_GLOBAL_ALL);
    snprintf(user_agent, sizeof user_agent, "httpcontent/%s", hc_version());
    double t0 = now(), c0 = cpu_seconds();
    if (!strcmp(mode, "raw-seq")) raw_seq(url, count);
    else if (!strcmp(mode, "hc-seq")) hc_seq(url, count);
    else if (!strcmp(mode, "raw-multi") || !strcmp(mode, "raw-multi-rss")) raw_multi(url, count, conc);
    else if (!strcmp(mode, "hc-batch")) hc_batch_mode(url, count, conc, 0);
    else if (!strcmp(mode, "hc-batch-rss")) hc_batch_mode(url, count, conc, 1);
    else { fprintf(stderr, "unknown mode %s\n", mode); return 2; }
    double secs = now() - t0, cpu = cpu_seconds() - c0;
    printf("%s %d %.4f %.1f cpu=%.4f hwm_kib=%ld\n", mode, count, secs, count / secs, cpu, vm_hwm_kib());
    if (failures) { fprintf(stderr, "%d requests failed\n", failures); return 1; }
    return 0;
}
