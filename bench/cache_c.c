/* cache_c.c — the C contestants of bench/cache.sh (issue 32): the JSON tree handler
 * (hc_handler_json_new) answered from the SQLite cache against a loopback round trip to nginx.
 *
 *   cache_c hit DB URL COUNT       hc_client with hc_cache_new(DB): every timed GET a hit
 *   cache_c origin - URL COUNT     hc_client without a cache: every GET a round trip
 *
 * Each GET's tree is read (the root is an object whose "items" array is counted) and checked
 * against the first one; a hit must say HC_CACHE_HIT. Prints one line:
 * "MBPS <value> bytes=<total> seconds=<elapsed> cpu=<user+sys seconds>" (MB = 10^6 bytes of
 * body). Exit 1: a GET failed or gave another tree or cache status.
 */
#include <httpcontent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "benchclock.h"

static int fail(const char *what) {
    const hc_error *e = hc_error_last();
    fprintf(stderr, "%s: %s (%s)\n", what, hc_error_message(e), hc_code_name(hc_error_code(e)));
    return 1;
}

/* One GET: the body's size and the number of items in its tree; -1 on failure. */
static long long one(hc_client *client, const hc_request *req, hc_cache_status want, size_t *items) {
    hc_response *resp = NULL;
    if (hc_client_send(client, req, &resp) != HC_OK) return fail("hc_client_send"), -1;
    int64_t decoded = 0;
    if (hc_response_metrics(resp, NULL, &decoded, NULL) != HC_OK) return fail("hc_response_metrics"), -1;
    const hc_json *root = hc_response_json(resp);
    const hc_json *list = root ? hc_json_get(root, "items") : NULL;
    hc_cache_status got = hc_response_cache_status(resp);
    if (!list || got != want) {
        fprintf(stderr, "unexpected: %s tree, cache status %s\n", list ? "a" : "no", hc_cache_status_name(got));
        hc_response_free(resp);
        return -1;
    }
    *items = hc_json_array_length(list);
    hc_response_free(resp);
    return decoded;
}

int main(int argc, char **argv) {
    if (argc != 5 || (strcmp(argv[1], "hit") && strcmp(argv[1], "origin"))) {
        fprintf(stderr, "usage: cache_c hit|origin DB|- URL COUNT\n");
        return 2;
    }
    int hit = strcmp(argv[1], "hit") == 0;
    long count = atol(argv[4]);
    hc_client *client = hc_client_new();
    if (!client) return fail("hc_client_new");
    if (hit) {
        remove(argv[2]);
        hc_cache *cache = hc_cache_new(argv[2], 0, 0);
        if (!cache || hc_client_set_cache(client, cache) != HC_OK) return fail("cache");
        hc_cache_free(cache);
    }
    hc_request *req = hc_request_new("GET", argv[3]);
    hc_handler *h = hc_handler_json_new(NULL);
    if (!req || !h || hc_request_set_handler(req, h) != HC_OK) return fail("request");
    hc_handler_free(h);

    /* Warm-up: the first GET fills the cache (a miss), the second reads it back once. */
    size_t items = 0, first = 0;
    if (one(client, req, hit ? HC_CACHE_MISS : HC_CACHE_NONE, &first) < 0) return 1;
    if (one(client, req, hit ? HC_CACHE_HIT : HC_CACHE_NONE, &items) < 0) return 1;

    double cpu_start = cpu_seconds(), start = now();
    unsigned long long total = 0;
    for (long i = 0; i < count; i++) {
        long long got = one(client, req, hit ? HC_CACHE_HIT : HC_CACHE_NONE, &items);
        if (got < 0) return 1;
        if (items != first) { fprintf(stderr, "GET %ld: %zu items, expected %zu\n", i, items, first); return 1; }
        total += (unsigned long long)got;
    }
    double seconds = now() - start, cpu = cpu_seconds() - cpu_start;
    printf("MBPS %.1f bytes=%llu seconds=%.4f cpu=%.4f\n", total / seconds / 1e6, total, seconds, cpu);
    hc_request_free(req);
    hc_client_free(client);
    return 0;
}
