/* Many transfers at once from C: a batch of 500 mixed requests at concurrency 32, an event
 * loop driven by the caller, and a bounded cancel-while-running stress. No leaked handles. */
#include "testutil.h"
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

struct job {
    int index;
    int kind;
    hc_code code;
    int status;
    size_t len;
    int ok;
    int done;
};

static char dir[] = "/tmp/hc-batch-XXXXXX";

static void on_done(void *userdata, hc_code code, hc_response *response) {
    struct job *job = userdata;
    job->done++;
    job->code = code;
    if (response) {
        job->status = hc_response_status(response);
        const uint8_t *data; size_t len;
        const char *text;
        switch (job->kind) {
        case 0: /* bytes: the body is the one this request asked for */
            if (hc_response_bytes(response, &data, &len) == HC_OK) {
                job->len = len;
                job->ok = len == (size_t)(100 + job->index);
                for (size_t i = 0; job->ok && i < len; i++) job->ok = data[i] == i % 251;
            }
            break;
        case 1: /* text: the text names the request */
            if (hc_response_text(response, &text, &len) == HC_OK) {
                char want[32];
                snprintf(want, sizeof want, "job%d", job->index);
                job->ok = strcmp(text, want) == 0;
            }
            break;
        case 5: /* h2server.py's /f{i}.bin: 1000 + i bytes of value i */
            if (hc_response_bytes(response, &data, &len) == HC_OK) {
                job->ok = len == (size_t)(1000 + job->index);
                for (size_t i = 0; job->ok && i < len; i++) job->ok = data[i] == job->index;
            }
            break;
        case 4: { /* file */
            int64_t size = 0;
            job->ok = hc_response_file(response, NULL, NULL, &size, NULL) == HC_OK && size == 1000 + job->index;
            break;
        }
        default:
            break;
        }
        hc_response_free(response);
    } else {
        job->status = hc_error_status(hc_error_last());
        job->ok = (job->kind == 2 && code == HC_EUNACCEPTABLE_STATUS && job->status == 418)
               || (job->kind == 3 && code == HC_ETIMEOUT);
    }
}

static int count_files(const char *path) {
    DIR *d = opendir(path);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    if (d) closedir(d);
    return n;
}

static void test_500_mixed_transfers_each_get_their_own_result(hc_client *client) {
    enum { N = 500 };
    static struct job jobs[N];
    hc_handler *bytes = hc_handler_bytes_new(0);
    hc_handler *text = hc_handler_text_new(HC_ENCODING_AUTO, 1);
    hc_batch *batch = hc_batch_new(client);
    CHECK_CODE(hc_batch_set_concurrency(batch, 32), HC_OK);
    for (int i = 0; i < N; i++) {
        char path[128];
        jobs[i] = (struct job){.index = i, .kind = i % 5};
        hc_handler *file = NULL;
        switch (jobs[i].kind) {
        case 0: snprintf(path, sizeof path, "/bytes/%d", 100 + i); break;
        case 1: snprintf(path, sizeof path, "/text?text=job%d", i); break;
        case 2: snprintf(path, sizeof path, "/status/418"); break;
        case 3: snprintf(path, sizeof path, "/stall?bytes=10"); break;
        default: {
            snprintf(path, sizeof path, "/bytes/%d", 1000 + i);
            char target[256];
            snprintf(target, sizeof target, "%s/f%d.bin", dir, i);
            file = hc_handler_file_new(target, 0);
        }
        }
        hc_request *req = hc_request_new("GET", hc_url(path));
        hc_request_set_handler(req, jobs[i].kind == 1 ? text : file ? file : bytes);
        if (jobs[i].kind == 3) hc_request_set_timeout_ms(req, 300);
        CHECK_CODE(hc_batch_add(batch, req, on_done, &jobs[i]), HC_OK);
        hc_request_free(req); /* the batch took what it needs */
        hc_handler_free(file);
    }
    CHECK(hc_batch_pending(batch) == N);
    CHECK_CODE(hc_batch_run(batch), HC_OK);
    CHECK(hc_batch_pending(batch) == 0);
    int all_once = 1, all_ok = 1;
    for (int i = 0; i < N; i++) {
        if (jobs[i].done != 1) all_once = 0;
        if (!jobs[i].ok) {
            all_ok = 0;
            fprintf(stderr, "job %d (kind %d): code %s status %d\n", i, jobs[i].kind,
                    hc_code_name(jobs[i].code), jobs[i].status);
        }
    }
    CHECK(all_once);
    CHECK(all_ok);
    CHECK(count_files(dir) == N / 5); /* every download complete, no temporary file left */
    hc_batch_free(batch);
    hc_handler_free(bytes);
    hc_handler_free(text);
}

