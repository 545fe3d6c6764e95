/* A batch that polls its own sockets (hc_batch_poll_fd): the caller's loop watches one
 * descriptor, and hc_batch_step serves every ready socket and hands back what completed in
 * arrays, with no callback per socket or per request. */
#include "testutil.h"
#include <poll.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

enum { TAKE = 8 };

struct taken {
    int calls;
    hc_code code;       /* HC_OK, or the error's code */
    int status;
    size_t bytes;
};

/* One turn of a loop of mine: wait for the descriptor or the batch's timeout, step, record
 * what completed (keys index `out`). Returns how many completed. */
static int turn(hc_batch *batch, int fd, long *timeout_ms, struct taken *out, size_t n) {
    struct pollfd p = {fd, POLLIN, 0};
    int wait = *timeout_ms < 0 || *timeout_ms > 1000 ? 1000 : (int)*timeout_ms;
    poll(&p, 1, wait);
    uint64_t keys[TAKE];
    hc_fetch_result results[TAKE];
    hc_error *errors[TAKE];
    size_t count = 0;
    int completed = 0;
    do {
        CHECK_CODE(hc_batch_step(batch, TAKE, keys, results, errors, &count, timeout_ms), HC_OK);
        for (size_t i = 0; i < count; i++) {
            completed++;
            if (keys[i] >= n) { CHECK(!"a key that was never added"); continue; }
            struct taken *t = &out[keys[i]];
            t->calls++;
            hc_response *response = results[i].response;
            CHECK((response == NULL) != (errors[i] == NULL));
            if (response) {
                const uint8_t *data; size_t len = 0;
                if (hc_response_bytes(response, &data, &len) == HC_OK) t->bytes = len;
                /* What the result reports is the response's own. */
                CHECK(results[i].bytes == data && results[i].bytes_len == len);
                CHECK(results[i].status == hc_response_status(response));
                t->code = HC_OK;
                t->status = results[i].status;
            } else if (errors[i]) {
                CHECK(results[i].status == 0 && results[i].bytes == NULL && results[i].bytes_len == 0);
                t->code = hc_error_code(errors[i]);
                t->status = hc_error_status(errors[i]);
            }
            hc_error_free(errors[i]);
        }
        /* The responses in one call (a failed request's entry is NULL: skipped). */
        hc_response *responses[TAKE];
        for (size_t i = 0; i < count; i++) responses[i] = results[i].response;
        hc_response_free_many(responses, count);
    } while (count == TAKE);
    return completed;
}

