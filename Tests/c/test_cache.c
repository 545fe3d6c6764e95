/* The HTTP cache from C: hits and their status, errors as codes, several processes on one
 * SQLite file, and a process killed in the middle of storing a body. */
#include "testutil.h"
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <limits.h>
#include <unistd.h>

/* This program's own path, read once: children exec it. Not "/proc/self/exe" at exec time:
 * under valgrind that names valgrind's tool, while readlink reports the program run. */
static char self_exe[PATH_MAX];

/* The origin's request count for `key` (GET /cache-count/<key>), or -1. */
static int origin_count(const char *key) {
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    char path[256];
    snprintf(path, sizeof path, "/cache-count/%s", key);
    int count = -1;
    if (hc_test_send(client, "GET", path, NULL, &r) == HC_OK) {
        const uint8_t *data = NULL;
        size_t len = 0;
        hc_response_bytes(r, &data, &len);
        char buf[64] = {0};
        memcpy(buf, data, len < 63 ? len : 63);
        const char *at = strstr(buf, "\"count\": ");
        if (at) count = atoi(at + 9);
    }
    hc_response_free(r);
    hc_client_free(client);
    return count;
}

static hc_cache_status get_status(hc_client *client, const char *path, hc_code *code) {
    hc_response *r = NULL;
    *code = hc_test_send(client, "GET", path, NULL, &r);
    hc_cache_status status = *code == HC_OK ? hc_response_cache_status(r) : hc_error_cache_status(hc_error_last());
    hc_response_free(r);
    return status;
}

static void test_hits_and_statuses(void) {
    hc_cache *cache = hc_cache_new(NULL, 0, 0);
    CHECK(cache != NULL);
    hc_client *client = hc_client_new();
    CHECK_CODE(hc_client_set_cache(client, cache), HC_OK);
    hc_cache_free(cache); /* the client keeps its own reference */
    hc_code code;
    CHECK(get_status(client, "/cached/c-hit?h=Cache-Control:max-age%3D60", &code) == HC_CACHE_MISS && code == HC_OK);
    CHECK(get_status(client, "/cached/c-hit?h=Cache-Control:max-age%3D60", &code) == HC_CACHE_HIT && code == HC_OK);
    CHECK(origin_count("c-hit") == 1);
    /* An error where a response came says how the cache answered. */
    CHECK(get_status(client, "/cached/c-err?status=503", &code) == HC_CACHE_MISS);
    CHECK(code == HC_EUNACCEPTABLE_STATUS);
    /* Without a cache: none. */
    CHECK_CODE(hc_client_set_cache(client, NULL), HC_OK);
    CHECK(get_status(client, "/cached/c-hit?h=Cache-Control:max-age%3D60", &code) == HC_CACHE_NONE);
    CHECK(origin_count("c-hit") == 2);
    hc_client_free(client);
}

static void test_arguments(void) {
    CHECK(hc_cache_new(NULL, -1, 0) == NULL && hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    CHECK(hc_cache_new(NULL, 0, 8) == NULL && hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_cache(NULL, NULL), HC_EINVALID_ARG);
    CHECK(hc_response_cache_status(NULL) == HC_CACHE_NONE);
    CHECK(hc_cache_size(NULL) == -1);
    CHECK(strcmp(hc_cache_status_name(HC_CACHE_REVALIDATED), "revalidated") == 0);
    CHECK(strcmp(hc_cache_status_name(HC_CACHE_NONE), "none") == 0);
    CHECK(hc_cache_status_name((hc_cache_status)9) == NULL);
    hc_cache_free(NULL);
    /* A file that is not a database: a clear error, and the file left alone. */
    char path[] = "/tmp/hc-cache-garbage-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, "not a database at all, just text; not a database at all", 56) == 56);
    close(fd);
    CHECK(hc_cache_new(path, 0, 0) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_ELOCAL_IO);
    CHECK(strstr(hc_error_message(hc_error_last()), "not a usable httpcontent cache") != NULL);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == 56);
    unlink(path);
}

/* The child side: open the cache file, send `rounds` GETs of `path`, exit 0 when every one worked;
 * or, with "kill", stream a large body and SIGKILL itself once 600 KB reached the handler. */
