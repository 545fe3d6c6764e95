/* Threads and callbacks: concurrent sends on one client, cancels from another thread, the
 * thread callbacks run on, and memory lent by the caller.
 * (The audit of the headers' promises, issue 14: see promises.h.) */
#include "promises.h"
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <pthread.h>
#include <time.h>

/* ------------------------------------------------------------------------------------------ */
/* Threads and callbacks                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* "Several threads may send on one client at once, each with its own request" (and
 * hc_client_fetch "like hc_client_send"); each thread's failures are its own last error. */
struct sender { int index; int ok; };
static void *send_on_the_shared_client(void *arg) {
    struct sender *me = arg;
    me->ok = 1;
    for (int i = 0; i < 5; i++) {
        char path[64];
        int n = 1000 + me->index * 100 + i;
        snprintf(path, sizeof path, "/bytes/%d", n);
        hc_response *resp = NULL;
        if (hc_test_send(client, "GET", path, NULL, &resp) != HC_OK) { me->ok = 0; continue; }
        const uint8_t *d; size_t len = 0;
        hc_response_bytes(resp, &d, &len);
        me->ok &= len == (size_t)n && d[n - 1] == (n - 1) % 251;
        hc_response_free(resp);
        hc_fetch_result r;
        me->ok &= hc_client_fetch(client, "GET", hc_url(path), NULL, 0, -1, &r) == HC_OK && r.bytes_len == (size_t)n;
        hc_response_free(r.response);
        /* A failure of this thread's own, read back on this thread. */
        snprintf(path, sizeof path, "/status/%d", 401 + me->index);
        me->ok &= hc_test_send(client, "GET", path, NULL, &resp) == HC_EUNACCEPTABLE_STATUS;
        me->ok &= hc_error_status(hc_error_last()) == 401 + me->index;
    }
    hc_error_clear();
    return NULL;
}

struct canceller { hc_cancel *token; };
static void *cancel_soon(void *arg) {
    usleep(200 * 1000);
    hc_cancel_cancel(((struct canceller *)arg)->token);
    return NULL;
}

struct thread_record { pthread_t sender; int progress_calls, progress_elsewhere, read_calls, read_elsewhere; size_t left; };
static int record_progress(void *u, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
    (void)a; (void)b; (void)c; (void)d; (void)e;
    struct thread_record *r = u;
    r->progress_calls++;
    if (!pthread_equal(pthread_self(), r->sender)) r->progress_elsewhere++;
    return 0;
}
static int record_read(void *u, uint8_t *buf, size_t cap, size_t *written) {
    struct thread_record *r = u;
    r->read_calls++;
    if (!pthread_equal(pthread_self(), r->sender)) r->read_elsewhere++;
    size_t n = r->left < cap ? r->left : cap;
    memset(buf, 'r', n);
    r->left -= n;
    *written = n;
    return 0;
}
static void *send_with_callbacks(void *arg) {
    struct thread_record *r = arg;
    r->sender = pthread_self();
    hc_request *req = hc_request_new("POST", hc_url("/echo/raw"));
    hc_request_set_progress(req, record_progress, r);
    hc_request_set_read_body(req, record_read, r, -1, NULL);
    hc_response *resp = NULL;
    if (hc_client_send(client, req, &resp) == HC_OK) {
        const uint8_t *d; size_t n = 0;
        hc_response_bytes(resp, &d, &n);
        if (n != 20000) r->read_elsewhere += 1000;
        hc_response_free(resp);
    } else {
        r->read_elsewhere += 1000;
    }
    hc_request_free(req);
    return NULL;
}

struct done_check { int calls, failures_described, successes_owned, added; hc_batch *batch; };
static void check_done(void *userdata, hc_code code, hc_response *response) {
    struct done_check *c = userdata;
    c->calls++;
    if (code == HC_OK) {
        c->successes_owned += response != NULL && hc_response_status(response) == 200;
        hc_response_free(response);                          /* the callee's to free */
    } else {
        /* "NULL, and hc_error_last() describes the failure during the call" */
        c->failures_described += response == NULL && hc_error_code(hc_error_last()) == code
                                 && hc_error_status(hc_error_last()) == 404;
    }
    if (!c->added) {                                         /* "The callback may add more requests" */
        c->added = 1;
        hc_request *more = hc_request_new("GET", hc_url("/bytes/9"));
        if (hc_batch_add(c->batch, more, check_done, c) != HC_OK) c->added = -1;
        hc_request_free(more);
    }
}

