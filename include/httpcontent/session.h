/*
 * httpcontent/session.h — cookies, authentication, proxies, retries and download digests.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_SESSION_H
#define HTTPCONTENT_SESSION_H

#include "httpcontent/core.h"

HC_BEGIN_DECL

/* ------------------------------------------------------------------------------------------ */
/* Session: cookies, authentication, proxies, retries and download digests, the layers a      */
/* client composes around each transfer                                                        */
/* ------------------------------------------------------------------------------------------ */

/* -- Cookies: libcurl's cookie engine, one jar per client, shared by all its transfers
 *    (hc_client_send, batches). On by default; its rules (domain, path, secure, expiry, public
 *    suffixes) are libcurl's. */

/** Turns the client's cookie jar on (`enabled` non-zero, the default) or off. `file`, when not
 *  NULL, is a Netscape cookie file the jar starts from (a missing file starts empty) and is saved
 *  to by hc_client_cookies_save(client, NULL) and when the client is freed. A new jar replaces the
 *  old one. `file` is copied. */
HC_EXTERN hc_code hc_client_set_cookies(hc_client *client, int enabled, const char *file);

#define HC_COOKIE_SECURE 1u      /**< Sent over https only. */
#define HC_COOKIE_HTTPONLY 2u    /**< Set with HttpOnly. */
#define HC_COOKIE_SUBDOMAINS 4u  /**< Sent to subdomains of its domain too. */

/** Called once per cookie by hc_client_cookies; the strings are borrowed for the call only.
 *  `expires` is seconds since 1970, 0 for a session cookie. Return 0 to go on, non-zero to stop
 *  (hc_client_cookies then returns HC_ECALLBACK). */
typedef int (*hc_cookie_cb)(void *userdata, const char *name, const char *value, const char *domain,
                            const char *path, unsigned int flags, int64_t expires);

/** Calls `cb` for each unexpired cookie in the client's jar. HC_EINVALID_ARG when cookies are off. */
HC_EXTERN hc_code hc_client_cookies(hc_client *client, hc_cookie_cb cb, void *userdata);

/** Adds a cookie to the jar, or replaces the one with the same name, domain and path. `domain` is
 *  the host it is sent to (required); `path` NULL means "/"; `flags` combines HC_COOKIE_*;
 *  `expires` 0 makes a session cookie. A name or value with ';' or a control byte is
 *  HC_EINVALID_ARG. The strings are copied. */
HC_EXTERN hc_code hc_client_cookie_set(hc_client *client, const char *name, const char *value,
                                       const char *domain, const char *path, unsigned int flags,
                                       int64_t expires);

/** Removes every cookie from the jar. */
HC_EXTERN hc_code hc_client_cookies_clear(hc_client *client);

/** Writes the jar to `path` in Netscape format (NULL: the file given to hc_client_set_cookies;
 *  HC_EINVALID_ARG when there is none). HC_ELOCAL_IO when the file cannot be written. */
HC_EXTERN hc_code hc_client_cookies_save(hc_client *client, const char *path);

/** Adds the cookies of the Netscape cookie file `path` to the jar. HC_ELOCAL_IO if it cannot be read. */
HC_EXTERN hc_code hc_client_cookies_load(hc_client *client, const char *path);

/** Sends the cookie `name`=`value` with this request, beside the jar's (not stored in the jar).
 *  The strings are copied. */
HC_EXTERN hc_code hc_request_add_cookie(hc_request *request, const char *name, const char *value);

/* -- Authentication. Basic, Bearer and Digest are libcurl's: credentials go to the URL's host
 *    only, never to another host a redirect leads to. */
typedef enum hc_auth_kind {
    HC_AUTH_NONE = 0,    /**< No credentials (a request's: use the client's). */
    HC_AUTH_BASIC = 1,   /**< a = user, b = password. */
    HC_AUTH_BEARER = 2,  /**< a = token. */
    HC_AUTH_DIGEST = 3,  /**< a = user, b = password; libcurl answers the server's challenge. */
    HC_AUTH_CUSTOM = 4   /**< cb sets the headers before each send. */
} hc_auth_kind;

/** The request being authenticated, lent to an hc_auth_cb for the call only. */
typedef struct hc_auth_request hc_auth_request;