/* One turn of an event loop the caller owns: waits on libcurl's sockets (select) for as long
 * as hc_batch_timeout_ms says, at most cap_ms. */
static void wait_on_sockets(hc_batch *batch, long cap_ms) {
    fd_set r, w, e;
    FD_ZERO(&r); FD_ZERO(&w); FD_ZERO(&e);
    int max_fd = -1;
    long timeout = -1;
    hc_batch_fdset(batch, &r, &w, &e, &max_fd);
    hc_batch_timeout_ms(batch, &timeout);
    if (timeout < 0 || timeout > cap_ms) timeout = cap_ms;
    struct timeval tv = {timeout / 1000, (timeout % 1000) * 1000};
    if (max_fd >= 0) select(max_fd + 1, &r, &w, &e, &tv);
    else hc_batch_wait(batch, (int)timeout);
}

static void test_event_loop_owned_by_the_caller(hc_client *client) {
    struct job jobs[3] = {{.index = 0}, {.index = 1}, {.index = 2}};
    hc_batch *batch = hc_batch_new(client);
    for (int i = 0; i < 3; i++) {
        char path[64];
        snprintf(path, sizeof path, "/bytes/%d", 100 + i);
        hc_request *req = hc_request_new("GET", hc_url(path));
        hc_batch_add(batch, req, on_done, &jobs[i]);
        hc_request_free(req);
    }
    size_t pending = 3;
    int rounds = 0;
    while (pending > 0 && rounds++ < 10000) {
        CHECK_CODE(hc_batch_perform(batch, &pending), HC_OK);
        if (!pending) break;
        wait_on_sockets(batch, 100);
    }
    CHECK(pending == 0);
    CHECK(jobs[0].ok && jobs[1].ok && jobs[2].ok);
    hc_batch_free(batch);
}

struct canceller { hc_cancel **tokens; int n; };

static void *cancel_all_soon(void *arg) {
    struct canceller *c = arg;
    usleep(100 * 1000);
    for (int i = 0; i < c->n; i++) hc_cancel_cancel(c->tokens[i]);
    return NULL;
}

