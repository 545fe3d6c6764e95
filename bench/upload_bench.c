/* upload_bench.c — one streamed upload of a large file, through raw libcurl or through
 * libhttpcontent's C API, with its throughput, CPU time and peak memory growth.
 *
 *   upload_bench raw|hc|hc-read URL FILE WARMUP_FILE
 *
 * raw: a minimal libcurl program: POST with CURLOPT_POSTFIELDSIZE_LARGE = the file's size and a
 *      CURLOPT_READFUNCTION that fread()s from the open FILE into libcurl's buffer; the same
 *      request options httpcontent sets that could matter (no "Expect: 100-continue", no
 *      Content-Type, Accept-Encoding "", NOSIGNAL). RAW_UPLOAD_BUFFERSIZE=N sets
 *      CURLOPT_UPLOAD_BUFFERSIZE (libcurl's upload buffer, 64 KiB by default; 16 KiB to 2 MiB):
 *      the tuned anchor of bench/bodies.sh, picked there by measurement.
 * hc:  one hc_client; a request with hc_request_set_file_body(path, NULL), sent with
 *      hc_client_send; the response kept as bytes (the default handler).
 * hc-read: the same with the body streamed from a C read callback that fread()s from the open
 *      FILE, as raw's READFUNCTION does (hc_request_set_read_body, the file's size as length).
 *
 * WARMUP_FILE (small) is uploaded first over the same handle/client, untimed, so that one-time
 * set-up (the connection, libcurl's buffers, the library's first-use state) is not counted.
 * Then the peak-RSS mark is reset (writing "5" to /proc/self/clear_refs), VmRSS is read as the
 * base, FILE is uploaded, and VmHWM - base is the peak memory growth during the upload.
 * The server (upload_sink) answers with the number of body bytes it received; the program checks
 * it equals the file's size.
 *
 * Prints one line:
 *   "UPLOAD mbps=<MB/s> bytes=<n> seconds=<s> cpu=<user+sys s> rss_base_kib=<k> hwm_growth_kib=<k> hwm_reset=<1|0>"
 * (MB = 10^6 bytes). hwm_reset=0: clear_refs was refused, and the growth is VmHWM after minus VmRSS
 * before (an upper bound). Exits non-zero if an upload fails or the count does not match.
 */
#include <curl/curl.h>
#include <httpcontent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include "benchclock.h"

/* A field of /proc/self/status in KiB ("VmRSS", "VmHWM"), or -1. */
static long status_kib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            v = atol(line + n + 1);
            break;
        }
    }
    fclose(f);
    return v;
}

/* Resets VmHWM to the current RSS; 1 on success. */
static int reset_hwm(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return 0;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static long long file_size(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) { perror(path); exit(1); }
    return (long long)st.st_size;
}

/* ---- raw libcurl ---------------------------------------------------------------------------- */

static size_t read_cb(char *buf, size_t size, size_t n, void *userdata) {
    return fread(buf, size, n, (FILE *)userdata);
}

typedef struct { char text[64]; size_t len; } small_body;

static size_t write_cb(char *ptr, size_t size, size_t n, void *userdata) {
    small_body *b = userdata;
    size_t len = size * n;
    size_t room = sizeof b->text - 1 - b->len;
    memcpy(b->text + b->len, ptr, len < room ? len : room);
    b->len += len < room ? len : room;
    b->text[b->len] = '\0';
    return len;
}

/* Uploads `path`; returns the server's count of received bytes, or -1. */
static long long raw_upload(CURL *h, const char *url, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return -1; }
    small_body body = {{0}, 0};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)file_size(path));
    curl_easy_setopt(h, CURLOPT_READFUNCTION, read_cb);
    curl_easy_setopt(h, CURLOPT_READDATA, f);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    CURLcode rc = curl_easy_perform(h);
    fclose(f);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK || status != 200) {
        fprintf(stderr, "raw upload of %s: %s, status %ld\n", path, curl_easy_strerror(rc), status);
        return -1;
    }
    return atoll(body.text);
}

/* ---- httpcontent ------------------------------------------------------------------------------ */