static void test_one_descriptor_drives_a_batch_and_completions_come_back_in_arrays(void) {
    int64_t live = hc_live_handles();
    hc_client *client = hc_client_new();
    hc_batch *batch = hc_batch_new(client);
    CHECK_CODE(hc_batch_set_concurrency(batch, 16), HC_OK);
    int fd = -1, again = -2;
    CHECK_CODE(hc_batch_poll_fd(batch, &fd), HC_OK);
    CHECK(fd >= 0);
    enum { N = 60 };
    struct taken out[N + 2 + 10];
    memset(out, 0, sizeof out);
    for (int i = 0; i < N; i++) {
        char path[64];
        snprintf(path, sizeof path, "/bytes/%d", 1000 + i);
        if (i % 2) {   /* one call, no request of mine */
            CHECK_CODE(hc_batch_fetch_queued(batch, "GET", hc_url(path), NULL, (uint64_t)i), HC_OK);
            continue;
        }
        hc_request *req = hc_request_new("GET", hc_url(path));
        CHECK_CODE(hc_batch_add_queued(batch, req, (uint64_t)i), HC_OK);
        hc_request_free(req);      /* borrowed: the batch took what it needs */
    }
    hc_handler *bytes = hc_handler_bytes_new(0);
    CHECK_CODE(hc_batch_fetch_queued(batch, "GET", hc_url("/status/404"), bytes, N), HC_OK);
    /* Many in one call: ten more, one with a NULL url (queued with its error), one with a handler. */
    enum { M = 10 };
    const char *methods[M], *urls[M];
    char paths[M][64];
    hc_handler *handlers[M] = {0};
    uint64_t many_keys[M];
    for (int i = 0; i < M; i++) {
        snprintf(paths[i], sizeof paths[i], "/bytes/%d", 2000 + i);
        methods[i] = "GET";
        urls[i] = i == 3 ? NULL : strdup(hc_url(paths[i]));   /* hc_url's buffer is reused */
        many_keys[i] = (uint64_t)(N + 2 + i);
    }
    handlers[5] = bytes;
    CHECK_CODE(hc_batch_fetch_queued_many(batch, M, methods, urls, handlers, many_keys), HC_OK);
    for (int i = 0; i < M; i++) free((void *)urls[i]);
    hc_handler_free(bytes);    /* kept by the batch while the requests run */
    /* A request that fails is queued with its error (the port is closed), not failed in the call. */
    hc_request *bad = hc_request_new("GET", "http://127.0.0.1:1/");
    CHECK_CODE(hc_batch_add_queued(batch, bad, N + 1), HC_OK);
    hc_request_free(bad);
    /* Asked again once requests are in: the same descriptor. */
    CHECK_CODE(hc_batch_poll_fd(batch, &again), HC_OK);
    CHECK(again == fd);
    long timeout_ms = 0;
    int completed = 0;
    for (int turns = 0; turns < 2000 && completed < N + 2 + M; turns++)
        completed += turn(batch, fd, &timeout_ms, out, N + 2 + M);
    CHECK(completed == N + 2 + M);
    int many = 1;
    for (int i = 0; i < M; i++) {
        struct taken *t = &out[N + 2 + i];
        if (i == 3) many &= t->calls == 1 && t->code == HC_EINVALID_ARG;
        else many &= t->calls == 1 && t->code == HC_OK && t->status == 200 && t->bytes == (size_t)(2000 + i);
    }
    CHECK(many);
    int all = 1;
    for (int i = 0; i < N; i++)
        all &= out[i].calls == 1 && out[i].code == HC_OK && out[i].status == 200 && out[i].bytes == (size_t)(1000 + i);
    CHECK(all);
    CHECK(out[N].calls == 1 && out[N].code == HC_EUNACCEPTABLE_STATUS && out[N].status == 404);
    CHECK(out[N + 1].calls == 1 && out[N + 1].code == HC_ETRANSPORT);
    CHECK(hc_batch_pending(batch) == 0);
    /* Nothing left to take, no timer needed once idle. */
    size_t count = 99;
    CHECK_CODE(hc_batch_step(batch, 0, NULL, NULL, NULL, &count, NULL), HC_OK);
    CHECK(count == 0);
    hc_batch_free(batch);
    hc_client_free(client);
    CHECK(hc_live_handles() == live);   /* every response freed by hc_response_free_many */
}

static void test_a_cancelled_token_ends_its_transfer_at_the_next_step(void) {
    hc_client *client = hc_client_new();
    hc_batch *batch = hc_batch_new(client);
    int fd = -1;
    CHECK_CODE(hc_batch_poll_fd(batch, &fd), HC_OK);
    hc_cancel *token = hc_cancel_new();
    hc_request *req = hc_request_new("GET", hc_url("/stall?bytes=10"));
    hc_request_set_cancel(req, token);
    CHECK_CODE(hc_batch_add_queued(batch, req, 7), HC_OK);
    struct taken out[8];
    memset(out, 0, sizeof out);
    long timeout_ms = 0;
    for (int turns = 0; turns < 5; turns++) turn(batch, fd, &timeout_ms, out, 8);   /* connected, now silent */
    CHECK(out[7].calls == 0);
    double start = now_ms();
    hc_cancel_cancel(token);
    timeout_ms = 0;
    turn(batch, fd, &timeout_ms, out, 8);
    CHECK(out[7].calls == 1 && out[7].code == HC_ECANCELLED);
    CHECK(now_ms() - start < 500);
    CHECK(hc_batch_pending(batch) == 0);
    hc_cancel_free(token);
    hc_request_free(req);
    hc_batch_free(batch);
    hc_client_free(client);
}

static void watch_nothing(void *userdata, int fd, int what) { (void)userdata; (void)fd; (void)what; }
static void timer_nothing(void *userdata, long ms) { (void)userdata; (void)ms; }