static void test_cancel_while_running_stress(hc_client *client) {
    enum { ROUNDS = 5, PER = 40 };
    for (int round = 0; round < ROUNDS; round++) {
        hc_cancel *tokens[PER];
        struct job jobs[PER];
        hc_batch *batch = hc_batch_new(client);
        for (int i = 0; i < PER; i++) {
            tokens[i] = hc_cancel_new();
            jobs[i] = (struct job){.index = i, .kind = 9};
            hc_request *req = hc_request_new("GET", hc_url("/slow?bytes=2000&delay=0.05&chunk=10"));
            hc_request_set_cancel(req, tokens[i]);
            hc_batch_add(batch, req, on_done, &jobs[i]);
            hc_request_free(req);
        }
        pthread_t t;
        struct canceller c = {tokens, PER};
        pthread_create(&t, NULL, cancel_all_soon, &c);
        hc_batch_run(batch);
        pthread_join(t, NULL);
        int cancelled = 0;
        for (int i = 0; i < PER; i++) {
            cancelled += jobs[i].done == 1 && jobs[i].code == HC_ECANCELLED;
            hc_cancel_free(tokens[i]);
        }
        CHECK(cancelled == PER);
        hc_batch_free(batch);
    }
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A caller's event loop that waits as long as hc_batch_timeout_ms says, on a server that sent
 * its headers and then nothing: a token cancelled from another thread must end the request
 * within about a second (the timer said ~30 s, the connect timeout's, so the loop slept on). */
static void *cancel_later(void *arg) {
    usleep(500 * 1000); /* after libcurl's first timers (200 ms) have fired */
    hc_cancel_cancel(arg);
    return NULL;
}

static void test_cancel_from_another_thread_reaches_a_callers_event_loop(hc_client *client) {
    hc_cancel *token = hc_cancel_new();
    struct job job = {.index = 0, .kind = 9};
    hc_batch *batch = hc_batch_new(client);
    hc_request *req = hc_request_new("GET", hc_url("/stall?bytes=5"));
    hc_request_set_cancel(req, token);
    hc_batch_add(batch, req, on_done, &job);
    hc_request_free(req);
    pthread_t t;
    pthread_create(&t, NULL, cancel_later, token);
    double start = seconds();
    size_t pending = 1;
    while (pending > 0 && seconds() - start < 10) {
        hc_batch_perform(batch, &pending);
        if (!pending) break;
        wait_on_sockets(batch, 10000); /* the test's own bound */
    }
    pthread_join(t, NULL);
    CHECK(pending == 0 && job.done == 1 && job.code == HC_ECANCELLED);
    CHECK(seconds() - start < 2);
    hc_batch_free(batch);
    hc_cancel_free(token);
}

/* nginx's log from line `skip` on ("<connection> <protocol> <uri>" per request): how many
 * lines, how many distinct connections (of the first 64), how many were `protocol`. */
struct logged { int lines, connections, matching; };

static struct logged read_log(const char *log, int skip, const char *protocol) {
    struct logged got = {0, 0, 0};
    char seen[64][32];
    FILE *lf = fopen(log, "r");
    char conn[32], proto[32], uri[128];
    for (int n = 0; lf && n < 1000 && fscanf(lf, "%31s %31s %127s", conn, proto, uri) == 3; n++) {
        if (n < skip) continue;
        got.lines++;
        got.matching += strcmp(proto, protocol) == 0;
        int known = 0;
        for (int i = 0; i < got.connections && !known; i++) known = strcmp(seen[i], conn) == 0;
        if (!known && got.connections < 64) snprintf(seen[got.connections++], sizeof seen[0], "%s", conn);
    }
    if (lf) fclose(lf);
    return got;
}

/* h2server.py's /f0.bin ... /f{n-1}.bin at once in one batch of `c` (all n in flight); each
 * checked by on_done (kind 5). */
static void fetch_h2server_files(hc_client *c, int port, struct job *jobs, int n) {
    hc_batch *batch = hc_batch_new(c);
    CHECK_CODE(hc_batch_set_concurrency(batch, (size_t)n), HC_OK);
    for (int i = 0; i < n; i++) {
        jobs[i] = (struct job){.index = i, .kind = 5};
        char url[128];
        snprintf(url, sizeof url, "https://127.0.0.1:%d/f%d.bin", port, i);
        hc_request *req = hc_request_new("GET", url);
        CHECK_CODE(hc_batch_add(batch, req, on_done, &jobs[i]), HC_OK);
        hc_request_free(req);
    }
    CHECK_CODE(hc_batch_run(batch), HC_OK);
    int ok = 0;
    for (int i = 0; i < n; i++) ok += jobs[i].done == 1 && jobs[i].ok;
    CHECK(ok == n);
    hc_batch_free(batch);
}

/* The client's host limit (hc_client_set_host_limit) bounds a batch's connections: 12
 * HTTP/1.1 transfers at once to one host, at most 2 connections in nginx's log; with no limit
 * the same batch opens more than 2 (so the count can fail). */
static void check_host_limit(int port, const char *ca, const char *log, int logged_before) {
    enum { N = 12 };
    static struct job jobs[N];
    int skip = logged_before;
    for (int limit = 2; limit >= 0; limit -= 2) {
        hc_client *c = hc_client_new();
        CHECK_CODE(hc_client_set_ca_file(c, ca), HC_OK);
        CHECK_CODE(hc_client_set_http_version(c, HC_HTTP_1_1), HC_OK);
        CHECK_CODE(hc_client_set_host_limit(c, (size_t)limit), HC_OK);
        fetch_h2server_files(c, port, jobs, N);
        struct logged got = {0, 0, 0};
        for (int tries = 0; tries < 500 && got.lines < N; tries++) { /* nginx logs after responding */
            got = read_log(log, skip, "HTTP/1.1");
            if (got.lines < N) usleep(10000);
        }
        CHECK(got.lines == N && got.matching == N);
        if (limit > 0) CHECK(got.connections >= 1 && got.connections <= limit);
        else CHECK(got.connections > 2);
        skip += got.lines;
        hc_client_free(c);
    }
}

/* HTTP/2: a batch's 40 transfers at once share one connection to an h2 server (a real nginx
 * with TLS, Tests/server/h2server.py, started beside the test server); skipped, saying why,
 * where nginx or openssl is missing. Then the client's host limit, over HTTP/1.1. */
static void test_h2_transfers_share_one_connection(void) {
    char script[512], tmp[] = "/tmp/hc-h2-XXXXXX";
    snprintf(script, sizeof script, "%s", HC_TEST_SERVER);
    char *slash = strrchr(script, '/');
    snprintf(slash + 1, sizeof script - (size_t)(slash + 1 - script), "h2server.py");
    CHECK(mkdtemp(tmp) != NULL);
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) { perror("pipe"); exit(2); }
    pid_t pid = fork();
    if (pid == 0) { /* the server stops when our end of its stdin closes */
        dup2(in[0], 0); dup2(out[1], 1);
        close(in[1]); close(out[0]);
        execlp("python3", "python3", script, tmp, (char *)NULL);
        _exit(127);
    }
    close(in[0]); close(out[1]);
    FILE *f = fdopen(out[0], "r");
    char line[1024] = {0}, ca[512] = {0}, log[512] = {0};
    int port = 0;
    if (!f || !fgets(line, sizeof line, f)) line[0] = 0;
    if (strncmp(line, "SKIP ", 5) == 0) {
        printf("skipped test_h2_transfers_share_one_connection: %s", line + 5);
    } else if (sscanf(line, "READY %d %511s %511s", &port, ca, log) != 3) {
        CHECK(!"h2server.py started");
    } else {
        enum { N = 40 };
        static struct job jobs[N];
        hc_client *c = hc_client_new();
        CHECK_CODE(hc_client_set_ca_file(c, ca), HC_OK);
        fetch_h2server_files(c, port, jobs, N);
        /* nginx's log: all h2 on one connection */
        struct logged got = {0, 0, 0};
        for (int tries = 0; tries < 500 && got.lines < N; tries++) { /* nginx logs after responding */
            got = read_log(log, 0, "HTTP/2.0");
            if (got.lines < N) usleep(10000);
        }
        CHECK(got.lines == N && got.matching == N && got.connections == 1);
        hc_client_free(c);
        check_host_limit(port, ca, log, got.lines);
    }
    if (f) fclose(f);
    close(in[1]);
    waitpid(pid, NULL, 0);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    CHECK(system(cmd) == 0);
}

int main(void) {
    hc_test_server_start();
    CHECK(mkdtemp(dir) != NULL);
    int64_t before = hc_live_handles();
    hc_client *client = hc_client_new();
    test_500_mixed_transfers_each_get_their_own_result(client);
    test_event_loop_owned_by_the_caller(client);
    test_cancel_while_running_stress(client);
    test_cancel_from_another_thread_reaches_a_callers_event_loop(client);
    test_h2_transfers_share_one_connection();
    hc_client_free(client);
    CHECK(hc_live_handles() == before);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return hc_test_finish();
}