/* hc-read's body: fread from the FILE into the library's buffer. */
static int hc_read(void *userdata, uint8_t *buf, size_t cap, size_t *written) {
    *written = fread(buf, 1, cap, (FILE *)userdata);
    return ferror((FILE *)userdata) ? 1 : 0;
}

static long long hc_upload(hc_client *client, const char *url, const char *path, int streamed) {
    hc_request *req = hc_request_new("POST", url);
    FILE *file = streamed ? fopen(path, "rb") : NULL;
    if (streamed && !file) { perror(path); return -1; }
    hc_code set = !req ? HC_EINVALID_ARG
        : streamed ? hc_request_set_read_body(req, hc_read, file, file_size(path), NULL)
                   : hc_request_set_file_body(req, path, NULL);
    if (set != HC_OK) {
        fprintf(stderr, "hc request: %s\n", hc_error_message(hc_error_last()));
        if (file) fclose(file);
        return -1;
    }
    hc_response *resp = NULL;
    if (hc_client_send(client, req, &resp) != HC_OK) {
        fprintf(stderr, "hc_client_send: %s\n", hc_error_message(hc_error_last()));
        hc_request_free(req);
        if (file) fclose(file);
        return -1;
    }
    long long got = -1;
    const uint8_t *data = NULL;
    size_t len = 0;
    if (hc_response_status(resp) == 200 && hc_response_bytes(resp, &data, &len) == HC_OK && len < 32) {
        char text[32];
        memcpy(text, data, len);
        text[len] = '\0';
        got = atoll(text);
    } else {
        fprintf(stderr, "hc upload of %s: status %d\n", path, hc_response_status(resp));
    }
    hc_response_free(resp);
    hc_request_free(req);
    if (file) fclose(file);
    return got;
}

int main(int argc, char **argv) {
    if (argc != 5 || (strcmp(argv[1], "raw") != 0 && strcmp(argv[1], "hc") != 0 &&
                      strcmp(argv[1], "hc-read") != 0)) {
        fprintf(stderr, "usage: %s raw|hc|hc-read URL FILE WARMUP_FILE\n", argv[0]);
        return 2;
    }
    int raw = strcmp(argv[1], "raw") == 0, streamed = strcmp(argv[1], "hc-read") == 0;
    const char *url = argv[2], *path = argv[3], *warm = argv[4];
    long long size = file_size(path), warm_size = file_size(warm);

    CURL *h = NULL;
    hc_client *client = NULL;
    struct curl_slist *headers = NULL;
    if (raw) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        h = curl_easy_init();
        if (!h) return 1;
        headers = curl_slist_append(headers, "Expect:");
        headers = curl_slist_append(headers, "Content-Type:");
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        const char *upload_buffer = getenv("RAW_UPLOAD_BUFFERSIZE");
        if (upload_buffer && atol(upload_buffer) > 0 &&
            curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, atol(upload_buffer)) != CURLE_OK) {
            fprintf(stderr, "CURLOPT_UPLOAD_BUFFERSIZE %s refused\n", upload_buffer);
            return 2;
        }
    } else {
        client = hc_client_new();
        if (!client) return 1;
    }

    long long got = raw ? raw_upload(h, url, warm) : hc_upload(client, url, warm, streamed);
    if (got != warm_size) {
        fprintf(stderr, "warm-up: server received %lld of %lld bytes\n", got, warm_size);
        return 1;
    }

    int reset = reset_hwm();
    long base = status_kib("VmRSS");
    double cpu0 = cpu_seconds(), t0 = now();
    got = raw ? raw_upload(h, url, path) : hc_upload(client, url, path, streamed);
    double elapsed = now() - t0, cpu = cpu_seconds() - cpu0;
    long hwm = status_kib("VmHWM");
    if (got != size) {
        fprintf(stderr, "server received %lld of %lld bytes\n", got, size);
        return 1;
    }
    printf("UPLOAD mbps=%.1f bytes=%lld seconds=%.4f cpu=%.4f rss_base_kib=%ld hwm_growth_kib=%ld hwm_reset=%d\n",
           (double)size / elapsed / 1e6, size, elapsed, cpu, base, hwm - base, reset);

    if (raw) {
        curl_easy_cleanup(h);
        curl_slist_free_all(headers);
        curl_global_cleanup();
    } else {
        hc_client_free(client);
    }
    return 0;
}
