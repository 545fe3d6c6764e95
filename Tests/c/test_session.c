/* The session layers from C: cookies, authentication, retries. */
#include "testutil.h"
#include <time.h>

static int count_cookie(void *userdata, const char *name, const char *value, const char *domain,
                        const char *path, unsigned int flags, int64_t expires) {
    (void)domain; (void)path; (void)flags; (void)expires;
    int *found = userdata;
    if (strcmp(name, "a") == 0 && strcmp(value, "1") == 0) found[0]++;
    found[1]++;
    return 0;
}

static int stop_at_first(void *userdata, const char *name, const char *value, const char *domain,
                         const char *path, unsigned int flags, int64_t expires) {
    (void)userdata; (void)name; (void)value; (void)domain; (void)path; (void)flags; (void)expires;
    return 1;
}

/* The body of a response as a NUL-terminated string in buf. */
static const char *text_of(hc_response *r, char *buf, size_t cap) {
    const uint8_t *data = NULL;
    size_t len = 0;
    buf[0] = 0;
    if (r && hc_response_bytes(r, &data, &len) == HC_OK) {
        if (len >= cap) len = cap - 1;
        memcpy(buf, data, len);
        buf[len] = 0;
    }
    return buf;
}

static void test_cookies(void) {
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    char buf[512];
    CHECK_CODE(hc_test_send(client, "GET", "/cookie?set=a=1", NULL, &r), HC_OK);
    hc_response_free(r);
    CHECK_CODE(hc_test_send(client, "GET", "/cookie", NULL, &r), HC_OK);
    CHECK(strstr(text_of(r, buf, sizeof buf), "\"a=1\"") != NULL);
    hc_response_free(r);
    int found[2] = {0, 0};
    CHECK_CODE(hc_client_cookies(client, count_cookie, found), HC_OK);
    CHECK(found[0] == 1 && found[1] == 1);
    CHECK_CODE(hc_client_cookies(client, stop_at_first, NULL), HC_ECALLBACK);

    /* set, per request, clear */
    CHECK_CODE(hc_client_cookie_set(client, "b", "2", "127.0.0.1", NULL, 0, 0), HC_OK);
    CHECK_CODE(hc_client_cookie_set(client, "bad;", "2", "127.0.0.1", NULL, 0, 0), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_cookie_set(client, "c", "3", NULL, NULL, 0, 0), HC_EINVALID_ARG);
    hc_request *req = hc_request_new("GET", hc_url("/cookie"));
    CHECK_CODE(hc_request_add_cookie(req, "once", "x"), HC_OK);
    CHECK_CODE(hc_request_add_cookie(req, "no\r\n", "x"), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_send(client, req, &r), HC_OK);
    text_of(r, buf, sizeof buf);
    CHECK(strstr(buf, "a=1") && strstr(buf, "b=2") && strstr(buf, "once=x"));
    hc_response_free(r);
    hc_request_free(req);
    /* A setting changed afterwards keeps the jar. */
    CHECK_CODE(hc_client_set_timeout_ms(client, 20000), HC_OK);
    found[0] = found[1] = 0;
    CHECK_CODE(hc_client_cookies(client, count_cookie, found), HC_OK);
    CHECK(found[1] == 2);

    /* save and load */
    char path[] = "/tmp/hc-cookies-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECK_CODE(hc_client_cookies_save(client, path), HC_OK);
    CHECK_CODE(hc_client_cookies_save(client, NULL), HC_EINVALID_ARG); /* no file given */
    CHECK_CODE(hc_client_cookies_clear(client), HC_OK);
    found[0] = found[1] = 0;
    CHECK_CODE(hc_client_cookies(client, count_cookie, found), HC_OK);
    CHECK(found[1] == 0);
    CHECK_CODE(hc_client_cookies_load(client, path), HC_OK);
    found[0] = found[1] = 0;
    CHECK_CODE(hc_client_cookies(client, count_cookie, found), HC_OK);
    CHECK(found[0] == 1 && found[1] == 2);
    CHECK_CODE(hc_client_cookies_load(client, "/nonexistent/jar.txt"), HC_ELOCAL_IO);
    hc_client_free(client);

    /* A client whose jar is a file starts from it. */
    hc_client *again = hc_client_new();
    CHECK_CODE(hc_client_set_cookies(again, 1, path), HC_OK);
    CHECK_CODE(hc_test_send(again, "GET", "/cookie", NULL, &r), HC_OK);
    CHECK(strstr(text_of(r, buf, sizeof buf), "a=1") != NULL);
    hc_response_free(r);
    /* Off: nothing kept, the jar calls fail. */
    CHECK_CODE(hc_client_set_cookies(again, 0, NULL), HC_OK);
    CHECK_CODE(hc_test_send(again, "GET", "/cookie", NULL, &r), HC_OK);
    CHECK(strstr(text_of(r, buf, sizeof buf), "null") != NULL);
    hc_response_free(r);
    CHECK_CODE(hc_client_cookies(again, count_cookie, found), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_cookies(NULL, count_cookie, found), HC_EINVALID_ARG);
    hc_client_free(again);
    unlink(path);
}

