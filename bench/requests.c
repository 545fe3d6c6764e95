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
 *   requests pair-seq|pair-batch URL BLOCK ROUNDS [CONCURRENCY [EXPECTED_BYTES]]
 *
 *   pair-seq       raw-seq and hc-seq in one process, alternating blocks of BLOCK requests
 *   pair-batch     raw-multi and hc-batch likewise, at CONCURRENCY (see `paired` below)
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

/* Each contestant keeps its handles (and so its connections) between runs of requests, so that
 * the paired modes can alternate blocks of requests on warm connections. */

struct raw_seq { CURL *h; };

static void raw_seq_run(struct raw_seq *s, const char *url, int count) {
    size_t got = 0;
    for (int i = 0; i < count; i++) {
        got = 0;
        raw_setup(s->h, url, &got);
        CURLcode code = curl_easy_perform(s->h);
        raw_check(s->h, code, got);
    }
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

struct hc_seq { hc_client *c; hc_handler *h; hc_request *r; };

static void hc_seq_open(struct hc_seq *s, const char *url) {
    s->c = hc_client_new();
    s->h = hc_handler_bytes_new(0);
    s->r = hc_request_new("GET", url);
    hc_request_set_handler(s->r, s->h);
}

static void hc_seq_run(struct hc_seq *s, int count) {
    for (int i = 0; i < count; i++) {
        hc_response *resp = NULL;
        hc_code code = hc_client_send(s->c, s->r, &resp);
        hc_check(code, resp, 1);
        hc_response_free(resp);
    }
}

static void hc_seq_close(struct hc_seq *s) {
    hc_request_free(s->r);
    hc_handler_free(s->h);
    hc_client_free(s->c);
}

struct raw_multi { CURLM *m; CURL **idle; size_t *counters; int nidle, made, conc; };

static void raw_multi_open(struct raw_multi *s, int conc) {
    s->m = curl_multi_init();
    curl_multi_setopt(s->m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)conc);
    s->idle = calloc(conc, sizeof *s->idle);
    s->counters = calloc(conc, sizeof *s->counters); /* one per handle, for the size check */
    s->nidle = s->made = 0;
    s->conc = conc;
}

static void raw_multi_run(struct raw_multi *s, const char *url, int count) {
    int started = 0, done = 0, running = 0, conc = s->conc;
    while (done < count) {
        while (started < count && started - done < conc) {
            CURL *h;
            size_t *got;
            if (s->nidle) {
                h = s->idle[--s->nidle];
                curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&got);
            } else {
                h = curl_easy_init();
                got = &s->counters[s->made++];
            }
            *got = 0;
            raw_setup(h, url, got);
            curl_multi_add_handle(s->m, h);
            started++;
        }
        curl_multi_perform(s->m, &running);
        CURLMsg *msg;
        int left, finished = 0;
        while ((msg = curl_multi_info_read(s->m, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *h = msg->easy_handle;
            size_t *got;
            curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&got);
            raw_check(h, msg->data.result, *got);
            curl_multi_remove_handle(s->m, h);
            s->idle[s->nidle++] = h;
            done++;
            finished++;
        }
        /* Wait only when nothing finished: otherwise start the next transfers first (polling a
         * multi handle with no transfer in it would sleep for the whole timeout). */
        if (done < count && !finished) curl_multi_poll(s->m, NULL, 0, 100, NULL);
    }
}

static void raw_multi_close(struct raw_multi *s) {
    for (int i = 0; i < s->nidle; i++) curl_easy_cleanup(s->idle[i]);
    free(s->idle);
    free(s->counters);
    curl_multi_cleanup(s->m);
}

struct hc_batch_state { hc_client *c; hc_handler *h; hc_batch *batch; hc_request *req;
                        int added, done, count, keeps_bytes; };

