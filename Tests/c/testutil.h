/* Shared by the C tests: start the local test server, and count checks. */
#ifndef HC_TESTUTIL_H
#define HC_TESTUTIL_H

#define _GNU_SOURCE
/* The public header and the binding one: the tests reach the binding-only entry points too. */
#include <httpcontent_binding.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int hc_checks_passed, hc_checks_failed;

#define CHECK(cond) do { \
    if (cond) { hc_checks_passed++; } \
    else { hc_checks_failed++; \
        fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
                hc_error_message(hc_error_last())); } \
} while (0)

#define CHECK_CODE(expr, code) do { \
    hc_code got_ = (expr); \
    if (got_ == (code)) { hc_checks_passed++; } \
    else { hc_checks_failed++; \
        fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n", __FILE__, __LINE__, #expr, \
                hc_code_name(got_), hc_code_name(code), hc_error_message(hc_error_last())); } \
} while (0)

/* The server runs as a child whose stdin is our pipe: when this process exits, for any reason,
 * the pipe closes and the server exits too. */
static pid_t hc_server_pid;
static int hc_server_stdin = -1;
static char hc_base[64];

static const char *hc_test_server_start(void) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) { perror("pipe"); exit(2); }
    hc_server_pid = fork();
    if (hc_server_pid < 0) { perror("fork"); exit(2); }
    if (hc_server_pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]); close(out[0]);
        execlp("python3", "python3", HC_TEST_SERVER, "--port", "0", "--exit-on-stdin-eof",
               "--lifetime", "300", (char *)NULL);
        perror("execlp python3");
        _exit(127);
    }
    close(in[0]); close(out[1]);
    hc_server_stdin = in[1];
    FILE *f = fdopen(out[0], "r");
    char line[64] = {0};
    int port = 0;
    if (!f || !fgets(line, sizeof line, f) || sscanf(line, "PORT %d", &port) != 1) {
        fprintf(stderr, "test server did not start (read: %s)\n", line);
        exit(2);
    }
    snprintf(hc_base, sizeof hc_base, "http://127.0.0.1:%d", port);
    return hc_base;
}

/* Asks a server child to stop (stdin closed, SIGTERM) and reaps it, bounded: a server that has
 * not exited within 10 s is killed (and 0 returned), so a stuck server fails the test instead of
 * holding it until ctest's timeout. Returns 1 when the server exited by itself. */
static int hc_test_reap(pid_t pid, int stdin_fd) {
    close(stdin_fd);
    kill(pid, SIGTERM);
    for (int i = 0; i < 1000; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) return 1;
        usleep(10000);
    }
    fprintf(stderr, "test server %d ignored SIGTERM for 10 s; killed\n", (int)pid);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 0;
}

static void hc_test_server_stop(void) {
    if (hc_server_pid > 0) {
        if (!hc_test_reap(hc_server_pid, hc_server_stdin)) hc_checks_failed++;
        hc_server_pid = 0;
    }
}

/* Prints the plain closing line and returns the process exit status. */
static int hc_test_finish(void) {
    hc_test_server_stop();
    printf("%d passed, %d failed\n", hc_checks_passed, hc_checks_failed);
    return hc_checks_failed == 0 ? 0 : 1;
}

static char *hc_url(const char *path) {
    static __thread char buf[1024];  /* per thread: tests send from several threads at once */
    snprintf(buf, sizeof buf, "%s%s", hc_base, path);
    return buf;
}

/* Sends `method` on `path` of the test server with `handler` (NULL: bytes) and returns the code;
 * *out is the response on HC_OK. */
static inline hc_code hc_test_send(hc_client *client, const char *method, const char *path,
                            hc_handler *handler, hc_response **out) {
    hc_request *req = hc_request_new(method, hc_url(path));
    if (!req) return hc_error_code(hc_error_last());
    if (handler) hc_request_set_handler(req, handler);
    hc_code rc = hc_client_send(client, req, out);
    hc_request_free(req);
    return rc;
}

#endif