static int hook_calls, hook_refreshes;

static int bearer_hook(void *userdata, hc_auth_request *request, int refresh) {
    (void)userdata;
    hook_calls++;
    if (refresh) hook_refreshes++;
    return hc_auth_request_set_header(request, "Authorization", refresh ? "Bearer fresh" : "Bearer stale");
}

static void test_auth(void) {
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    char buf[512];
    hc_request *req = hc_request_new("GET", hc_url("/digest-auth/u/p"));
    CHECK_CODE(hc_request_set_auth(req, HC_AUTH_DIGEST, "u", "p", NULL, NULL), HC_OK);
    CHECK_CODE(hc_client_send(client, req, &r), HC_OK);
    CHECK(hc_response_status(r) == 200);
    hc_response_free(r);
    CHECK_CODE(hc_request_set_auth(req, HC_AUTH_DIGEST, "u", "wrong", NULL, NULL), HC_OK);
    CHECK_CODE(hc_client_send(client, req, &r), HC_EUNACCEPTABLE_STATUS);
    CHECK(hc_error_status(hc_error_last()) == 401);
    hc_request_free(req);
    CHECK_CODE(hc_request_set_auth(NULL, HC_AUTH_BASIC, "u", "p", NULL, NULL), HC_EINVALID_ARG);

    CHECK_CODE(hc_client_set_auth(client, HC_AUTH_BASIC, "u", "p", NULL, NULL), HC_OK);
    CHECK_CODE(hc_test_send(client, "GET", "/basic-auth/u/p", NULL, &r), HC_OK);
    hc_response_free(r);
    CHECK_CODE(hc_client_set_auth(client, HC_AUTH_BEARER, "tok", NULL, NULL, NULL), HC_OK);
    CHECK_CODE(hc_test_send(client, "GET", "/bearer/tok", NULL, &r), HC_OK);
    hc_response_free(r);
    CHECK_CODE(hc_client_set_auth(client, HC_AUTH_BEARER, "bad\r\ntoken", NULL, NULL, NULL), HC_OK);
    CHECK_CODE(hc_test_send(client, "GET", "/bearer/tok", NULL, &r), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_auth(client, HC_AUTH_BASIC, "u", NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_auth(client, 99, NULL, NULL, NULL, NULL), HC_EINVALID_ARG);

    /* A custom hook refreshes once on 401. */
    CHECK_CODE(hc_client_set_auth(client, HC_AUTH_CUSTOM, NULL, NULL, bearer_hook, NULL), HC_OK);
    CHECK_CODE(hc_test_send(client, "GET", "/bearer/fresh", NULL, &r), HC_OK);
    CHECK(hook_calls == 2 && hook_refreshes == 1);
    hc_response_free(r);

    /* No kind of credentials reaches another host after a redirect. */
    char other[256], path[400];
    snprintf(other, sizeof other, "%s/auth-check", hc_base);
    char *host = strstr(other, "127.0.0.1");
    memmove(host + 9, host + 9, strlen(host + 9) + 1);
    memcpy(host, "localhost", 9);
    snprintf(path, sizeof path, "/redirect-to?url=%s", other);
    const int kinds[] = {HC_AUTH_BASIC, HC_AUTH_BEARER, HC_AUTH_DIGEST, HC_AUTH_CUSTOM};
    for (size_t i = 0; i < 4; i++) {
        CHECK_CODE(hc_client_set_auth(client, kinds[i], "u", "p", bearer_hook, NULL), HC_OK);
        CHECK_CODE(hc_test_send(client, "GET", path, NULL, &r), HC_OK);
        CHECK(strstr(hc_response_url(r), "localhost") != NULL);
        CHECK(strstr(text_of(r, buf, sizeof buf), "\"authorization\": null") != NULL);
        hc_response_free(r);
    }
    hc_client_free(client);
}

static void test_retries(void) {
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    char path[128];
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    CHECK_CODE(hc_client_set_retry(client, 3, 10, 2000, NULL, 0, 0), HC_OK);
    snprintf(path, sizeof path, "/flaky?key=c%d&fail=2&retry_after=0", rand());
    CHECK_CODE(hc_test_send(client, "GET", path, NULL, &r), HC_OK);
    CHECK(hc_response_status(r) == 200);
    hc_response_free(r);
    snprintf(path, sizeof path, "/flaky?key=c%d&fail=9", rand());
    CHECK_CODE(hc_test_send(client, "GET", path, NULL, &r), HC_EUNACCEPTABLE_STATUS);
    CHECK(hc_error_attempts(hc_error_last()) == 3);
    CHECK(strstr(hc_error_message(hc_error_last()), "after 3 attempts") != NULL);
    /* Only the listed statuses. */
    const int only429[] = {429};
    hc_request *req = hc_request_new("GET", "http://127.0.0.1/");
    CHECK_CODE(hc_request_set_retry(req, 3, 10, 2000, only429, 1, 0), HC_OK);
    hc_request_free(req);
    snprintf(path, sizeof path, "%s/flaky?key=c%d&fail=1", hc_base, rand());
    req = hc_request_new("GET", path);
    CHECK_CODE(hc_request_set_retry(req, 3, 10, 2000, only429, 1, 0), HC_OK);
    CHECK_CODE(hc_client_send(client, req, &r), HC_EUNACCEPTABLE_STATUS);
    CHECK(hc_error_attempts(hc_error_last()) == 1);
    hc_request_free(req);
    CHECK_CODE(hc_client_set_retry(client, -1, 0, 0, NULL, 0, 0), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_retry(client, 2, 0, 0, NULL, 3, 0), HC_EINVALID_ARG);
    hc_error_clear();
    CHECK(hc_error_attempts(hc_error_last()) == 0);
    hc_client_free(client);
}

static void test_digests(void) {
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    char dir[] = "/tmp/hc-digest-XXXXXX", path[128], part[160], url[128];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/file.bin", dir);
    snprintf(part, sizeof part, "%s.part", path);
    /* /range/4 is bytes 0 1 2 3: sha256 of that. */
    hc_handler *file = hc_handler_file_new(path, HC_FILE_RESUME);
    CHECK_CODE(hc_handler_file_set_digest(file, "sha256",
        "054edec1d0211f624fed0cbca9d4f9400b0e491c43742af2c5b0abebf0c990d8"), HC_OK);
    CHECK_CODE(hc_test_send(client, "GET", "/range/4", file, &r), HC_OK);
    CHECK(r && hc_response_file_digest(r) &&
          strcmp(hc_response_file_digest(r), "sha256:054edec1d0211f624fed0cbca9d4f9400b0e491c43742af2c5b0abebf0c990d8") == 0);
    hc_response_free(r);
    CHECK_CODE(hc_handler_file_set_digest(file, "sha256", "00"), HC_EINVALID_ARG);
    CHECK_CODE(hc_handler_file_set_digest(file, "crc32", "00"), HC_EINVALID_ARG);
    CHECK_CODE(hc_handler_file_set_digest(file, "md5", "00000000000000000000000000000000"), HC_OK);
    unlink(path);
    CHECK_CODE(hc_test_send(client, "GET", "/range/4", file, &r), HC_ECHECKSUM_MISMATCH);
    CHECK(strcmp(hc_code_name(HC_ECHECKSUM_MISMATCH), "checksum mismatch") == 0);
    CHECK(access(path, F_OK) != 0 && access(part, F_OK) != 0);
    /* A wrong Repr-Digest from the server is the same error. */
    CHECK_CODE(hc_handler_file_set_digest(file, NULL, NULL), HC_OK);
    snprintf(url, sizeof url, "/versioned/1000?key=c%d&digest=wrong", rand());
    CHECK_CODE(hc_test_send(client, "GET", url, file, &r), HC_ECHECKSUM_MISMATCH);
    CHECK(access(path, F_OK) != 0 && access(part, F_OK) != 0);
    hc_handler_free(file);
    rmdir(dir);
    hc_client_free(client);
}

/* The port of proxy `name` in the test server's /proxies document. */
static int proxy_port(const char *doc, const char *name) {
    char key[64];
    snprintf(key, sizeof key, "\"%s\": ", name);
    const char *at = strstr(doc, key);
    return at ? atoi(at + strlen(key)) : 0;
}

/* The target /echo saw: absolute-form when the request came through an http proxy. */
static int echo_target_is(hc_client *client, const char *proxy, const char *want) {
    hc_request *req = hc_request_new("GET", hc_url("/echo"));
    hc_response *r = NULL;
    char buf[4096], expect[512];
    if (proxy) CHECK_CODE(hc_request_set_proxy(req, proxy), HC_OK);
    CHECK_CODE(hc_client_send(client, req, &r), HC_OK);
    snprintf(expect, sizeof expect, "\"target\": \"%s\"", want);
    int ok = strstr(text_of(r, buf, sizeof buf), expect) != NULL;
    if (!ok) fprintf(stderr, "echo: %s (wanted %s)\n", buf, expect);
    hc_response_free(r);
    hc_request_free(req);
    return ok;
}

static void test_proxies(void) {
    hc_client *client = hc_client_new();
    hc_response *r = NULL;
    char doc[512], proxy[160], absolute[256];
    CHECK_CODE(hc_test_send(client, "GET", "/proxies", NULL, &r), HC_OK);
    text_of(r, doc, sizeof doc);
    hc_response_free(r);
    int http = proxy_port(doc, "http"), http_auth = proxy_port(doc, "http_auth");
    int socks = proxy_port(doc, "socks5"), socks_auth = proxy_port(doc, "socks5_auth");
    CHECK(http > 0 && http_auth > 0 && socks > 0 && socks_auth > 0);
    snprintf(absolute, sizeof absolute, "%s/echo", hc_base);

    /* http proxy with credentials; socks5h with and without. */
    snprintf(proxy, sizeof proxy, "http://pu:pp@127.0.0.1:%d", http_auth);
    CHECK(echo_target_is(client, proxy, absolute));
    snprintf(proxy, sizeof proxy, "http://pu:wrong@127.0.0.1:%d", http_auth);
    hc_request *req = hc_request_new("GET", absolute);
    CHECK_CODE(hc_request_set_proxy(req, proxy), HC_OK);
    CHECK_CODE(hc_client_send(client, req, &r), HC_EUNACCEPTABLE_STATUS);
    CHECK(hc_error_status(hc_error_last()) == 407);
    hc_request_free(req);
    snprintf(proxy, sizeof proxy, "socks5h://127.0.0.1:%d", socks);
    CHECK(echo_target_is(client, proxy, "/echo"));
    snprintf(proxy, sizeof proxy, "socks5://pu:pp@127.0.0.1:%d", socks_auth);
    CHECK(echo_target_is(client, proxy, "/echo"));

    /* trust_env: the environment's http_proxy is read by default, ignored when told. */
    char env_proxy[80];
    snprintf(env_proxy, sizeof env_proxy, "http://127.0.0.1:%d", http);
    setenv("http_proxy", env_proxy, 1);
    hc_client *trusting = hc_client_new(), *direct = hc_client_new();
    CHECK_CODE(hc_client_set_trust_env(direct, 0), HC_OK);
    CHECK(echo_target_is(trusting, NULL, absolute));
    CHECK(echo_target_is(direct, NULL, "/echo"));
    CHECK(echo_target_is(direct, env_proxy, absolute));   /* a proxy said outright still applies */
    CHECK_CODE(hc_client_set_trust_env(direct, 1), HC_OK);
    CHECK(echo_target_is(direct, NULL, absolute));
    unsetenv("http_proxy");
    CHECK_CODE(hc_client_set_trust_env(NULL, 0), HC_EINVALID_ARG);
    hc_client_free(trusting);
    hc_client_free(direct);
    hc_client_free(client);
}

static void batch_done(void *userdata, hc_code code, hc_response *response) {
    int *slot = userdata;
    slot[0] = (int)code;
    slot[1] = code == HC_OK ? hc_response_status(response) : hc_error_attempts(hc_error_last());
    hc_response_free(response);
}

/* Retries in a batch: a request waiting to be sent again holds up no other transfer. */
static void test_retries_in_a_batch(void) {
    hc_client *client = hc_client_new();
    CHECK_CODE(hc_client_set_retry(client, 3, 10, 5000, NULL, 0, 0), HC_OK);
    hc_batch *batch = hc_batch_new(client);
    char paths[3][128];
    int outcome[4][2];
    memset(outcome, 0xff, sizeof outcome);
    snprintf(paths[0], sizeof paths[0], "%s/flaky?key=b%d&fail=1&retry_after=2", hc_base, rand());
    snprintf(paths[1], sizeof paths[1], "%s/flaky?key=b%d&fail=1&retry_after=2", hc_base, rand());
    snprintf(paths[2], sizeof paths[2], "%s/flaky?key=b%d&fail=9&retry_after=0", hc_base, rand());
    for (int i = 0; i < 4; i++) {
        hc_request *req = hc_request_new("GET", i < 3 ? paths[i] : hc_url("/bytes/10"));
        CHECK_CODE(hc_batch_add(batch, req, batch_done, outcome[i]), HC_OK);
        hc_request_free(req);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_CODE(hc_batch_run(batch), HC_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECK(outcome[0][0] == HC_OK && outcome[0][1] == 200);
    CHECK(outcome[1][0] == HC_OK && outcome[1][1] == 200);
    CHECK(outcome[2][0] == HC_EUNACCEPTABLE_STATUS && outcome[2][1] == 3);
    CHECK(outcome[3][0] == HC_OK && outcome[3][1] == 200);
    /* The two waits of 2 s ran at the same time (one after the other: 4 s). */
    CHECK(elapsed >= 1.9 && elapsed < 3.5);
    if (!(elapsed >= 1.9 && elapsed < 3.5)) fprintf(stderr, "batch of retries took %.2f s\n", elapsed);
    hc_batch_free(batch);
    hc_client_free(client);
}

static int hook_calls_batch, hook_refreshes_batch;
static int counting_hook(void *userdata, hc_auth_request *request, int refresh) {
    (void)userdata;
    hook_calls_batch++;
    if (refresh) hook_refreshes_batch++;
    return hc_auth_request_set_header(request, "Authorization", refresh ? "Bearer fresh" : "Bearer stale");
}

/* The auth hook's refresh on 401 in a batch. */
static void test_auth_hook_in_a_batch(void) {
    hc_client *client = hc_client_new();
    CHECK_CODE(hc_client_set_auth(client, HC_AUTH_CUSTOM, NULL, NULL, counting_hook, NULL), HC_OK);
    hc_batch *batch = hc_batch_new(client);
    int outcome[2] = {-1, -1};
    hc_request *req = hc_request_new("GET", hc_url("/bearer/fresh"));
    CHECK_CODE(hc_batch_add(batch, req, batch_done, outcome), HC_OK);
    hc_request_free(req);
    CHECK_CODE(hc_batch_run(batch), HC_OK);
    CHECK(outcome[0] == HC_OK && outcome[1] == 200);
    CHECK(hook_calls_batch == 2 && hook_refreshes_batch == 1);
    hc_batch_free(batch);
    hc_client_free(client);
}

int main(void) {
    hc_test_server_start();
    test_cookies();
    test_auth();
    test_retries();
    test_digests();
    test_proxies();
    test_retries_in_a_batch();
    test_auth_hook_in_a_batch();
    return hc_test_finish();
}
