/*
 * httpcontent/batch.h — many requests at once on one thread (libcurl multi), driven by you or your event loop.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_BATCH_H
#define HTTPCONTENT_BATCH_H

#include "httpcontent/core.h"

HC_BEGIN_DECL

/* ------------------------------------------------------------------------------------------ */
/* Batches: many requests at once on one thread (libcurl multi)                               */
/* ------------------------------------------------------------------------------------------ */

typedef struct hc_batch hc_batch;

/** Called once per request when it completes, on the thread running the batch. On HC_OK,
 *  `response` is a new response the callee owns and frees with hc_response_free; otherwise it
 *  is NULL and hc_error_last() describes the failure during the call. The callback may add
 *  more requests to the batch. */
typedef void (*hc_done_cb)(void *userdata, hc_code code, hc_response *response);

/** A batch sending on `client`'s settings, at most 64 transfers in flight by default. The batch
 *  keeps its own reference to the client's settings. The caller owns the result and frees it
 *  with hc_batch_free. */
HC_EXTERN hc_batch *hc_batch_new(hc_client *client);

/** Frees the batch; requests still pending complete with HC_ECANCELLED first. */
HC_EXTERN void hc_batch_free(hc_batch *batch);

/** Most transfers in flight at once (0: no limit; default hc_batch_default_concurrency()); more
 *  wait their turn. */
HC_EXTERN hc_code hc_batch_set_concurrency(hc_batch *batch, size_t max_in_flight);

/** The library's default for transfers in flight at once (64): a new batch's, and the Python
 *  binding's map and amap. */
HC_EXTERN size_t hc_batch_default_concurrency(void);

/** Most connections to one host at once (0: no limit, the default). */
HC_EXTERN hc_code hc_batch_set_host_limit(hc_batch *batch, size_t max_per_host);

/** Queues `request` (borrowed: its settings are taken during the call, so it may be freed or
 *  changed afterwards); `done` is called with `userdata` when it completes.
 *  HC_OK means the batch took the request, and then `done` is called exactly once for it: a
 *  request that cannot start (its handler refuses it before sending, e.g. a download target
 *  that exists with HC_FILE_NO_OVERWRITE) completes during this call, through `done`, with
 *  its code. Only a NULL batch, request or done fails the call itself (HC_EINVALID_ARG), and
 *  then `done` is never called. (A malformed URL never gets this far: hc_request_new refuses it.) */
HC_EXTERN hc_code hc_batch_add(hc_batch *batch, const hc_request *request, hc_done_cb done,
                               void *userdata);

/** Runs until every queued request, including those added by callbacks, has completed. */
HC_EXTERN hc_code hc_batch_run(hc_batch *batch);

/** One non-blocking step for an event loop the caller owns: lets transfers progress, calls the
 *  callbacks of those that completed, and sets *pending (may be NULL) to how many remain. */
HC_EXTERN hc_code hc_batch_perform(hc_batch *batch, size_t *pending);

/** Blocks until a socket is ready, libcurl's timer expires, or `timeout_ms` passes. */
HC_EXTERN hc_code hc_batch_wait(hc_batch *batch, int timeout_ms);

/** How long the caller's event loop may wait before calling hc_batch_perform (-1: no timer).
 *  While a request has a cancellation token, at most 1000 ms (a token set from another thread
 *  wakes no one), and 0 once one is set; hc_batch_wait waits no longer than that either. */
HC_EXTERN hc_code hc_batch_timeout_ms(hc_batch *batch, long *ms);

/** Adds the sockets libcurl waits on to the sets (any may be NULL); *max_fd is the highest, or
 *  -1 when libcurl has none to offer right now (then wait hc_batch_timeout_ms). */
HC_EXTERN hc_code hc_batch_fdset(hc_batch *batch, fd_set *read_fds, fd_set *write_fds,
                                 fd_set *except_fds, int *max_fd);

/** How many requests are queued or running (0 if batch is NULL). */
HC_EXTERN size_t hc_batch_pending(const hc_batch *batch);

/* Driving a batch from an event loop of yours socket by socket (epoll, libuv, asyncio), as
 * libcurl's multi_socket API does: the batch says which sockets to watch and when its timer
 * is due; you say which socket is ready. Each transfer costs nothing while it waits, however
 * many are in flight (hc_batch_fdset is limited to FD_SETSIZE descriptors). */

#define HC_WATCH_IN 1       /**< Watch the socket for reading. */
#define HC_WATCH_OUT 2      /**< ... for writing. */
#define HC_WATCH_INOUT 3    /**< ... for both. */
#define HC_WATCH_REMOVE 4   /**< Stop watching it. */
#define HC_EVENT_IN 1       /**< hc_batch_socket_action: the socket is readable, */
#define HC_EVENT_OUT 2      /**< writable, */
#define HC_EVENT_ERR 4      /**< or in error. */
#define HC_SOCKET_TIMEOUT (-1) /**< hc_batch_socket_action's fd when the timer expired. */

/** Watch `fd` as `what` says (HC_WATCH_*), replacing what was watched on it before. */
typedef void (*hc_socket_watch_cb)(void *userdata, int fd, int what);
/** Call hc_batch_socket_action(batch, HC_SOCKET_TIMEOUT, 0, ...) once `timeout_ms` have passed
 *  (0: as soon as your loop turns), replacing the timer set before; -1 cancels it. */
typedef void (*hc_timer_watch_cb)(void *userdata, long timeout_ms);

/** Hands socket and timer watching to your loop; call it before the first hc_batch_add. The
 *  callbacks run during hc_batch_add and hc_batch_socket_action on your loop's thread, and must
 *  not call hc_batch_socket_action themselves (schedule it). From then on drive the batch with
 *  hc_batch_socket_action only, not hc_batch_run, _perform or _wait. `userdata` must stay
 *  valid while the batch lives. HC_EINVALID_ARG after requests were added. */
HC_EXTERN hc_code hc_batch_watch(hc_batch *batch, hc_socket_watch_cb socket, hc_timer_watch_cb timer,
                                 void *userdata);

/** Tells the batch that `fd` is ready (`events`: HC_EVENT_* combined), or with fd
 *  HC_SOCKET_TIMEOUT that its timer expired. The done callbacks of requests that completed run
 *  during the call; *pending (may be NULL) is set to how many remain. After hc_cancel_cancel
 *  on a request's token, call it with HC_SOCKET_TIMEOUT: a token wakes no one. */
HC_EXTERN hc_code hc_batch_socket_action(hc_batch *batch, int fd, int events, size_t *pending);

HC_END_DECL

#endif /* HTTPCONTENT_BATCH_H */
