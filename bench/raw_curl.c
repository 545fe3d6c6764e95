/* raw_curl.c — the baseline: a minimal libcurl program downloading one URL COUNT times with one
 * reused easy handle, timed as one measurement.
 *
 *   raw_curl discard|accumulate|file URL COUNT EXPECTED_BYTES
 *
 * discard:    the write callback takes every byte and keeps nothing.
 * accumulate: the write callback appends into a realloc-grown buffer (doubling), freed after each
 *             download, as a caller keeping the body in memory would.
 * file:       the write callback write(2)s each chunk to RAW_FILE (truncated per download);
 *             with RAW_FSYNC=1 the file is fsync'd at the end of each download.
 * Prints one line: "MBPS <value> bytes=<total> seconds=<elapsed> cpu=<user+sys seconds>"
 * (MB = 10^6 bytes).
 * Exits non-zero if a download fails or does not deliver EXPECTED_BYTES.
 * Sets the options httpcontent sets that can affect speed: Accept-Encoding "" (all libcurl
 * supports; the local nginx sends the file uncompressed) and CURLOPT_NOSIGNAL.
 * RAW_BUFFERSIZE=N sets CURLOPT_BUFFERSIZE (libcurl's receive buffer; its default is 16 KiB):
 * the tuned anchor, as a libcurl expert would set it for large bodies.
 */
#include <curl/curl.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "benchclock.h"

struct sink {
    unsigned char *data;
    size_t len;
    size_t cap;
    size_t total; /* bytes seen, every mode */
    int fd;       /* file mode */
};

static size_t write_file(char *ptr, size_t size, size_t nmemb, void *userdata) {
    struct sink *s = userdata;
    size_t n = size * nmemb, done = 0;
    while (done < n) {
        ssize_t w = write(s->fd, ptr + done, n - done);
        if (w <= 0) return 0;
        done += (size_t)w;
    }
    s->total += n;
    return n;
}

static size_t write_discard(char *ptr, size_t size, size_t nmemb, void *userdata) {
    (void)ptr;
    struct sink *s = userdata;
    size_t n = size * nmemb;
    s->total += n;
    return n;
}

static size_t write_accumulate(char *ptr, size_t size, size_t nmemb, void *userdata) {
    struct sink *s = userdata;
    size_t n = size * nmemb;
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        if (cap < s->len + n) cap = s->len + n;
        unsigned char *grown = realloc(s->data, cap);
        if (!grown) return 0;
        s->data = grown;
        s->cap = cap;
    }
    memcpy(s->data + s->len, ptr, n);
    s->len += n;
    s->total += n;
    return n;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s discard|accumulate URL COUNT EXPECTED_BYTES\n", argv[0]);
        return 2;
    }
    int accumulate = 0, file = 0;
    if (strcmp(argv[1], "discard") == 0) accumulate = 0;
    else if (strcmp(argv[1], "accumulate") == 0) accumulate = 1;
    else if (strcmp(argv[1], "file") == 0) file = 1;
    else { fprintf(stderr, "unknown mode %s\n", argv[1]); return 2; }
    const char *path = getenv("RAW_FILE");
    int want_fsync = getenv("RAW_FSYNC") && strcmp(getenv("RAW_FSYNC"), "1") == 0;
    if (file && !path) { fprintf(stderr, "file mode needs RAW_FILE\n"); return 2; }
    const char *url = argv[2];
    long count = atol(argv[3]);
    unsigned long long expected = strtoull(argv[4], NULL, 10);
    if (count < 1) { fprintf(stderr, "COUNT must be >= 1\n"); return 2; }

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
    CURL *h = curl_easy_init();
    if (!h) return 1;
    struct sink s = {0};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, file ? write_file : accumulate ? write_accumulate : write_discard);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    const char *bufsize = getenv("RAW_BUFFERSIZE");
    if (bufsize && atol(bufsize) > 0) curl_easy_setopt(h, CURLOPT_BUFFERSIZE, atol(bufsize));

    double cpu_start = cpu_seconds();
    double start = now();
    unsigned long long total = 0;
    for (long i = 0; i < count; i++) {
        s.len = 0;
        s.total = 0;
        if (file && (s.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
            perror(path);
            return 1;
        }
        CURLcode rc = curl_easy_perform(h);
        if (file) {
            if (want_fsync && fsync(s.fd) != 0) { perror("fsync"); return 1; }
            close(s.fd);
        }
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (rc != CURLE_OK || status != 200) {
            fprintf(stderr, "download %ld failed: %s (status %ld)\n", i, curl_easy_strerror(rc), status);
            return 1;
        }
        if (s.total != expected || (accumulate && s.len != expected)) {
            fprintf(stderr, "download %ld: got %zu bytes, expected %llu\n", i, s.total, expected);
            return 1;
        }
        total += s.total;
        free(s.data); /* the caller would own the body; a new download starts from nothing */
        s.data = NULL;
        s.cap = 0;
    }
    double elapsed = now() - start;
    double cpu = cpu_seconds() - cpu_start;
    printf("MBPS %.1f bytes=%llu seconds=%.3f cpu=%.3f\n", (double)total / elapsed / 1e6, total,
           elapsed, cpu);
    curl_easy_cleanup(h);
    curl_global_cleanup();
    return 0;
}
