/* C contestants of the streaming latency benchmark (bench/latency.sh, suites/latency.py):
 *
 *   latency hc-items  BASE N QUERY   httpcontent path streaming, hc_handler_json_items_new
 *   latency raw-lines BASE N QUERY   libcurl alone: a write callback splitting NDJSON lines
 *
 * Prints the latencies (ns) of N records as a JSON array: CLOCK_MONOTONIC when the item is held
 * minus the stamp "t" the server wrote with the bytes completing it. */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <httpcontent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long *lat;
static size_t got, want;

static long long now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int on_item(void *userdata, size_t prefix_index, const hc_json *value) {
    (void)userdata; (void)prefix_index;
    long long t = now();
    int64_t stamp = 0;
    if (hc_json_int64(hc_json_get(value, "t"), &stamp) == HC_OK && got < want) lat[got++] = t - stamp;
    return 0;
}

static char line[65536];
static size_t used;

static size_t on_write(char *data, size_t size, size_t n, void *userdata) {
    (void)userdata;
    long long t = now();
    size_t len = size * n;
    for (size_t i = 0; i < len; i++) {
        if (data[i] != '\n') {
            if (used < sizeof line - 1) line[used++] = data[i];
            continue;
        }
        line[used] = 0;
        char *stamp = strstr(line, "\"t\": ");
        if (stamp && got < want) lat[got++] = t - strtoll(stamp + 5, NULL, 10);
        used = 0;
    }
    return len;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: latency hc-items|raw-lines BASE N QUERY\n"); return 2; }
    want = strtoul(argv[3], NULL, 10);
    lat = calloc(want ? want : 1, sizeof *lat);
    char url[1024];
    int ok;
    if (strcmp(argv[1], "hc-items") == 0) {
        snprintf(url, sizeof url, "%s/json?n=%zu%s", argv[2], want, argv[4]);
        static const char *prefixes[] = {"items.item"};
        hc_client *client = hc_client_new();
        hc_handler *h = hc_handler_json_items_new(prefixes, 1, NULL, on_item, NULL);
        hc_request *req = hc_request_new("GET", url);
        hc_request_set_handler(req, h);
        hc_response *resp = NULL;
        ok = hc_client_send(client, req, &resp) == HC_OK;
        hc_response_free(resp);
        hc_request_free(req);
        hc_handler_free(h);
        hc_client_free(client);
    } else {
        snprintf(url, sizeof url, "%s/ndjson?n=%zu%s", argv[2], want, argv[4]);
        CURL *curl = curl_easy_init();
        curl_easy_setopt(curl, CURLOPT_URL, url);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
        ok = curl_easy_perform(curl) == CURLE_OK;
        curl_easy_cleanup(curl);
    }
    if (!ok || got != want) { fprintf(stderr, "got %zu of %zu items\n", got, want); return 1; }
    printf("[");
    for (size_t i = 0; i < got; i++) printf("%s%lld", i ? "," : "", lat[i]);
    printf("]\n");
    free(lat);
    return 0;
}
