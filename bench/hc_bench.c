/* hc_bench.c — the same download as raw_curl.c, through libhttpcontent's C API: one client and
 * one request reused, COUNT downloads timed as one measurement.
 *
 *   hc_bench discard|bytes|file|file-nofsync URL COUNT EXPECTED_BYTES
 *
 * discard: hc_handler_discard_new(); bytes: hc_handler_bytes_new(0), the body read with
 * hc_response_bytes and released with the response, as a caller done with it would.
 * file: hc_handler_file_new(BENCH_FILE, 0) (atomic rename, fsync'd: the default);
 * file-nofsync: the same with HC_FILE_NO_FSYNC. The size comes from hc_response_file.
 * Prints one line: "MBPS <value> bytes=<total> seconds=<elapsed> cpu=<user+sys seconds>"
 * (MB = 10^6 bytes).
 * Exits non-zero if a download fails or does not deliver EXPECTED_BYTES.
 */
#include <httpcontent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "benchclock.h"

static int fail(const char *what) {
    const hc_error *e = hc_error_last();
    fprintf(stderr, "%s: %s (%s)\n", what, hc_error_message(e), hc_code_name(hc_error_code(e)));
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s discard|bytes|file|file-nofsync URL COUNT EXPECTED_BYTES\n", argv[0]);
        return 2;
    }
    int bytes = 0, file = 0;
    unsigned int file_flags = 0;
    if (strcmp(argv[1], "discard") == 0) bytes = 0;
    else if (strcmp(argv[1], "bytes") == 0) bytes = 1;
    else if (strcmp(argv[1], "file") == 0) file = 1;
    else if (strcmp(argv[1], "file-nofsync") == 0) { file = 1; file_flags = HC_FILE_NO_FSYNC; }
    else { fprintf(stderr, "unknown mode %s\n", argv[1]); return 2; }
    const char *path = getenv("BENCH_FILE");
    if (file && !path) { fprintf(stderr, "file modes need BENCH_FILE\n"); return 2; }
    const char *url = argv[2];
    long count = atol(argv[3]);
    unsigned long long expected = strtoull(argv[4], NULL, 10);
    if (count < 1) { fprintf(stderr, "COUNT must be >= 1\n"); return 2; }

    hc_client *client = hc_client_new();
    if (!client) return fail("hc_client_new");
    hc_request *req = hc_request_new("GET", url);
    if (!req) return fail("hc_request_new");
    hc_handler *handler = file ? hc_handler_file_new(path, file_flags)
                          : bytes ? hc_handler_bytes_new(0) : hc_handler_discard_new();
    if (!handler) return fail("handler");
    if (hc_request_set_handler(req, handler) != HC_OK) return fail("hc_request_set_handler");
    hc_handler_free(handler); /* the request keeps its own reference */

    double cpu_start = cpu_seconds();
    double start = now();
    unsigned long long total = 0;
    for (long i = 0; i < count; i++) {
        hc_response *resp = NULL;
        if (hc_client_send(client, req, &resp) != HC_OK) return fail("hc_client_send");
        size_t got;
        if (file) {
            int64_t written = 0;
            if (hc_response_file(resp, NULL, &written, NULL, NULL) != HC_OK) return fail("hc_response_file");
            got = (size_t)written;
        } else if (bytes) {
            const uint8_t *data = NULL;
            if (hc_response_bytes(resp, &data, &got) != HC_OK) return fail("hc_response_bytes");
        } else {
            int64_t decoded = 0;
            if (hc_response_metrics(resp, NULL, &decoded, NULL) != HC_OK) return fail("hc_response_metrics");
            got = (size_t)decoded;
        }
        if (hc_response_status(resp) != 200 || got != expected) {
            fprintf(stderr, "download %ld: status %d, %zu bytes, expected %llu\n", i,
                    hc_response_status(resp), got, expected);
            return 1;
        }
        total += got;
        hc_response_free(resp);
    }
    double elapsed = now() - start;
    double cpu = cpu_seconds() - cpu_start;
    printf("MBPS %.1f bytes=%llu seconds=%.3f cpu=%.3f\n", (double)total / elapsed / 1e6, total,
           elapsed, cpu);
    hc_request_free(req);
    hc_client_free(client);
    return 0;
}
