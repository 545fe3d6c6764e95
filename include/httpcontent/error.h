/*
 * httpcontent/error.h — result codes, the per-thread last error, error details, the version.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_ERROR_H
#define HTTPCONTENT_ERROR_H

#include "httpcontent/common.h"

HC_BEGIN_DECL

/* ------------------------------------------------------------------------------------------ */
/* Errors                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/** Result codes. The same codes exist in Swift (HTTPContentError.Code) and Python (hc.Error). */
typedef enum hc_code {
    HC_OK = 0,                          /**< Success. */
    HC_EINVALID_ARG = 1,                /**< Bad argument: NULL handle, bad URL, CR/LF in a header. */
    HC_ETRANSPORT = 2,                  /**< libcurl failed (refused, reset, truncated body...). */
    HC_ETIMEOUT = 3,                    /**< Total, connect, read or low-speed time limit hit. */
    HC_ETOO_MANY_REDIRECTS = 4,         /**< More redirects than allowed. */
    HC_EUNACCEPTABLE_STATUS = 5,        /**< The handler does not accept the status code. */
    HC_EUNACCEPTABLE_CONTENT_TYPE = 6,  /**< The handler does not accept the Content-Type. */
    HC_EDECODE = 7,                     /**< The body could not be decoded (charset, JSON, image). */
    HC_ETOO_LARGE = 8,                  /**< The decoded body exceeds the handler's limit. */
    HC_ECANCELLED = 9,                  /**< Cancelled by hc_cancel_cancel or a progress callback. */
    HC_ELOCAL_IO = 10,                  /**< A local file operation failed (Python: LocalIOError). */
    HC_ECALLBACK = 11,                  /**< A callback of yours reported failure. */
    HC_ECHECKSUM_MISMATCH = 12,         /**< A download does not match its expected digest; no file is left. */
    HC_EIO HC_DEPRECATED("renamed HC_ELOCAL_IO") = 10,                  /**< Old name of HC_ELOCAL_IO. */
    HC_ECHECKSUM HC_DEPRECATED("renamed HC_ECHECKSUM_MISMATCH") = 12    /**< Old name of HC_ECHECKSUM_MISMATCH. */
} hc_code;

/** Details of the last failure on the calling thread. */
typedef struct hc_error hc_error;

/** The last error on the calling thread, set by any hc_ function that fails. Never NULL: when
 *  nothing has failed, an error with code HC_OK and an empty message. A call that succeeds
 *  never changes it. Borrowed: valid until the next hc_ call on this thread that fails, or
 *  hc_error_clear(); to keep it longer, or hand it to another thread, use hc_error_copy. */
HC_EXTERN const hc_error *hc_error_last(void);

/** Forgets the calling thread's last error (an error from hc_error_last is invalid after). */
HC_EXTERN void hc_error_clear(void);

/** A copy of `err` that the caller owns and frees with hc_error_free: it outlives later
 *  failures and hc_error_clear, and may be read on any thread (one at a time). Every getter
 *  below works on it, and what they lend lives as long as the copy. NULL (HC_EINVALID_ARG) if
 *  err is NULL. */
HC_EXTERN hc_error *hc_error_copy(const hc_error *err);

/** Frees a copy made by hc_error_copy. NULL, or an error not from hc_error_copy (such as
 *  hc_error_last's), is left alone. */
HC_EXTERN void hc_error_free(hc_error *err);

/** The error's code (HC_OK for the "no error" value; HC_EINVALID_ARG if err is NULL). */
HC_EXTERN hc_code hc_error_code(const hc_error *err);

/** A one-line, human-readable message. Never NULL. Borrowed: lives as long as err. */
HC_EXTERN const char *hc_error_message(const hc_error *err);

/** libcurl's CURLcode behind a transport-level failure, or 0 when libcurl did not fail (or
 *  err is NULL). */
HC_EXTERN int hc_error_curl_code(const hc_error *err);

/** The HTTP status of the response the error concerns, or 0 when no response was received
 *  (or err is NULL). */
HC_EXTERN int hc_error_status(const hc_error *err);

/** The first value of header `name` (case-insensitive) of the response the error concerns, or
 *  NULL. Borrowed: lives as long as err. */
HC_EXTERN const char *hc_error_header(const hc_error *err, const char *name);

/** How many header fields the response the error concerns has (0 when there was none, or
 *  err is NULL). */
HC_EXTERN size_t hc_error_header_count(const hc_error *err);

/** The `index`th header field of that response, in the order received: sets *name and *value.
 *  Borrowed: lives as long as err. HC_EINVALID_ARG when index is out of range (that failure
 *  replaces the thread's last error: read from a copy, or before, when iterating over it). */
HC_EXTERN hc_code hc_error_header_at(const hc_error *err, size_t index, const char **name,
                                     const char **value);

/** The URL of the request that failed: the final response's (after redirects) when one came,
 *  else the URL it was sent to; NULL for a failure not tied to a request.
 *  Borrowed: lives as long as err. */
HC_EXTERN const char *hc_error_url(const hc_error *err);

/** The method of the request that failed ("GET"...), or NULL for a failure not tied to a
 *  request. Borrowed: lives as long as err. */
HC_EXTERN const char *hc_error_method(const hc_error *err);

/** 1 when err is an HC_ETRANSPORT failure to reach the server or keep the connection (name not
 *  resolved, connection refused, TLS not set up, connection reset or closed without a reply),
 *  else 0. */
HC_EXTERN int hc_error_connection_failed(const hc_error *err);

/** How many redirects were followed before the response the error concerns (0 when none, or
 *  err is NULL). */
HC_EXTERN size_t hc_error_history_count(const hc_error *err);

/** The `index`th redirect followed before the failure, oldest first, as hc_response_history_at.
 *  Borrowed: lives as long as err. HC_EINVALID_ARG when index is out of range (that failure
 *  replaces the thread's last error: read from a copy when iterating over it). */
HC_EXTERN hc_code hc_error_history_at(const hc_error *err, size_t index, int *status,
                                      const char **url, const char **headers);

/** The body of a rejected response (capped, 64 KiB by default), or for HC_EDECODE the first
 *  bytes of the body a decoder could not decode (text, JSON: up to 64 KiB). Sets *data and *len; *data is NULL when there is none. Not NUL-terminated.
 *  Borrowed: lives as long as err. */
HC_EXTERN hc_code hc_error_body(const hc_error *err, const uint8_t **data, size_t *len);

/** The server's own message from a JSON error document in a rejected body, or NULL.
 *  Borrowed: lives as long as err. */
HC_EXTERN const char *hc_error_server_message(const hc_error *err);

/** For HC_EDECODE: the byte offset in the body where decoding failed; -1 when not known (or
 *  err is NULL). */
HC_EXTERN int64_t hc_error_offset(const hc_error *err);

/** A short static name for a code ("timeout", "decode"...). Static storage: never freed. */
HC_EXTERN const char *hc_code_name(hc_code code);

/** The library's version, "MAJOR.MINOR.PATCH". Static storage: never freed. Compare it with
 *  HC_VERSION_STRING to check the header matches the library. */
HC_EXTERN const char *hc_version(void);

HC_END_DECL

#endif /* HTTPCONTENT_ERROR_H */
