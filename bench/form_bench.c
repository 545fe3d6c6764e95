/* form_bench.c — form-encoding throughput from C: libhttpcontent's form builder against
 * curl_easy_escape on every key and value, on the pairs written by `form_bench.py gen`.
 *
 *   form_bench hc|curl PAIRS_FILE MIN_SECONDS [OUT_FILE]
 *
 * hc:   hc_form_new, hc_form_add_bytes for every pair, hc_form_encode, hc_buffer_free,
 *       hc_form_free: what a caller does to encode a form (the default options: %20 for spaces).
 * curl: for every pair, curl_easy_escape(key) "=" curl_easy_escape(value), joined with "&" into
 *       a buffer grown by doubling (freed after each encode), each escaped string curl_free()d.
 *       An empty key or value is not passed to curl_easy_escape: with a length of 0 it would
 *       call strlen() on the (not NUL-terminated) input and escape whatever follows.
 *
 * One untimed encode first (its output is written to OUT_FILE if given, for the identity check),
 * then encodes are repeated until MIN_SECONDS have passed. Prints one line:
 *   "FORM mbps=<output MB/s> out_bytes=<bytes per encode> iters=<n> seconds=<s> cpu=<user+sys s> encode_share=<f>"
 * (MB = 10^6 bytes). encode_share (hc only) is the fraction of the time spent in hc_form_encode
 * itself; the rest is building the form (hc_form_new, hc_form_add_bytes, hc_form_free).
 */
#include <curl/curl.h>
#include <httpcontent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "benchclock.h"

typedef struct { const uint8_t *key, *value; size_t klen, vlen; } pair;

static pair *load(const char *path, size_t *count) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc((size_t)size + 1);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) { perror(path); exit(1); }
    fclose(f);
    size_t cap = 1024, n = 0, i = 0;
    pair *pairs = malloc(cap * sizeof *pairs);
    while (i < (size_t)size) {
        if (n == cap) pairs = realloc(pairs, (cap *= 2) * sizeof *pairs);
        uint32_t len;
        memcpy(&len, data + i, 4); i += 4;          /* little-endian on every target we run */
        pairs[n].key = data + i; pairs[n].klen = len; i += len;
        memcpy(&len, data + i, 4); i += 4;
        pairs[n].value = data + i; pairs[n].vlen = len; i += len;
        n++;
    }
    *count = n;
    return pairs;
}

static double encode_time; /* seconds inside hc_form_encode */

/* One encode through httpcontent; returns the output (malloc'd copy only when keep is set). */
static size_t hc_encode(const pair *pairs, size_t n, uint8_t **keep) {
    hc_form *form = hc_form_new();
    if (!form) { fprintf(stderr, "hc_form_new failed\n"); exit(1); }
    for (size_t i = 0; i < n; i++) {
        if (hc_form_add_bytes(form, pairs[i].key, pairs[i].klen, pairs[i].value, pairs[i].vlen) != HC_OK) {
            fprintf(stderr, "hc_form_add_bytes: %s\n", hc_error_message(hc_error_last()));
            exit(1);
        }
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    double t = now();
    if (hc_form_encode(form, &buf, &len) != HC_OK) {
        fprintf(stderr, "hc_form_encode: %s\n", hc_error_message(hc_error_last()));
        exit(1);
    }
    encode_time += now() - t;
    if (keep) {
        *keep = malloc(len);
        memcpy(*keep, buf, len);
    }
    hc_buffer_free(buf);
    hc_form_free(form);
    return len;
}

static void append(uint8_t **buf, size_t *len, size_t *cap, const char *s, size_t n) {
    if (*len + n > *cap) {
        while (*len + n > *cap) *cap *= 2;
        *buf = realloc(*buf, *cap);
        if (!*buf) { fprintf(stderr, "out of memory\n"); exit(1); }
    }
    memcpy(*buf + *len, s, n);
    *len += n;
}

/* One encode with curl_easy_escape on every key and value. */
static size_t curl_encode(CURL *h, const pair *pairs, size_t n, uint8_t **keep) {
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (size_t i = 0; i < n; i++) {
        /* A length of 0 makes curl_easy_escape use strlen(): an empty string is escaped as "". */
        char *k = pairs[i].klen ? curl_easy_escape(h, (const char *)pairs[i].key, (int)pairs[i].klen) : NULL;
        char *v = pairs[i].vlen ? curl_easy_escape(h, (const char *)pairs[i].value, (int)pairs[i].vlen) : NULL;
        if ((pairs[i].klen && !k) || (pairs[i].vlen && !v)) { fprintf(stderr, "curl_easy_escape failed\n"); exit(1); }
        if (i > 0) append(&buf, &len, &cap, "&", 1);
        if (k) append(&buf, &len, &cap, k, strlen(k));
        append(&buf, &len, &cap, "=", 1);
        if (v) append(&buf, &len, &cap, v, strlen(v));
        curl_free(k);
        curl_free(v);
    }
    if (keep) *keep = buf;
    else free(buf);
    return len;
}

int main(int argc, char **argv) {
    if ((argc != 4 && argc != 5) || (strcmp(argv[1], "hc") != 0 && strcmp(argv[1], "curl") != 0)) {
        fprintf(stderr, "usage: %s hc|curl PAIRS_FILE MIN_SECONDS [OUT_FILE]\n", argv[0]);
        return 2;
    }
    int use_hc = strcmp(argv[1], "hc") == 0;
    size_t n;
    pair *pairs = load(argv[2], &n);
    double min_seconds = atof(argv[3]);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *h = curl_easy_init();

    uint8_t *first = NULL;
    size_t size = use_hc ? hc_encode(pairs, n, &first) : curl_encode(h, pairs, n, &first);
    if (argc == 5) {
        FILE *f = fopen(argv[4], "wb");
        if (!f || fwrite(first, 1, size, f) != size || fclose(f) != 0) { perror(argv[4]); return 1; }
    }
    free(first);

    encode_time = 0;
    long iters = 0;
    double cpu0 = cpu_seconds(), t0 = now(), elapsed;
    do {
        size_t got = use_hc ? hc_encode(pairs, n, NULL) : curl_encode(h, pairs, n, NULL);
        if (got != size) { fprintf(stderr, "output size changed between encodes\n"); return 1; }
        iters++;
        elapsed = now() - t0;
    } while (elapsed < min_seconds);
    double cpu = cpu_seconds() - cpu0;
    printf("FORM mbps=%.2f out_bytes=%zu iters=%ld seconds=%.4f cpu=%.4f encode_share=%.3f\n",
           (double)size * (double)iters / elapsed / 1e6, size, iters, elapsed, cpu,
           use_hc ? encode_time / elapsed : 0.0);
    curl_easy_cleanup(h);
    curl_global_cleanup();
    return 0;
}