static int kill_after(void *userdata, const uint8_t *buf, size_t len) {
    (void)buf;
    size_t *seen = userdata;
    *seen += len;
    if (*seen >= 600000) raise(SIGKILL);
    return 0;
}

static int child_main(const char *mode, const char *file, const char *base, const char *path) {
    snprintf(hc_base, sizeof hc_base, "%s", base);
    hc_cache *cache = hc_cache_new(file, 0, 0);
    if (!cache) { fprintf(stderr, "child: %s\n", hc_error_message(hc_error_last())); return 3; }
    hc_client *client = hc_client_new();
    hc_client_set_cache(client, cache);
    int failures = 0;
    if (strcmp(mode, "kill") == 0) {
        size_t seen = 0;
        hc_handler *h = hc_handler_stream_cb_new(kill_after, &seen);
        hc_response *r = NULL;
        hc_test_send(client, "GET", path, h, &r);
        return 4; /* not reached: killed mid-body */
    }
    for (int i = 0; i < 20; i++) {
        hc_code code;
        get_status(client, path, &code);
        if (code != HC_OK) {
            fprintf(stderr, "child %d: request %d: %s\n", (int)getpid(), i, hc_error_message(hc_error_last()));
            failures++;
        }
    }
    hc_client_free(client);
    hc_cache_free(cache);
    return failures ? 1 : 0;
}

