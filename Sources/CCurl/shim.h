/* Typed wrappers for libcurl's variadic entry points, which Swift cannot call.
 * They are static inline: compiled into the Swift module that uses them, never exported. */
#ifndef HC_CCURL_SHIM_H
#define HC_CCURL_SHIM_H

#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <openssl/ssl.h>

typedef size_t (*hc_curl_data_cb)(char *ptr, size_t size, size_t nmemb, void *userdata);
typedef int (*hc_curl_xferinfo_cb)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                   curl_off_t ultotal, curl_off_t ulnow);
typedef int (*hc_curl_seek_cb)(void *userdata, curl_off_t offset, int origin);

static inline CURLcode hc_curl_setopt_long(CURL *h, CURLoption o, long v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode hc_curl_setopt_off(CURL *h, CURLoption o, curl_off_t v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode hc_curl_setopt_ptr(CURL *h, CURLoption o, const void *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode hc_curl_setopt_str(CURL *h, CURLoption o, const char *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode hc_curl_setopt_data_cb(CURL *h, CURLoption o, hc_curl_data_cb v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode hc_curl_setopt_xferinfo_cb(CURL *h, hc_curl_xferinfo_cb v) {
    return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, v);
}
static inline CURLcode hc_curl_setopt_seek_cb(CURL *h, hc_curl_seek_cb v) {
    return curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, v);
}
static inline CURLcode hc_curl_getinfo_long(CURL *h, CURLINFO i, long *v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode hc_curl_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode hc_curl_getinfo_str(CURL *h, CURLINFO i, char **v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode hc_curl_getinfo_double(CURL *h, CURLINFO i, double *v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLMcode hc_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) {
    return curl_multi_setopt(m, o, v);
}
static inline CURLMcode hc_curl_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) {
    return curl_multi_setopt(m, o, v);
}
/* The socket-action callbacks (an event loop of the caller's watches the sockets). */
typedef int (*hc_curl_socket_fn)(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp);
typedef int (*hc_curl_timer_fn)(CURLM *multi, long timeout_ms, void *userp);
static inline CURLMcode hc_curl_multi_setopt_socket_fn(CURLM *m, hc_curl_socket_fn f) {
    return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f);
}
static inline CURLMcode hc_curl_multi_setopt_timer_fn(CURLM *m, hc_curl_timer_fn f) {
    return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, f);
}

/* Share handles (Session/CookieJar.swift): curl_share_setopt is variadic too. */
typedef void (*hc_curl_lock_cb)(CURL *handle, curl_lock_data data, curl_lock_access access, void *userptr);
typedef void (*hc_curl_unlock_cb)(CURL *handle, curl_lock_data data, void *userptr);
static inline CURLSHcode hc_curl_share_setopt_long(CURLSH *s, CURLSHoption o, long v) {
    return curl_share_setopt(s, o, v);
}
static inline CURLSHcode hc_curl_share_setopt_ptr(CURLSH *s, CURLSHoption o, void *v) {
    return curl_share_setopt(s, o, v);
}
static inline CURLSHcode hc_curl_share_setopt_lock(CURLSH *s, hc_curl_lock_cb v) {
    return curl_share_setopt(s, CURLSHOPT_LOCKFUNC, v);
}
static inline CURLSHcode hc_curl_share_setopt_unlock(CURLSH *s, hc_curl_unlock_cb v) {
    return curl_share_setopt(s, CURLSHOPT_UNLOCKFUNC, v);
}
static inline CURLcode hc_curl_getinfo_slist(CURL *h, CURLINFO i, struct curl_slist **v) {
    return curl_easy_getinfo(h, i, v);
}
static inline CURLcode hc_curl_setopt_share(CURL *h, CURLSH *s) {
    return curl_easy_setopt(h, CURLOPT_SHARE, s);
}

/* TLS session tickets (Transport/ConnectionShare.swift). libcurl 7.88 sets SSL_OP_NO_TICKET on
 * every SSL_CTX it makes, so a TLS 1.2 server without a session-ID cache (nginx's default)
 * never resumes a session: each new connection is a full handshake. Its SSL_CTX callback
 * clears that option. Only for libcurl built on OpenSSL, where the callback's context is an
 * SSL_CTX (hc_curl_ssl_is_openssl). */
static inline CURLcode hc_ssl_ctx_allow_tickets(CURL *h, void *ctx, void *userdata) {
    (void)h; (void)userdata;
    SSL_CTX_clear_options((SSL_CTX *)ctx, SSL_OP_NO_TICKET);
    return CURLE_OK;
}
static inline CURLcode hc_curl_setopt_allow_tickets(CURL *h) {
    return curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, hc_ssl_ctx_allow_tickets);
}
static inline int hc_curl_ssl_is_openssl(void) {
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    return v != NULL && v->ssl_version != NULL && strncmp(v->ssl_version, "OpenSSL/", 8) == 0;
}

/* Certificates and keys from memory (Transport/TransportOptions.swift): libcurl copies them. */
static inline CURLcode hc_curl_setopt_blob(CURL *h, CURLoption o, const void *data, size_t len) {
    struct curl_blob blob = { (void *)data, len, CURL_BLOB_COPY };
    return curl_easy_setopt(h, o, &blob);
}

/* Whether libcurl's built-in CA bundle (CURLINFO_CAINFO, 7.84+) is a readable file. */
static inline int hc_curl_default_cainfo_exists(void) {
    CURL *h = curl_easy_init();
    char *path = NULL;
    int found = 0;
    if (h != NULL && curl_easy_getinfo(h, CURLINFO_CAINFO, &path) == CURLE_OK && path != NULL) {
        FILE *f = fopen(path, "r");
        if (f != NULL) { found = 1; fclose(f); }
    }
    curl_easy_cleanup(h);
    return found;
}

/* CURLAUTH_* are unsigned long shifts Swift does not import. */
static inline long hc_curlauth_basic(void) { return (long)CURLAUTH_BASIC; }
static inline long hc_curlauth_digest(void) { return (long)CURLAUTH_DIGEST; }
static inline long hc_curlauth_bearer(void) { return (long)CURLAUTH_BEARER; }

#ifdef __linux__
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* A batch polling its own sockets (Batch.pollDescriptor): an epoll set, so that an event loop
 * watches one descriptor for all of them. epoll_event is a packed struct Swift does not import
 * well; these take and give plain ints. */

/* What a batch's epoll set holds for one socket (SocketPoller's byte per descriptor): the
 * events registered, whether it is in the set, and whether libcurl wants it watched now. */
enum { HC_EPOLL_IN = 1, HC_EPOLL_OUT = 2, HC_EPOLL_IN_SET = 4, HC_EPOLL_WANTED = 8 };

/* Watches `fd` in `epfd` for libcurl's CURL_POLL_* `what` (IN 1, OUT 2, INOUT 3, REMOVE 4);
 * `state` is its byte. A removed socket stays in the set, parked (libcurl removes a kept-alive
 * connection's socket at the end of every transfer and adds it back at the next): watched
 * again, it costs one MOD (which also proves it is still the socket registered: a socket
 * closed meanwhile left the set, and then the MOD fails and it is added), not a DEL and an ADD;
 * one still wanted with the same events costs nothing (libcurl says REMOVE before it closes a
 * socket). A parked socket that turns ready is deleted then (hc_epoll_ready's caller).
 * Returns 0, or -1 with errno. */
static inline int hc_epoll_watch(int epfd, int fd, int what, unsigned char *state) {
    if (what == CURL_POLL_REMOVE) {
        *state &= (unsigned char)~HC_EPOLL_WANTED;
        return 0;
    }
    int mask = what & (CURL_POLL_IN | CURL_POLL_OUT);
    if ((*state & (HC_EPOLL_IN_SET | HC_EPOLL_WANTED)) == (HC_EPOLL_IN_SET | HC_EPOLL_WANTED)
        && (*state & 3) == mask) return 0;
    struct epoll_event ev = {0};
    ev.data.fd = fd;
    if (mask & CURL_POLL_IN) ev.events |= EPOLLIN;
    if (mask & CURL_POLL_OUT) ev.events |= EPOLLOUT;
    int op = (*state & HC_EPOLL_IN_SET) ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    int rc = epoll_ctl(epfd, op, fd, &ev);
    if (rc != 0 && op == EPOLL_CTL_MOD && errno == ENOENT) rc = epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
    else if (rc != 0 && op == EPOLL_CTL_ADD && errno == EEXIST) rc = epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
    *state = rc == 0 ? (unsigned char)(mask | HC_EPOLL_IN_SET | HC_EPOLL_WANTED) : 0;
    return rc;
}

/* Takes a parked socket out of `epfd` (it turned ready while libcurl does not watch it). */
static inline void hc_epoll_forget(int epfd, int fd) {
    (void)epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* The sockets of `epfd` ready now (no waiting), at most `max`: fds[i] and masks[i] (libcurl's
 * CURL_CSELECT_* events). Returns how many (-1 if epoll_wait failed). */
static inline int hc_epoll_ready(int epfd, int *fds, int *masks, int max) {
    struct epoll_event events[64];
    int n = epoll_wait(epfd, events, max < 64 ? max : 64, 0);
    for (int i = 0; i < n; i++) {
        int mask = 0;
        if (events[i].events & EPOLLIN) mask |= CURL_CSELECT_IN;
        if (events[i].events & EPOLLOUT) mask |= CURL_CSELECT_OUT;
        if (events[i].events & (EPOLLERR | EPOLLHUP)) mask |= CURL_CSELECT_ERR;
        fds[i] = events[i].data.fd;
        masks[i] = mask;
    }
    return n;
}

/* The waker of a batch polling its own sockets: an eventfd in `epfd` (readable once written),
 * so that a cancellation token set from another thread makes the batch's descriptor readable
 * (curl_multi_wakeup wakes only curl_multi_poll). Returns the eventfd, or -1. */
static inline int hc_epoll_add_waker(int epfd) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) return -1;
    struct epoll_event ev = {0};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Makes the waker readable (any thread). */
static inline void hc_waker_signal(int fd) {
    uint64_t one = 1;
    ssize_t rc = write(fd, &one, sizeof one);
    (void)rc;
}

/* Makes the waker quiet again. */
static inline void hc_waker_drain(int fd) {
    uint64_t count;
    ssize_t rc = read(fd, &count, sizeof count);
    (void)rc;
}
#endif

#endif
