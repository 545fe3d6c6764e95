/* A batch driven socket by socket from an event loop of the caller's (epoll here), as an
 * asyncio or libuv loop would: hc_batch_watch + hc_batch_socket_action. */
#include "testutil.h"
#include <sys/epoll.h>
#include <time.h>

struct loop {
    int epfd;
    long timer_ms;          /* -1: none */
    double timer_due;
    int watched;            /* sockets watched now */
    int most_watched;
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void on_socket(void *userdata, int fd, int what) {
    struct loop *l = userdata;
    if (what == HC_WATCH_REMOVE) {
        if (epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL) == 0) l->watched--;
        return;
    }
    struct epoll_event ev = {0};
    ev.data.fd = fd;
    if (what & HC_WATCH_IN) ev.events |= EPOLLIN;
    if (what & HC_WATCH_OUT) ev.events |= EPOLLOUT;
    if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) != 0) {
        if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) == 0) l->watched++;
    }
    if (l->watched > l->most_watched) l->most_watched = l->watched;
}

static void on_timer(void *userdata, long timeout_ms) {
    struct loop *l = userdata;
    l->timer_ms = timeout_ms;
    l->timer_due = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

/* One turn: wait for a socket or the timer, tell the batch. Returns what remains. */
static size_t turn(hc_batch *batch, struct loop *l) {
    int wait = 1000;
    if (l->timer_ms >= 0) {
        double left = l->timer_due - now_ms();
        wait = left < 0 ? 0 : (int)left + 1;
        if (wait > 1000) wait = 1000;
    }
    struct epoll_event events[64];
    int n = epoll_wait(l->epfd, events, 64, wait);
    size_t pending = 0;
    for (int i = 0; i < n; i++) {
        int ev = 0;
        if (events[i].events & EPOLLIN) ev |= HC_EVENT_IN;
        if (events[i].events & EPOLLOUT) ev |= HC_EVENT_OUT;
        if (events[i].events & (EPOLLERR | EPOLLHUP)) ev |= HC_EVENT_ERR;
        hc_batch_socket_action(batch, events[i].data.fd, ev, &pending);
    }
    if (l->timer_ms >= 0 && now_ms() >= l->timer_due) {
        l->timer_ms = -1;
        hc_batch_socket_action(batch, HC_SOCKET_TIMEOUT, 0, &pending);
    }
    return hc_batch_pending(batch);
}

struct outcome { int calls; hc_code code; size_t bytes; };

static void done(void *userdata, hc_code code, hc_response *response) {
    struct outcome *o = userdata;
    o->calls++;
    o->code = code;
    const uint8_t *data; size_t len = 0;
    if (response && hc_response_bytes(response, &data, &len) == HC_OK) o->bytes = len;
    hc_response_free(response);
}

static void test_an_event_loop_of_mine_drives_a_batch(void) {
    hc_client *client = hc_client_new();
    hc_batch *batch = hc_batch_new(client);
    CHECK_CODE(hc_batch_set_concurrency(batch, 0), HC_OK);
    struct loop l = {epoll_create1(0), -1, 0, 0, 0};
    CHECK_CODE(hc_batch_watch(batch, on_socket, on_timer, &l), HC_OK);
    enum { N = 60 };
    struct outcome out[N] = {{0}};
    for (int i = 0; i < N; i++) {
        char path[64];
        snprintf(path, sizeof path, "/slow?bytes=%d&delay=0.05&chunk=%d", 1000 + i, 500);
        hc_request *req = hc_request_new("GET", hc_url(path));
        CHECK_CODE(hc_batch_add(batch, req, done, &out[i]), HC_OK);
        hc_request_free(req);
    }
    for (int turns = 0; turns < 2000 && turn(batch, &l) > 0; turns++) {}
    int all = 1;
    for (int i = 0; i < N; i++) all &= out[i].calls == 1 && out[i].code == HC_OK && out[i].bytes == (size_t)(1000 + i);
    CHECK(all);
    CHECK(hc_batch_pending(batch) == 0);
    CHECK(l.most_watched > 1);      /* the transfers ran at once, each socket watched */
    CHECK(l.watched == 0);          /* every socket given back (or kept alive without a watch) */
    /* Too late to hand the watching over once requests were added: */
    hc_request *one = hc_request_new("GET", hc_url("/bytes/1"));
    struct outcome o = {0};
    CHECK_CODE(hc_batch_add(batch, one, done, &o), HC_OK);
    hc_batch *other = hc_batch_new(client);
    CHECK_CODE(hc_batch_add(other, one, done, &o), HC_OK);
    CHECK_CODE(hc_batch_watch(other, on_socket, on_timer, &l), HC_EINVALID_ARG);
    CHECK_CODE(hc_batch_watch(batch, NULL, on_timer, &l), HC_EINVALID_ARG);
    CHECK_CODE(hc_batch_run(other), HC_OK);
    for (int turns = 0; turns < 200 && turn(batch, &l) > 0; turns++) {}
    CHECK(o.calls == 2);
    hc_request_free(one);
    hc_batch_free(other);
    hc_batch_free(batch);
    hc_client_free(client);
    close(l.epfd);
}

static void test_a_cancelled_token_ends_its_transfer_at_the_next_action(void) {
    hc_client *client = hc_client_new();
    hc_batch *batch = hc_batch_new(client);
    struct loop l = {epoll_create1(0), -1, 0, 0, 0};
    CHECK_CODE(hc_batch_watch(batch, on_socket, on_timer, &l), HC_OK);
    hc_cancel *token = hc_cancel_new();
    hc_request *req = hc_request_new("GET", hc_url("/stall?bytes=10"));
    hc_request_set_cancel(req, token);
    struct outcome o = {0};
    CHECK_CODE(hc_batch_add(batch, req, done, &o), HC_OK);
    for (int turns = 0; turns < 5; turns++) turn(batch, &l);   /* connected, now silent */
    CHECK(o.calls == 0);
    double start = now_ms();
    hc_cancel_cancel(token);
    size_t pending = 99;
    CHECK_CODE(hc_batch_socket_action(batch, HC_SOCKET_TIMEOUT, 0, &pending), HC_OK);
    CHECK(o.calls == 1 && o.code == HC_ECANCELLED && pending == 0);
    CHECK(now_ms() - start < 500);
    hc_cancel_free(token);
    hc_request_free(req);
    hc_batch_free(batch);
    hc_client_free(client);
    close(l.epfd);
}

int main(void) {
    hc_test_server_start();
    test_an_event_loop_of_mine_drives_a_batch();
    test_a_cancelled_token_ends_its_transfer_at_the_next_action();
    return hc_test_finish();
}