static void on_done(void *u, hc_code code, hc_response *resp) {
    struct hc_batch_state *s = u;
    hc_check(code, resp, s->keeps_bytes);
    hc_response_free(resp);
    s->done++;
    if (s->added < s->count) { /* keep the batch fed without queueing everything up front */
        s->added++;
        hc_batch_add(s->batch, s->req, on_done, s);
    }
}

static void hc_batch_open(struct hc_batch_state *s, const char *url, int conc, int discard) {
    s->c = hc_client_new();
    s->h = discard ? hc_handler_discard_new() : hc_handler_bytes_new(0);
    s->batch = hc_batch_new(s->c);
    s->req = hc_request_new("GET", url);
    s->keeps_bytes = !discard;
    hc_request_set_handler(s->req, s->h);
    hc_batch_set_concurrency(s->batch, (size_t)conc);
}

static void hc_batch_run_count(struct hc_batch_state *s, int count, int conc) {
    s->added = s->done = 0;
    s->count = count;
    while (s->added < count && s->added < conc) {
        s->added++;
        hc_batch_add(s->batch, s->req, on_done, s);
    }
    hc_batch_run(s->batch);
    if (s->done != count) fail("not every request completed");
}

static void hc_batch_close(struct hc_batch_state *s) {
    hc_batch_free(s->batch);
    hc_request_free(s->req);
    hc_handler_free(s->h);
    hc_client_free(s->c);
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* pair-seq / pair-batch: raw libcurl and hc in one process, in ROUNDS rounds of one block of
 * BLOCK requests each (the first one alternating), on connections kept warm between blocks. Both
 * see the same moments of a shared machine, so machine-wide swings, which move single runs by
 * ±20% here, cancel in each round's ratio. Prints one line per round and a summary line:
 *
 *   <mode> rounds=<n> block=<n> raw=<median req/s> hc=<median req/s> ratio=<median hc/raw>
 *     [<min>-<max>] cpu_ratio=<median raw CPU/hc CPU> [<min>-<max>]
 */
static void paired(const char *mode, const char *url, int block, int rounds, int conc) {
    int batch = !strcmp(mode, "pair-batch");
    struct raw_seq rs = {NULL};
    struct hc_seq hs;
    struct raw_multi rm;
    struct hc_batch_state hb;
    if (batch) { raw_multi_open(&rm, conc); hc_batch_open(&hb, url, conc, 0); }
    else { rs.h = curl_easy_init(); hc_seq_open(&hs, url); }
    double *raw_rate = calloc(rounds, sizeof(double)), *hc_rate = calloc(rounds, sizeof(double));
    double *ratio = calloc(rounds, sizeof(double)), *cpu_ratio = calloc(rounds, sizeof(double));
    /* A warm-up block each: connections open, code and data paged in. */
    if (batch) { raw_multi_run(&rm, url, conc); hc_batch_run_count(&hb, conc, conc); }
    else { raw_seq_run(&rs, url, 10); hc_seq_run(&hs, 10); }
    for (int r = 0; r < rounds; r++) {
        double secs[2], cpu[2];
        for (int k = 0; k < 2; k++) {
            int hc = (k + r) % 2; /* which one goes first alternates */
            double t0 = now(), c0 = cpu_seconds();
            if (batch) { if (hc) hc_batch_run_count(&hb, block, conc); else raw_multi_run(&rm, url, block); }
            else { if (hc) hc_seq_run(&hs, block); else raw_seq_run(&rs, url, block); }
            secs[hc] = now() - t0;
            cpu[hc] = cpu_seconds() - c0;
        }
        raw_rate[r] = block / secs[0];
        hc_rate[r] = block / secs[1];
        ratio[r] = secs[0] / secs[1];
        cpu_ratio[r] = cpu[0] / cpu[1];
        printf("round %d raw=%.1f hc=%.1f ratio=%.3f cpu_ratio=%.3f\n", r + 1, raw_rate[r], hc_rate[r],
               ratio[r], cpu_ratio[r]);
    }
    double rmed = median(raw_rate, rounds), hmed = median(hc_rate, rounds);
    double q = median(ratio, rounds), cq = median(cpu_ratio, rounds); /* both arrays now sorted */
    printf("%s rounds=%d block=%d raw=%.1f hc=%.1f ratio=%.3f [%.3f-%.3f] cpu_ratio=%.3f [%.3f-%.3f]\n",
           mode, rounds, block, rmed, hmed, q, ratio[0], ratio[rounds - 1], cq, cpu_ratio[0],
           cpu_ratio[rounds - 1]);
    free(raw_rate); free(hc_rate); free(ratio); free(cpu_ratio);
    if (batch) { raw_multi_close(&rm); hc_batch_close(&hb); }
    else { curl_easy_cleanup(rs.h); hc_seq_close(&hs); }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s raw-seq|hc-seq|raw-multi|hc-batch|raw-multi-rss|hc-batch-rss "
                        "URL COUNT [CONCURRENCY [EXPECTED_BYTES]]\n"
                        "       %s pair-seq|pair-batch URL BLOCK ROUNDS [CONCURRENCY [EXPECTED_BYTES]]\n",
                argv[0], argv[0]);
        return 2;
    }
    const char *mode = argv[1], *url = argv[2];
    curl_global_init(CURL_GLOBAL_ALL);
    snprintf(user_agent, sizeof user_agent, "httpcontent/%s", hc_version());
    if (!strncmp(mode, "pair-", 5)) {
        int block = atoi(argv[3]), rounds = argc > 4 ? atoi(argv[4]) : 0, conc = argc > 5 ? atoi(argv[5]) : 1;
        expected = argc > 6 ? atol(argv[6]) : 0;
        if (strcmp(mode, "pair-seq") && strcmp(mode, "pair-batch")) {
            fprintf(stderr, "unknown mode %s\n", mode);
            return 2;
        }
        if (block < 1 || rounds < 1 || conc < 1) { fprintf(stderr, "BLOCK, ROUNDS, CONCURRENCY must be >= 1\n"); return 2; }
        paired(mode, url, block, rounds, conc);
        if (failures) { fprintf(stderr, "%d requests failed\n", failures); return 1; }
        return 0;
    }
    int count = atoi(argv[3]), conc = argc > 4 ? atoi(argv[4]) : 1;
    expected = argc > 5 ? atol(argv[5]) : 0;
    if (count < 1 || conc < 1) { fprintf(stderr, "COUNT and CONCURRENCY must be >= 1\n"); return 2; }
    struct raw_seq rs;
    struct hc_seq hs;
    struct raw_multi rm;
    struct hc_batch_state hb;
    int discard = !strcmp(mode, "hc-batch-rss");
    double t0 = now(), c0 = cpu_seconds();
    if (!strcmp(mode, "raw-seq")) {
        rs.h = curl_easy_init();
        raw_seq_run(&rs, url, count);
        curl_easy_cleanup(rs.h);
    } else if (!strcmp(mode, "hc-seq")) {
        hc_seq_open(&hs, url);
        hc_seq_run(&hs, count);
        hc_seq_close(&hs);
    } else if (!strcmp(mode, "raw-multi") || !strcmp(mode, "raw-multi-rss")) {
        raw_multi_open(&rm, conc);
        raw_multi_run(&rm, url, count);
        raw_multi_close(&rm);
    } else if (!strcmp(mode, "hc-batch") || discard) {
        hc_batch_open(&hb, url, conc, discard);
        hc_batch_run_count(&hb, count, conc);
        hc_batch_close(&hb);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    double secs = now() - t0, cpu = cpu_seconds() - c0;
    printf("%s %d %.4f %.1f cpu=%.4f hwm_kib=%ld\n", mode, count, secs, count / secs, cpu, vm_hwm_kib());
    if (failures) { fprintf(stderr, "%d requests failed\n", failures); return 1; }
    return 0;
}