static pid_t spawn(const char *mode, const char *file, const char *path) {
    pid_t pid = fork();
    if (pid == 0) {
        execl(self_exe, "test_cache", "child", mode, file, hc_base, path, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void test_processes_share_one_file(void) {
    char file[] = "/tmp/hc-cache-shared-XXXXXX";
    int fd = mkstemp(file);
    close(fd);
    unlink(file); /* a new, empty database at that path */
    pid_t kids[4];
    char paths[4][128];
    for (int i = 0; i < 4; i++) {
        /* Two URLs shared by all, one of its own each (300 kB bodies: several chunk rows). */
        snprintf(paths[i], sizeof paths[i], "/cached/%s?h=Cache-Control:max-age%%3D60&n=300000",
                 i % 2 ? "c-proc-odd" : "c-proc-even");
        kids[i] = spawn("get", file, paths[i]);
    }
    for (int i = 0; i < 4; i++) {
        int status = 0;
        CHECK(waitpid(kids[i], &status, 0) == kids[i] && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    /* 80 requests of two URLs: at most one origin request per process and URL. */
    int even = origin_count("c-proc-even"), odd = origin_count("c-proc-odd");
    CHECK(even >= 1 && even <= 2 && odd >= 1 && odd <= 2);
    hc_cache *cache = hc_cache_new(file, 0, 0);
    CHECK(cache != NULL && hc_cache_size(cache) == 600000);
    hc_cache_free(cache);
    char extra[64];
    unlink(file);
    snprintf(extra, sizeof extra, "%s-wal", file); unlink(extra);
    snprintf(extra, sizeof extra, "%s-shm", file); unlink(extra);
}

static void test_killed_mid_store(void) {
    char file[] = "/tmp/hc-cache-killed-XXXXXX";
    int fd = mkstemp(file);
    close(fd);
    unlink(file);
    const char *path = "/cached/c-killed?h=Cache-Control:max-age%3D60&n=2000000";
    pid_t kid = spawn("kill", file, path);
    int status = 0;
    CHECK(waitpid(kid, &status, 0) == kid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* Reopened: no half entry is served, nothing counts as stored, and the body stores whole. */
    hc_cache *cache = hc_cache_new(file, 0, 0);
    CHECK(cache != NULL);
    CHECK(hc_cache_size(cache) == 0);
    hc_client *client = hc_client_new();
    hc_client_set_cache(client, cache);
    hc_code code;
    CHECK(get_status(client, path, &code) == HC_CACHE_MISS && code == HC_OK);
    hc_response *r = NULL;
    CHECK_CODE(hc_test_send(client, "GET", path, NULL, &r), HC_OK);
    const uint8_t *data = NULL;
    size_t len = 0;
    hc_response_bytes(r, &data, &len);
    CHECK(hc_response_cache_status(r) == HC_CACHE_HIT && len == 2000000 && data[1999999] == 1999999 % 251);
    hc_response_free(r);
    CHECK(hc_cache_size(cache) == 2000000);
    hc_client_free(client);
    hc_cache_free(cache);
    unlink(file);
}

/* ---- Batches: the cache on hc_batch_add and the keyed queue (hc_batch_add_queued) ---- */

struct batch_done {
    int calls;
    hc_code code;
    hc_cache_status status;
    size_t streamed; /* bytes the request's stream handler got */
};

static int count_bytes(void *userdata, const uint8_t *buf, size_t len) {
    (void)buf;
    ((struct batch_done *)userdata)->streamed += len;
    return 0;
}

static void batch_done_cb(void *userdata, hc_code code, hc_response *response) {
    struct batch_done *d = userdata;
    d->calls++;
    d->code = code;
    d->status = code == HC_OK ? hc_response_cache_status(response) : hc_error_cache_status(hc_error_last());
    hc_response_free(response);
}

/* One request of `path` through a batch with a stream handler; the batch run to the end. When
 * `pending_after_add` is not NULL, the batch's pending count right after hc_batch_add. */
static struct batch_done batch_get(hc_client *client, const char *path, size_t *pending_after_add) {
    struct batch_done d = {0};
    hc_batch *batch = hc_batch_new(client);
    hc_request *req = hc_request_new("GET", hc_url(path));
    hc_handler *h = hc_handler_stream_cb_new(count_bytes, &d);
    hc_request_set_handler(req, h);
    CHECK_CODE(hc_batch_add(batch, req, batch_done_cb, &d), HC_OK);
    hc_request_free(req);
    if (pending_after_add) *pending_after_add = d.calls == 0 ? hc_batch_pending(batch) : 0;
    CHECK_CODE(hc_batch_run(batch), HC_OK);
    hc_handler_free(h);
    hc_batch_free(batch);
    return d;
}

static void test_batches_use_the_cache(void) {
    hc_cache *cache = hc_cache_new(NULL, 0, 0);
    hc_client *client = hc_client_new();
    CHECK_CODE(hc_client_set_cache(client, cache), HC_OK);
    hc_cache_free(cache);
    const char *fresh = "/cached/c-batch?h=Cache-Control:max-age%3D60&n=100000";
    struct batch_done first = batch_get(client, fresh, NULL);
    CHECK(first.calls == 1 && first.code == HC_OK && first.status == HC_CACHE_MISS && first.streamed == 100000);
    size_t pending = 0;
    struct batch_done hit = batch_get(client, fresh, &pending);
    /* The hit went through the handler, at the batch's turn (not during hc_batch_add), and
     * the origin saw nothing. */
    CHECK(hit.calls == 1 && hit.code == HC_OK && hit.status == HC_CACHE_HIT && hit.streamed == 100000);
    CHECK(pending == 1);
    CHECK(origin_count("c-batch") == 1);
    /* A stale entry is revalidated through the batch: 304, the stored body replayed. */
    const char *stale = "/cached/c-batch-304?h=Cache-Control:no-cache&etag=%22v%22&body=kept";
    CHECK(batch_get(client, stale, NULL).status == HC_CACHE_MISS);
    struct batch_done again = batch_get(client, stale, NULL);
    CHECK(again.code == HC_OK && again.status == HC_CACHE_REVALIDATED && again.streamed == 4);
    CHECK(origin_count("c-batch-304") == 2);

    /* The keyed queue (the Python binding's asyncio path): a hit handed back by hc_batch_step. */
    hc_batch *batch = hc_batch_new(client);
    int fd = -1;
    CHECK_CODE(hc_batch_poll_fd(batch, &fd), HC_OK);
    hc_request *req = hc_request_new("GET", hc_url(fresh));
    CHECK_CODE(hc_batch_add_queued(batch, req, 7), HC_OK);
    hc_request_free(req);
    uint64_t keys[4];
    hc_fetch_result results[4];
    hc_error *errors[4];
    size_t count = 0;
    long timeout_ms = -1;
    for (int turn = 0; turn < 50 && count == 0; turn++) {
        CHECK_CODE(hc_batch_step(batch, 4, keys, results, errors, &count, &timeout_ms), HC_OK);
        if (turn == 0) CHECK(count == 1 || timeout_ms == 0); /* due at once: no socket to wait on */
        if (count == 0) usleep(1000);
    }
    CHECK(count == 1 && keys[0] == 7 && errors[0] == NULL && results[0].response != NULL);
    if (count == 1 && results[0].response) {
        CHECK(results[0].status == 200 && results[0].bytes_len == 100000);
        CHECK(hc_response_cache_status(results[0].response) == HC_CACHE_HIT);
        hc_response_free(results[0].response);
    }
    CHECK(origin_count("c-batch") == 1);
    hc_batch_free(batch);
    hc_client_free(client);
}

/* The tree handler's hit reads its stored tape back: the same tree as the miss, texts still
 * NUL-terminated for C, from this client and from another one opening the same file. */
static char *tree_text(hc_client *client, const char *path, hc_cache_status want) {
    hc_handler *h = hc_handler_json_new(NULL);
    hc_response *r = NULL;
    char *text = NULL;
    CHECK_CODE(hc_test_send(client, "GET", path, h, &r), HC_OK);
    hc_handler_free(h);
    if (!r) return NULL;
    CHECK(hc_response_cache_status(r) == want);
    const hc_json *root = hc_response_json(r);
    CHECK(root != NULL && hc_json_type(root) == HC_JSON_OBJECT);
    const char *s = NULL;
    size_t len = 0;
    CHECK_CODE(hc_json_string(hc_json_get(root, "name"), &s, &len), HC_OK);
    CHECK(s != NULL && strlen(s) == len && len == strlen("a name longer than sixteen bytes"));
    uint8_t *data = NULL;
    size_t n = 0;
    if (root && hc_json_serialize(root, 0, &data, &n) == HC_OK) {
        text = strndup((const char *)data, n);
        hc_buffer_free(data);
    }
    hc_response_free(r);
    return text;
}

static void test_tree_hits_read_the_stored_tape(void) {
    char db[] = "/tmp/hc-c-tape-XXXXXX";
    int fd = mkstemp(db);
    CHECK(fd >= 0);
    close(fd);
    remove(db);
    const char *path = "/cached/c-tape?h=Cache-Control:max-age%3D60&type=application/json"
                       "&body=%7B%22name%22%3A%22a%20name%20longer%20than%20sixteen%20bytes%22%2C%22n%22%3A"
                       "%5B1%2C2.5%2C-3e300%2Cnull%2Ctrue%2C%7B%7D%5D%2C%22u%22%3A%22%C3%BC%E2%9C%93%22%7D";
    hc_client *clients[2];
    for (int i = 0; i < 2; i++) {
        hc_cache *cache = hc_cache_new(db, 0, 0);
        CHECK(cache != NULL);
        clients[i] = hc_client_new();
        CHECK_CODE(hc_client_set_cache(clients[i], cache), HC_OK);
        hc_cache_free(cache);
    }
    char *miss = tree_text(clients[0], path, HC_CACHE_MISS);
    char *hit = tree_text(clients[0], path, HC_CACHE_HIT);
    char *other = tree_text(clients[1], path, HC_CACHE_HIT);
    CHECK(miss && hit && other);
    if (miss && hit && other) {
        CHECK(strcmp(miss, "{\"name\":\"a name longer than sixteen bytes\",\"n\":[1,2.5,-3e+300,null,true,{}],"
                           "\"u\":\"\xC3\xBC\xE2\x9C\x93\"}") == 0 || (fprintf(stderr, "  tree: %s\n", miss), 0));
        CHECK(strcmp(hit, miss) == 0 && strcmp(other, miss) == 0);
    }
    CHECK(origin_count("c-tape") == 1);
    free(miss);
    free(hit);
    free(other);
    for (int i = 0; i < 2; i++) hc_client_free(clients[i]);
    remove(db);
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "child") == 0) return child_main(argv[2], argv[3], argv[4], argv[5]);
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (n <= 0) { perror("readlink /proc/self/exe"); return 1; }
    self_exe[n] = 0;
    hc_test_server_start();
    test_arguments();
    test_hits_and_statuses();
    test_batches_use_the_cache();
    test_tree_hits_read_the_stored_tape();
    test_processes_share_one_file();
    test_killed_mid_store();
    return hc_test_finish();
}
