/* Links that misbehave, for the C tests: Tests/server/faultproxy.py (a TCP proxy on 127.0.0.1
 * that caps bandwidth, adds latency and jitter, stalls, resets after N bytes, drips the response
 * head) in front of the test server, as a child process that exits with us (its stdin is our
 * pipe). It answers "stats" with how many connections it took and how many it reset, so a test
 * can check the fault it asked for did happen (a test whose fault never fired proves nothing). */
#ifndef HC_FAULTPROXY_H
#define HC_FAULTPROXY_H

#include "testutil.h"
#include <time.h>

typedef struct {
    pid_t pid;
    int in;          /* its stdin: "stats" lines; closing it stops the proxy */
    FILE *out;       /* its stdout: READY, then one STATS line per "stats" */
    int port;
    char base[64];   /* http://127.0.0.1:PORT */
} fault_proxy;

/* Starts faultproxy.py in front of `upstream_port` with its options (`args`, NULL-terminated,
 * as the command line takes them: "--reset-after", "1200000", ...). Exits the test on failure. */
static inline fault_proxy fault_proxy_start(int upstream_port, const char *const *args) {
    char script[1024], upstream[16];
    snprintf(script, sizeof script, "%s", HC_TEST_SERVER);
    char *slash = strrchr(script, '/');
    snprintf(slash + 1, sizeof script - (size_t)(slash + 1 - script), "faultproxy.py");
    snprintf(upstream, sizeof upstream, "%d", upstream_port);
    const char *argv[32] = {"python3", script, upstream};
    int argc = 3;
    for (int i = 0; args && args[i] && argc < 31; i++) argv[argc++] = args[i];
    argv[argc] = NULL;
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) { perror("pipe"); exit(2); }
    fault_proxy p = {.pid = fork()};
    if (p.pid < 0) { perror("fork"); exit(2); }
    if (p.pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]); close(in[1]); close(out[0]); close(out[1]);
        execvp("python3", (char *const *)argv);
        perror("execvp python3");
        _exit(127);
    }
    close(in[0]); close(out[1]);
    p.in = in[1];
    p.out = fdopen(out[0], "r");
    char line[64] = {0};
    if (!p.out || !fgets(line, sizeof line, p.out) || sscanf(line, "READY %d", &p.port) != 1) {
        fprintf(stderr, "faultproxy.py did not start (read: %s)\n", line);
        exit(2);
    }
    snprintf(p.base, sizeof p.base, "http://127.0.0.1:%d", p.port);
    return p;
}

/* The proxy's counts so far: connections accepted and connections it reset. */
static inline void fault_proxy_stats(fault_proxy *p, int *connections, int *resets) {
    char line[64] = {0};
    *connections = *resets = -1;
    if (write(p->in, "stats\n", 6) != 6 || !fgets(line, sizeof line, p->out) ||
        sscanf(line, "STATS %d %d", connections, resets) != 2)
        fprintf(stderr, "faultproxy.py gave no stats (read: %s)\n", line);
}

/* Stops the proxy (stdin closed) and reaps it, bounded as the test server is. */
static inline void fault_proxy_stop(fault_proxy *p) {
    if (p->pid <= 0) return;
    CHECK(hc_test_reap(p->pid, p->in));
    fclose(p->out);
    p->pid = 0;
}

/* The URL of `path` through the proxy. Per thread, as hc_url. */
static inline const char *fault_url(const fault_proxy *p, const char *path) {
    static __thread char buf[1024];
    snprintf(buf, sizeof buf, "%s%s", p->base, path);
    return buf;
}

/* The test server's port, from hc_base ("http://127.0.0.1:PORT"). */
static inline int fault_upstream_port(void) {
    const char *colon = strrchr(hc_base, ':');
    return colon ? atoi(colon + 1) : 0;
}

static inline double fault_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How much longer an upper time bound is under valgrind (which runs ~30x slower): bounds
 * still catch a limit that does not fire at all, not one that fires late by the tool's cost. */
static inline double fault_slack(void) { return getenv("HC_UNDER_VALGRIND") ? 10.0 : 1.0; }

/* Whether buf[0..len) is the test server's /bytes and /range body from `offset`: i % 251. */
static inline int fault_expected(const uint8_t *buf, size_t len, size_t offset) {
    for (size_t i = 0; i < len; i++)
        if (buf[i] != (uint8_t)((offset + i) % 251)) return 0;
    return 1;
}

#endif
