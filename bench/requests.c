/* Request-rate benchmark, C side: N small GETs of one URL, sequentially on one reused
 * connection or concurrently on a multi handle / batch, through raw libcurl and through
 * libhttpcontent. Prints "<mode> <requests> <seconds> <req/s>".
 *
 *   requests raw-seq|hc-seq|raw-multi|hc-batch URL COUNT [CONCURRENCY]
 */
#include <curl/curl.h>
#include <httpcontent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static size_t sink(char *p, size_t s, size_t n, void *u) {
    (void)p;
    *(size_t *)u += s * n;
    return s * n;
}

static int failures;

static void raw_seq(const char *url, int count) {
    CURL *h = curl_easy_init();
    size_t got = 0;
    for (int i = 0; i < count; i++) {
        curl_easy_reset(h);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
        if (curl_easy_perform(h) != CURLE_OK) failures++;
    }
    curl_easy_cleanup(h);
}

static void hc_seq(const char *url, int count) {
    hc_client *c = hc_client_new();
    hc_handler *h = hc_handler_bytes_new(0);
    hc_request *r = hc_request_new("GET", url);
    hc_request_set_handler(r, h);
    for (int i = 0; i < count; i++) {
        hc_response *resp = NULL;
        if (hc_client_send(c, r, &resp) != HC_OK) failures++;
        hc_response_free(resp);
    }
    hc_request_free(r);
    hc_handler_free(h);
    hc_client_free(c);
}

static void raw_multi(const char *url, int count, int conc) {
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)conc);
    size_t got = 0;
    int started = 0, done = 0, running = 0;
    CURL **idle = calloc(conc, sizeof *idle);
    int nidle = 0;
    while (done < count) {
        while (started < count && started - done < conc) {
            CURL *h = nidle ? idle[--nidle] : curl_easy_init();
            curl_easy_reset(h);
            curl_easy_setopt(h, CURLOPT_URL, url);
            curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
            curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
            curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
            curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
            curl_multi_add_handle(m, h);
            started++;
        }
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            if (msg->data.result != CURLE_OK) failures++;
            curl_multi_remove_handle(m, msg->easy_handle);
            idle[nidle++] = msg->easy_handle;
            done++;
        }
        if (done < count) curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    for (int i = 0; i < nidle; i++) curl_easy_cleanup(idle[i]);
    free(idle);
    curl_multi_cleanup(m);
}

struct batch_state { hc_batch *batch; hc_request *req; int added, done, count; };

static void on_done(void *u, hc_code code, hc_response *resp) {
    struct batch_state *s = u;
    if (code != HC_OK) failures++;
    hc_response_free(resp);
    s->done++;
    if (s->added < s->count) { /* keep the batch fed without queueing everything up front */
        s->added++;
        hc_batch_add(s->batch, s->req, on_done, s);
    }
}

static void hc_batch_mode(const char *url, int count, int conc) {
    hc_client *c = hc_client_new();
    hc_handler *h = hc_handler_bytes_new(0);
    struct batch_state s = {hc_batch_new(c), hc_request_new("GET", url), 0, 0, count};
    hc_request_set_handler(s.req, h);
    hc_batch_set_concurrency(s.batch, (size_t)conc);
    while (s.added < count && s.added < conc) {
        s.added++;
        hc_batch_add(s.batch, s.req, on_done, &s);
    }
    hc_batch_run(s.batch);
    hc_batch_free(s.batch);
    hc_request_free(s.req);
    hc_handler_free(h);
    hc_client_free(c);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s raw-seq|hc-seq|raw-multi|hc-batch URL COUNT [CONCURRENCY]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *url = argv[2];
    int count = atoi(argv[3]), conc = argc > 4 ? atoi(argv[4]) : 1;
    curl_global_init(CURL_GLOBAL_ALL);
    double t0 = now();
    if (!strcmp(mode, "raw-seq")) raw_seq(url, count);
    else if (!strcmp(mode, "hc-seq")) hc_seq(url, count);
    else if (!strcmp(mode, "raw-multi")) raw_multi(url, count, conc);
    else if (!strcmp(mode, "hc-batch")) hc_batch_mode(url, count, conc);
    else { fprintf(stderr, "unknown mode %s\n", mode); return 2; }
    double secs = now() - t0;
    printf("%s %d %.4f %.1f\n", mode, count, secs, count / secs);
    if (failures) { fprintf(stderr, "%d requests failed\n", failures); return 1; }
    return 0;
}