/** Sets headers (hc_auth_request_set_header) on the request about to be sent. `refresh` is 1 when
 *  the previous send was answered 401: renew the credentials; the request is then sent once
 *  more. Return 0 to go on, non-zero to fail the send with HC_ECALLBACK. Runs on the sending
 *  thread (for a batch, the thread driving it). */
typedef int (*hc_auth_cb)(void *userdata, hc_auth_request *request, int refresh);

/** Credentials for every request of the client (kind HC_AUTH_NONE removes them). The strings
 *  are copied; `cb` and `userdata` (HC_AUTH_CUSTOM) must stay valid as long as the client. */
HC_EXTERN hc_code hc_client_set_auth(hc_client *client, hc_auth_kind kind, const char *a, const char *b,
                                     hc_auth_cb cb, void *userdata);

/** Credentials for this request instead of the client's; as hc_client_set_auth, with `cb` and
 *  `userdata` valid as long as the request is sent. */
HC_EXTERN hc_code hc_request_set_auth(hc_request *request, hc_auth_kind kind, const char *a, const char *b,
                                      hc_auth_cb cb, void *userdata);

/** Sets a header on the request an hc_auth_cb is given (replacing one of that name). CR/LF in the
 *  value is HC_EINVALID_ARG. The strings are copied. */
HC_EXTERN hc_code hc_auth_request_set_header(hc_auth_request *request, const char *name, const char *value);

/* -- Retries (opt-in). hc_client_send waits between attempts; a batch (hc_batch_*) re-adds a
 *    request after its wait while its other transfers go on. */
#define HC_RETRY_ALL_METHODS 1u            /**< Retry POST and PATCH too (default: idempotent only). */
#define HC_RETRY_NO_CONNECTION_ERRORS 2u   /**< Do not retry refused, reset or truncated transfers. */
#define HC_RETRY_NO_TIMEOUTS 4u            /**< Do not retry timeouts. */
#define HC_RETRY_IGNORE_RETRY_AFTER 8u     /**< Back off without reading Retry-After. */

/** Sends a failed request again, `total` attempts in all (0: no retries, the default). Before
 *  attempt n+1 it waits a random time up to min(cap_ms, backoff_ms * 2^(n-1)), or what a
 *  Retry-After (seconds or HTTP-date) asks; a Retry-After longer than `cap_ms` ends the retries.
 *  `statuses` (NULL: 429, 502, 503, 504) are the rejected statuses retried. Only bodies that can
 *  be sent again are retried (bytes, files, forms; not a read callback). The final error tells
 *  the attempts (hc_error_attempts). `statuses` is copied. */
HC_EXTERN hc_code hc_client_set_retry(hc_client *client, int total, int backoff_ms, int cap_ms,
                                      const int *statuses, size_t count, unsigned int flags);

/** As hc_client_set_retry, for this request instead of the client's policy. */
HC_EXTERN hc_code hc_request_set_retry(hc_request *request, int total, int backoff_ms, int cap_ms,
                                       const int *statuses, size_t count, unsigned int flags);

/** How many times the failed request was sent (1 without retries; 0 for the "no error" value). */
HC_EXTERN int hc_error_attempts(const hc_error *err);

/* -- Downloads you can trust. A resumable file handler (HC_FILE_RESUME) keeps the part's ETag and
 *    Last-Modified in PATH.part.meta and resumes with If-Range: a file changed on the server comes
 *    whole and the part starts over, never spliced. Digests are computed while the bytes stream
 *    (OpenSSL's libcrypto), covering the part already on disk after a resume. */

/** The digest the download must have: `algorithm` "sha256", "sha512" or "md5" and its value in
 *  `hex`; a mismatch fails the send with HC_ECHECKSUM_MISMATCH and leaves neither the file nor a part.
 *  Digests the server sends (RFC 9530 Repr-Digest, Content-Digest on a whole unencoded body,
 *  legacy Digest) are checked whether or not one is set. NULL `algorithm` removes it. Only for
 *  file handlers (others ignore it). The strings are copied. */
HC_EXTERN hc_code hc_handler_file_set_digest(hc_handler *handler, const char *algorithm, const char *hex);

/** The digest computed for a download, "sha256:<hex>" (the expected digest's algorithm, else
 *  the server's), or NULL when none was checked or the handler was not a file handler.
 *  Borrowed: valid until the response is freed. */
HC_EXTERN const char *hc_response_file_digest(const hc_response *response);

HC_END_DECL

#endif /* HTTPCONTENT_SESSION_H */