static void test_threads_and_callbacks_keep_their_promises(void) {
    pthread_t t[4];
    struct sender senders[4];
    for (int i = 0; i < 4; i++) {
        senders[i] = (struct sender){i, 0};
        CHECK(pthread_create(&t[i], NULL, send_on_the_shared_client, &senders[i]) == 0);
    }
    for (int i = 0; i < 4; i++) { pthread_join(t[i], NULL); CHECK(senders[i].ok); }

    /* hc_cancel_cancel from another thread while hc_client_send waits on a silent server. */
    hc_request *req = hc_request_new("GET", hc_url("/stall?bytes=10"));
    hc_request_set_timeout_ms(req, 30000);                   /* a bound, far beyond the cancel */
    struct canceller cc = {hc_cancel_new()};
    hc_request_set_cancel(req, cc.token);
    pthread_t ct;
    CHECK(pthread_create(&ct, NULL, cancel_soon, &cc) == 0);
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_ECANCELLED);
    clock_gettime(CLOCK_MONOTONIC, &end);
    pthread_join(ct, NULL);
    double secs = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    CHECK(secs < 10.0);
    hc_cancel_free(cc.token);
    hc_request_free(req);

    /* Progress and read callbacks run on the thread that calls hc_client_send. */
    struct thread_record rec = {0};
    rec.left = 20000;
    pthread_t st;
    CHECK(pthread_create(&st, NULL, send_with_callbacks, &rec) == 0);
    pthread_join(st, NULL);
    CHECK(rec.progress_calls > 0 && rec.read_calls > 0);
    CHECK(rec.progress_elsewhere == 0 && rec.read_elsewhere == 0);

    /* Done callbacks: failures described by hc_error_last() during the call, successes owned. */
    hc_batch *batch = hc_batch_new(client);
    struct done_check dc = {0, 0, 0, 0, batch};
    req = hc_request_new("GET", hc_url("/status/404"));
    CHECK_CODE(hc_batch_add(batch, req, check_done, &dc), HC_OK);
    hc_request_free(req);
    CHECK_CODE(hc_batch_run(batch), HC_OK);
    CHECK(dc.calls == 2 && dc.failures_described == 1 && dc.successes_owned == 1 && dc.added == 1);
    hc_batch_free(batch);
    hc_error_clear();
}

/* hc_handler_bytes_set_allocator: "return NULL to let the library use its own"; `release` "may
 * be NULL"; "NULL allocate restores the default". */
struct lender { int allocs, releases, declines; size_t asked; void *given; };
static void *lend_memory(void *u, size_t size) {
    struct lender *l = u;
    l->allocs++;
    l->asked = size;
    if (l->declines) return NULL;
    l->given = malloc(size);
    return l->given;
}
static void take_memory_back(void *u, void *memory) {
    struct lender *l = u;
    l->releases++;
    if (memory == l->given) l->given = NULL;
    free(memory);
}
static uint8_t static_pool[4096];
static void *lend_static(void *u, size_t size) { (*(int *)u)++; return size <= sizeof static_pool ? static_pool : NULL; }

static int body_is_pattern(hc_response *resp, size_t n, const uint8_t **where) {
    const uint8_t *d = NULL; size_t len = 0;
    if (hc_response_bytes(resp, &d, &len) != HC_OK || len != n) return 0;
    for (size_t i = 0; i < n; i++) if (d[i] != i % 251) return 0;
    if (where) *where = d;
    return 1;
}

static void test_lent_memory_promises(void) {
    /* Declined: the library's own memory, nothing to release. */
    struct lender declined = {0, 0, 1, 0, NULL};
    hc_handler *h = hc_handler_bytes_new(0);
    CHECK_CODE(hc_handler_bytes_set_allocator(h, 1, lend_memory, take_memory_back, &declined), HC_OK);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/3000", h, &resp), HC_OK);
    CHECK(body_is_pattern(resp, 3000, NULL));
    hc_response_free(resp);
    CHECK(declined.allocs == 1 && declined.asked == 3000 && declined.releases == 0);
    hc_handler_free(h);

    const uint8_t *where = NULL;
    /* NULL release: the memory is the caller's to manage; the body is still right. */
    int lent = 0;
    h = hc_handler_bytes_new(0);
    CHECK_CODE(hc_handler_bytes_set_allocator(h, 100, lend_static, NULL, &lent), HC_OK);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/2000", h, &resp), HC_OK);
    CHECK(lent == 1 && body_is_pattern(resp, 2000, &where) && where == static_pool);   /* that very memory */
    hc_response_free(resp);
    /* NULL allocate: the default again, the allocator is never asked. */
    CHECK_CODE(hc_handler_bytes_set_allocator(h, 100, NULL, NULL, NULL), HC_OK);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/2000", h, &resp), HC_OK);
    CHECK(lent == 1 && body_is_pattern(resp, 2000, &where) && where != static_pool);
    hc_response_free(resp);
    hc_handler_free(h);
}

PROMISES_MAIN(test_threads_and_callbacks_keep_their_promises,
              test_lent_memory_promises)
