/*
 * httpcontent/request_options.h — a request's settings in one versioned struct, set in one call,
 * and the library's defaults as values a binding reads instead of writing them again.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_REQUEST_OPTIONS_H
#define HTTPCONTENT_REQUEST_OPTIONS_H

#include "httpcontent/core.h"

HC_BEGIN_DECL

/** A request's transfer settings, each left as the client's unless changed. Versioned by its
 *  size: fill it with hc_request_options_init(&opts, sizeof opts), change fields, then pass it
 *  to hc_request_apply_options. A library older than the caller's header accepts the struct
 *  when every field it does not know is still at its initial value (zero). */
typedef struct hc_request_options {
    size_t struct_size;        /**< sizeof(hc_request_options) as the caller compiled it. */
    long timeout_ms;           /**< Total time limit: 0 the client's (default), HC_TIMEOUT_NONE none
                                    (lifts the client's), else milliseconds. */
    long connect_timeout_ms;   /**< Time to connect, as timeout_ms. Default 0 (the client's). */
    long read_timeout_ms;      /**< Longest silence between bytes, as timeout_ms. Default 0 (the client's). */
    int follow_redirects;      /**< -1 the client's (default), 0 no, 1 yes. */
    int max_redirects;         /**< -1 the client's (default), else at most this many (>= 0). */
    const char *proxy;         /**< NULL the client's (default), "" direct, else a proxy URL as
                                    hc_request_set_proxy takes. Copied by hc_request_apply_options. */
} hc_request_options;

/** Fills `opts` (`struct_size` bytes, the caller's sizeof(hc_request_options)) with "the
 *  client's" for every field and sets opts->struct_size. HC_EINVALID_ARG for NULL or a size
 *  smaller than the first version's. */
HC_EXTERN hc_code hc_request_options_init(hc_request_options *opts, size_t struct_size);

/** Applies every field of `opts` that is not "the client's" to `request`, in one call: the same
 *  settings as hc_request_set_timeout_ms, _connect_timeout_ms, _read_timeout_ms,
 *  _follow_redirects and _proxy, with the same checks. All fields are checked before any is
 *  applied: on HC_EINVALID_ARG (NULL, an unknown size, a negative time other than
 *  HC_TIMEOUT_NONE, a bad proxy URL, max_redirects below -1) the request is unchanged.
 *  Borrowed: `opts` is read during the call only (strings copied). */
HC_EXTERN hc_code hc_request_apply_options(hc_request *request, const hc_request_options *opts);

/* -- The library's defaults, read by bindings instead of restated. */

/** The time a client allows to connect unless told otherwise, in milliseconds (30000). */
HC_EXTERN long hc_default_connect_timeout_ms(void);

/** The most redirects a client follows unless told otherwise (10). */
HC_EXTERN int hc_default_max_redirects(void);

/** How much of a rejected response's body an error keeps unless told otherwise, in bytes (65536). */
HC_EXTERN size_t hc_default_rejected_body_limit(void);

/** The attempts in all of a retry policy unless told otherwise (3; a client has no policy until
 *  hc_client_set_retry gives it one). */
HC_EXTERN int hc_default_retry_total(void);

/** The base of a retry policy's exponential backoff unless told otherwise, in milliseconds (100). */
HC_EXTERN int hc_default_retry_backoff_ms(void);

/** The longest wait between two attempts unless told otherwise, in milliseconds (30000). */
HC_EXTERN int hc_default_retry_cap_ms(void);

/** Writes up to `capacity` of the statuses a retry policy retries unless told otherwise (429,
 *  502, 503, 504, ascending) into `out` and returns how many there are in all: call with
 *  `capacity` 0 (`out` may then be NULL) to learn the count. */
HC_EXTERN size_t hc_default_retry_statuses(int *out, size_t capacity);

HC_END_DECL

#endif /* HTTPCONTENT_REQUEST_OPTIONS_H */
