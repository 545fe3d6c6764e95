/* Shared by the test_hostile_*.c files: a server that misbehaves on purpose
 * (Tests/server/hostile.py), and the security defaults. Every case checks the exact code and that
 * nothing is left behind: no response, the old download intact with no temporary file beside it,
 * and as many live handles as before. Files by concern: _transfers.c (framing, headers, encoding
 * and size), _redirects.c, _bodies.c (hostile documents) and _defaults.c (security defaults). */
#ifndef HC_HOSTILE_H
#define HC_HOSTILE_H

#include "testutil.h"
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <time.h>

static hc_client *client;
static char base[64];        /* http://127.0.0.1:PORT of the hostile server */
static int port;
static char dir[64];         /* a fresh directory per test, holding out.bin */
static char target[128];     /* dir/out.bin, holding OLD before each test */
static int64_t handles_before;
static const char OLD[] = "the previous download";

/* ---------------------------------------------------------------- servers */

typedef struct { pid_t pid; int stdin_fd; int port; } server;

/* Starts hostile.py (next to the test server) with optional TLS files; it exits with us. */
static inline server server_start(const char *cert, const char *key) {
    char script[1024];
    snprintf(script, sizeof script, "%s", HC_TEST_SERVER);
    char *slash = strrchr(script, '/');
    snprintf(slash + 1, sizeof script - (size_t)(slash + 1 - script), "hostile.py");
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) { perror("pipe"); exit(2); }
    server s = {fork(), -1, 0};
    if (s.pid < 0) { perror("fork"); exit(2); }
    if (s.pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]); close(out[0]);
        if (cert)
            execlp("python3", "python3", script, "--port", "0", "--exit-on-stdin-eof", "--lifetime", "300",
                   "--tls-cert", cert, "--tls-key", key, (char *)NULL);
        else
            execlp("python3", "python3", script, "--port", "0", "--exit-on-stdin-eof", "--lifetime", "300",
                   (char *)NULL);
        perror("execlp python3");
        _exit(127);
    }
    close(in[0]); close(out[1]);
    s.stdin_fd = in[1];
    FILE *f = fdopen(out[0], "r");
    char line[64] = {0};
    if (!f || !fgets(line, sizeof line, f) || sscanf(line, "PORT %d", &s.port) != 1) {
        fprintf(stderr, "hostile server did not start (read: %s)\n", line);
        exit(2);
    }
    fclose(f);
    return s;
}

static inline void server_stop(server *s) {
    if (s->pid > 0) {
        CHECK(hc_test_reap(s->pid, s->stdin_fd));
        s->pid = 0;
    }
}

/* ---------------------------------------------------------------- helpers */

static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline const char *url(const char *path) {
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s%s", base, path);
    return buf;
}

/* Each test starts with a fresh directory holding out.bin = OLD, and a handle count. */
static inline void begin(void) {
    snprintf(dir, sizeof dir, "/tmp/hc-hostile-XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(2); }
    snprintf(target, sizeof target, "%s/out.bin", dir);
    FILE *f = fopen(target, "wb");
    if (!f) { perror("fopen"); exit(2); }
    fwrite(OLD, 1, strlen(OLD), f);
    fclose(f);
    handles_before = hc_live_handles();
}

/* How many entries the directory has besides . and .. */
static inline int entries(const char *path) {
    DIR *d = opendir(path);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    if (d) closedir(d);
    return n;
}

static inline int file_is(const char *path, const void *data, size_t len) {
    char buf[4096];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t got = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return got == len && memcmp(buf, data, len) == 0;
}

/* The old download is untouched and nothing else (no temporary or partial file) is beside it. */
static inline int left_intact(void) {
    return entries(dir) == 1 && file_is(target, OLD, strlen(OLD));
}

/* Ends a test: every handle it made is freed, and the directory goes. */
static inline void end(void) {
    CHECK(hc_live_handles() == handles_before);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* Sends GET `full_url` with `handler` (consumed here) on `c`; returns the code, keeps the
 * response in *out when asked (else frees it), and sets *curl to the error's CURLcode. */
static inline hc_code send_on(hc_client *c, const char *full_url, hc_handler *handler, hc_response **out, int *curl) {
    hc_request *req = hc_request_new("GET", full_url);
    if (!req) { hc_handler_free(handler); return hc_error_code(hc_error_last()); }
    if (handler) hc_request_set_handler(req, handler);
    hc_handler_free(handler);
    hc_response *resp = NULL;
    hc_code rc = hc_client_send(c, req, &resp);
    if (curl) *curl = rc == HC_OK ? 0 : hc_error_curl_code(hc_error_last());
    if (rc != HC_OK && resp != NULL) { fprintf(stderr, "a response on failure\n"); hc_checks_failed++; }
    hc_request_free(req);
    if (out) *out = resp; else hc_response_free(resp);
    return rc;
}

static inline hc_code get(const char *path, hc_handler *handler, int *curl) {
    return send_on(client, url(path), handler, NULL, curl);
}

static inline hc_handler *file_handler(size_t max_size) {
    hc_handler *h = hc_handler_file_new(target, 0);
    if (max_size) hc_handler_set_max_size(h, max_size);
    return h;
}

/* The body of a successful GET as a NUL-terminated string (static buffer). */
static inline const char *body_of(const char *full_url, hc_client *c) {
    static char buf[4096];
    buf[0] = 0;
    hc_response *r = NULL;
    if (send_on(c, full_url, hc_handler_bytes_new(sizeof buf - 1), &r, NULL) == HC_OK) {
        const uint8_t *data; size_t len;
        hc_response_bytes(r, &data, &len);
        memcpy(buf, data, len);
        buf[len] = 0;
    }
    hc_response_free(r);
    return buf;
}

static inline int hits(const char *path) {
    char q[256];
    snprintf(q, sizeof q, "/hits?path=%s", path);
    int n = -1;
    sscanf(body_of(url(q), client), "{\"hits\": %d}", &n);
    return n;
}

/* ---------------------------------------------------------------- the run */

/* Starts the hostile server, runs `count` tests on a client with 2 s timeouts, stops it. */
static inline int hostile_main(void (*const *tests)(void), size_t count) {
    (void)hc_url; (void)hc_test_server_start; /* testutil.h's server is not the one used here */
    server hostile = server_start(NULL, NULL);
    port = hostile.port;
    snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
    client = hc_client_new();
    hc_client_set_timeout_ms(client, 2000);
    hc_client_set_connect_timeout_ms(client, 2000);
    for (size_t i = 0; i < count; i++) tests[i]();
    hc_client_free(client);
    server_stop(&hostile);
    return hc_test_finish();
}
#define HOSTILE_MAIN(...) int main(void) { \
    static void (*const tests_[])(void) = { __VA_ARGS__ }; \
    return hostile_main(tests_, sizeof tests_ / sizeof *tests_); }

#endif /* HC_HOSTILE_H */