static void test_cancelling_a_key_ends_that_transfer_only(void) {
    hc_client *client = hc_client_new();
    hc_batch *batch = hc_batch_new(client);
    int fd = -1;
    CHECK_CODE(hc_batch_poll_fd(batch, &fd), HC_OK);
    CHECK_CODE(hc_batch_fetch_queued(batch, "GET", hc_url("/stall?bytes=10"), NULL, 1), HC_OK);
    CHECK_CODE(hc_batch_fetch_queued(batch, "GET", hc_url("/slow?bytes=100&delay=0.3&chunk=50"), NULL, 2), HC_OK);
    struct taken out[3];
    memset(out, 0, sizeof out);
    long timeout_ms = 0;
    for (int turns = 0; turns < 5; turns++) turn(batch, fd, &timeout_ms, out, 3);   /* connected */
    CHECK(out[1].calls == 0);
    double start = now_ms();
    CHECK_CODE(hc_batch_cancel_queued(batch, 1), HC_OK);
    CHECK_CODE(hc_batch_cancel_queued(batch, 99), HC_OK);   /* no such key: nothing */
    timeout_ms = 0;
    turn(batch, fd, &timeout_ms, out, 3);
    CHECK(out[1].calls == 1 && out[1].code == HC_ECANCELLED);
    CHECK(now_ms() - start < 500);
    for (double t0 = now_ms(); now_ms() - t0 < 10000 && out[2].calls == 0;) turn(batch, fd, &timeout_ms, out, 3);
    CHECK(out[2].calls == 1 && out[2].code == HC_OK && out[2].bytes == 100);
    CHECK_CODE(hc_batch_cancel_queued(batch, 2), HC_OK);    /* completed already: nothing */
    hc_batch_free(batch);
    hc_client_free(client);
}

static void test_polling_and_watching_exclude_each_other_and_untaken_completions_are_freed(void) {
    int64_t live = hc_live_handles();
    hc_client *client = hc_client_new();
    int fd = -1;
    /* Too late once requests were added (without polling). */
    hc_batch *late = hc_batch_new(client);
    hc_request *req = hc_request_new("GET", hc_url("/bytes/10"));
    CHECK_CODE(hc_batch_add_queued(late, req, 1), HC_OK);
    CHECK_CODE(hc_batch_poll_fd(late, &fd), HC_EINVALID_ARG);
    /* Without a descriptor, hc_batch_step drives the batch as hc_batch_perform does: the
     * completions are taken all the same. */
    CHECK_CODE(hc_batch_run(late), HC_OK);
    uint64_t key = 0; hc_fetch_result result = {0}; hc_error *error = NULL; size_t count = 0;
    long timeout_ms = 0;
    CHECK_CODE(hc_batch_step(late, 1, &key, &result, &error, &count, &timeout_ms), HC_OK);
    CHECK(count == 1 && key == 1 && result.response != NULL && error == NULL);
    CHECK(result.status == 200 && result.bytes_len == 10);
    hc_response_free(result.response);
    /* The arrays may be NULL only when nothing is to be taken. */
    CHECK_CODE(hc_batch_step(late, 1, NULL, NULL, NULL, &count, NULL), HC_EINVALID_ARG);
    hc_batch_free(late);

    /* Polling and watching by the caller exclude each other. */
    hc_batch *polled = hc_batch_new(client);
    CHECK_CODE(hc_batch_poll_fd(polled, &fd), HC_OK);
    hc_batch *watched = hc_batch_new(client);
    CHECK_CODE(hc_batch_watch(polled, watch_nothing, timer_nothing, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_batch_watch(watched, watch_nothing, timer_nothing, NULL), HC_OK);
    CHECK_CODE(hc_batch_poll_fd(watched, &fd), HC_EINVALID_ARG);
    hc_batch_free(watched);
    CHECK_CODE(hc_batch_poll_fd(polled, &fd), HC_OK);

    /* Completions never taken are freed with the batch, as are requests still running. */
    CHECK_CODE(hc_batch_add_queued(polled, req, 2), HC_OK);
    CHECK_CODE(hc_batch_add_queued(polled, req, 3), HC_OK);
    /* Untaken completions make the timeout 0 ("call again"): the wait is bounded by time. */
    for (double t0 = now_ms(); now_ms() - t0 < 10000 && hc_batch_pending(polled) > 0;) {
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, 10);
        CHECK_CODE(hc_batch_step(polled, 0, NULL, NULL, NULL, &count, &timeout_ms), HC_OK);
    }
    CHECK(timeout_ms == 0);   /* two completions wait to be taken */
    CHECK(hc_batch_pending(polled) == 0);
    CHECK_CODE(hc_batch_add_queued(polled, req, 4), HC_OK);   /* still running when freed */
    hc_batch_free(polled);
    hc_request_free(req);
    hc_client_free(client);
    CHECK(hc_live_handles() == live);
}

int main(void) {
    hc_test_server_start();
    test_one_descriptor_drives_a_batch_and_completions_come_back_in_arrays();
    test_a_cancelled_token_ends_its_transfer_at_the_next_step();
    test_cancelling_a_key_ends_that_transfer_only();
    test_polling_and_watching_exclude_each_other_and_untaken_completions_are_freed();
    return hc_test_finish();
}
