/*
 * httpcontent.h — the C interface of libhttpcontent, an HTTP content library: send a request,
 * and let a handler decide, as the bytes arrive, what becomes of the response body.
 *
 * Conventions, true of every function below unless its comment says otherwise:
 *  - Handles are opaque. Every `*_new` is paired with a `*_free`; `*_free(NULL)` does nothing.
 *  - A function returning `hc_code` returns HC_OK on success; on failure, the code says what went
 *    wrong and hc_error_last() explains it. A function returning a pointer returns NULL on
 *    failure, with hc_error_last() set.
 *  - A NULL handle or required pointer argument gives HC_EINVALID_ARG, never a crash. A getter
 *    that returns a value rather than a code or a pointer (a status, a count, a kind) has no
 *    failure to report: for a NULL handle it returns the value its comment gives (0, -1,
 *    HC_JSON_INVALID...) and leaves hc_error_last() as it was.
 *  - Strings passed in are NUL-terminated UTF-8 and are copied: the caller may free them after
 *    the call. Strings returned are borrowed from the handle they came from, as each comment says.
 *  - Handles may be used from any thread, but one handle by one thread at a time, except where a
 *    comment says a function is safe to call concurrently (hc_cancel_cancel, hc_client_send).
 *  - Streaming promise: every streaming handler (path items, batches, records, lines, events,
 *    XML elements, stream and custom callbacks) hands a complete item to its callback before
 *    the write callback that read the item's last byte returns: batches made for speed are cut
 *    at the end of every chunk libcurl delivers, and an item still incomplete there goes on in
 *    the next batch. Nothing waits for more bytes that may not come.
 */
#ifndef HTTPCONTENT_H
#define HTTPCONTENT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/select.h>
#include <stdint.h>

#ifdef __cplusplus
#define HC_BEGIN_DECL extern "C" {
#define HC_END_DECL }
#else
#define HC_BEGIN_DECL
#define HC_END_DECL
#endif

#if defined(__GNUC__)
#define HC_EXTERN __attribute__((visibility("default")))
#else
#define HC_EXTERN
#endif

#define HC_VERSION_MAJOR 0
#define HC_VERSION_MINOR 1
#define HC_VERSION_PATCH 0
#define HC_VERSION_STRING "0.1.0"

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
    HC_EIO = 10,                        /**< A local file operation failed. */
    HC_ECALLBACK = 11,                  /**< A callback of yours reported failure. */
    HC_ECHECKSUM = 12                   /**< A download does not match its expected digest; no file is left. */
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

/* ------------------------------------------------------------------------------------------ */
/* Cancellation                                                                                */
/* ------------------------------------------------------------------------------------------ */

/** A flag that stops the transfers it is attached to (see hc_request_set_cancel). */
typedef struct hc_cancel hc_cancel;

/** A new, unset token. The caller owns it and frees it with hc_cancel_free. */
HC_EXTERN hc_cancel *hc_cancel_new(void);

/** Sets the token: the transfers using it stop with HC_ECANCELLED at once, also one waiting
 *  on an idle connection (its wait is woken). Safe from any thread, including while
 *  hc_client_send runs on another. */
HC_EXTERN hc_code hc_cancel_cancel(hc_cancel *token);

/** 1 if the token is set, 0 if not (or token is NULL). */
HC_EXTERN int hc_cancel_is_cancelled(const hc_cancel *token);

/** Releases the caller's reference. Requests holding the token keep it alive until freed. */
HC_EXTERN void hc_cancel_free(hc_cancel *token);

/* ------------------------------------------------------------------------------------------ */
/* Handlers: what becomes of a response body                                                   */
/* ------------------------------------------------------------------------------------------ */

typedef struct hc_response hc_response;

/** A description of how to handle a body. Each send creates fresh handling state from it, so one
 *  hc_handler may serve many requests. */
typedef struct hc_handler hc_handler;

/** Discards the body; the status and headers are the result. Accepts 200-299, any type.
 *  The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_discard_new(void);

/** Keeps the whole body in memory (read it with hc_response_bytes). `max_size` is the largest
 *  decoded body accepted, in bytes (0: no limit); a larger body fails with HC_ETOO_LARGE.
 *  Accepts 200-299, any type. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_bytes_new(size_t max_size);

/** Provides memory for a body: return `size` writable bytes, or NULL to let the library use its own. */
typedef void *(*hc_alloc_cb)(void *userdata, size_t size);
/** Called once the library no longer uses memory that `hc_alloc_cb` returned. */
typedef void (*hc_release_cb)(void *userdata, void *memory);

/** For a bytes handler: when the server declares a body length of at least `min_size`, ask
 *  `allocate` for memory of that size and fill it in place, so hc_response_bytes returns that
 *  very memory (no copy); smaller bodies never call `allocate`.
 *  `release` (may be NULL) is called when the response no longer uses it, or when a longer body
 *  than declared forced a move to the library's own memory. `release` and `userdata` must stay
 *  valid until every response filled this way is freed: that may be after the handler is
 *  freed (hc_response_free calls `release`). NULL `allocate` restores the default. */
HC_EXTERN hc_code hc_handler_bytes_set_allocator(hc_handler *handler, size_t min_size,
                                                 hc_alloc_cb allocate, hc_release_cb release,
                                                 void *userdata);

/** Releases the caller's reference. Requests the handler was set on keep their own. */
HC_EXTERN void hc_handler_free(hc_handler *handler);

/** Empties the handler's set of acceptable status codes: any code is accepted, until ranges are
 *  added with hc_handler_accept_status. */
HC_EXTERN hc_code hc_handler_accept_any_status(hc_handler *handler);

/** Adds status codes `low`..`high` (inclusive) to those accepted (default set: 200-299). To
 *  replace the default, call hc_handler_accept_any_status first. */
HC_EXTERN hc_code hc_handler_accept_status(hc_handler *handler, int low, int high);

/** Empties the handler's set of acceptable content types: any type (or none) is accepted, until
 *  media ranges are added with hc_handler_accept_type. */
HC_EXTERN hc_code hc_handler_accept_any_type(hc_handler *handler);

/** Adds a media range ("application/json", "image/ *" without the space, "* / *+json" likewise)
 *  to the content types accepted; with none added, any type is accepted. */
HC_EXTERN hc_code hc_handler_accept_type(hc_handler *handler, const char *media_range);

/** Sets the largest body the handler accepts, in decoded bytes (0: no limit), for the
 *  handlers that take a limit (bytes, text, image, file); more fails with HC_ETOO_LARGE. */
HC_EXTERN hc_code hc_handler_set_max_size(hc_handler *handler, size_t max_size);

/** Replaces the process-wide default status codes given to handlers created from now on:
 *  `count` ranges as pairs low0, high0, low1, high1... (count 0: any status). The values are
 *  copied. Not thread-safe against concurrent handler creation. */
HC_EXTERN hc_code hc_defaults_accept_status(const int *low_high_pairs, size_t count);

/** Replaces the process-wide default content types of handlers created from now on whose own
 *  default is "any type" (bytes, text, stream, file): `count` media ranges, copied (count 0: any
 *  type). Not thread-safe against concurrent handler creation. */
HC_EXTERN hc_code hc_defaults_accept_types(const char *const *media_ranges, size_t count);

/** Replaces the key paths, tried in order, that find the server's message in a rejected JSON
 *  body (default: error.message, error, message, error_description, detail, title). The strings
 *  are copied; count 0 restores the default. Process-wide. */
HC_EXTERN hc_code hc_defaults_server_message_paths(const char *const *key_paths, size_t count);

/** Restores the built-in defaults (status 200-299, any type, the default message key paths). */
HC_EXTERN void hc_defaults_reset(void);

/** The status codes whose empty body is empty content rather than an error for this handler
 *  (default: 204, 205), replaced by `count` codes (copied). Every handler honours them, the
 *  JSON ones included (which also take a 304's empty body). */
HC_EXTERN hc_code hc_handler_empty_statuses(hc_handler *handler, const int *codes, size_t count);

/** The request methods whose empty body is empty content (default: HEAD), replaced by `count`
 *  methods (copied). */
HC_EXTERN hc_code hc_handler_empty_methods(hc_handler *handler, const char *const *methods, size_t count);

/** Text encodings for hc_handler_text_new. */
typedef enum hc_encoding {
    HC_ENCODING_AUTO = 0,       /**< Content-Type charset, then byte order mark, then UTF-8. */
    HC_ENCODING_UTF8 = 1,
    HC_ENCODING_UTF16LE = 2,
    HC_ENCODING_UTF16BE = 3,
    HC_ENCODING_ISO_8859_1 = 4,
    HC_ENCODING_US_ASCII = 5,
    HC_ENCODING_WINDOWS_1252 = 6
} hc_encoding;

/** Decodes the body to UTF-8 text as it arrives (read it with hc_response_text). With `strict`
 *  non-zero an invalid byte fails with HC_EDECODE, its offset (hc_error_offset) and the body's
 *  first bytes, up to 64 KiB (hc_error_body); with 0 it
 *  becomes U+FFFD. An unknown charset fails with HC_EDECODE. Accepts 200-299, any type.
 *  The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_text_new(hc_encoding encoding, int strict);

/** Decodes `len` bytes received with Content-Type `content_type` (NULL: none) to UTF-8 by the text
 *  handler's rules: `encoding` unless HC_ENCODING_AUTO, then the charset, then a byte order mark,
 *  then UTF-8; `strict` as for hc_handler_text_new (0: invalid bytes become U+FFFD). *out is
 *  NUL-terminated, *out_len excludes the NUL. The caller owns *out and frees it with
 *  hc_buffer_free. HC_EDECODE for an unknown charset or, when strict, an invalid byte. */
HC_EXTERN hc_code hc_text_decode(const uint8_t *data, size_t len, const char *content_type,
                                 hc_encoding encoding, int strict, uint8_t **out, size_t *out_len);

/** Keeps an image body, sniffs its format and reads its pixel size from its header (read them
 *  with hc_response_image, the bytes with hc_response_bytes). Bytes that are not the declared
 *  type, or a header claiming more than 100 megapixels, fail with HC_EDECODE. Accepts 200-299,
 *  image/ types. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_image_new(void);

/** Called with each chunk of the body as it arrives; `buf` is valid only during the call.
 *  Return 0 to continue, or an hc_code to stop the transfer (HC_ECALLBACK when in doubt). */
typedef int (*hc_write_cb)(void *userdata, const uint8_t *buf, size_t len);

/** Writes each chunk to file descriptor `fd` as it arrives, keeping nothing; the descriptor is
 *  neither owned nor closed. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_stream_fd_new(int fd);

/** Writes each chunk to `file` with fwrite, flushed at the end; `file` is neither owned nor
 *  closed and must stay open while requests use the handler. The caller owns the result and
 *  frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_stream_file_new(FILE *file);

/** Passes each chunk to `cb` with `userdata` as it arrives; `userdata` must stay valid while
 *  requests use the handler. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_stream_cb_new(hc_write_cb cb, void *userdata);

#define HC_FILE_MAKE_DIRS 1u     /**< Create missing parent directories. */
#define HC_FILE_NO_OVERWRITE 2u  /**< Fail with HC_EIO before sending if the file exists. */
#define HC_FILE_RESUME 4u        /**< Continue PATH.part with a Range request; keep it on failure.
                                      A 416 whose Content-Range "bytes * /N" (no space) equals
                                      the part's size means the part is the whole file: it is
                                      renamed into place and the download succeeds. */
#define HC_FILE_NO_FSYNC 8u      /**< Skip the fsync of the file and its directory before and after
                                      the rename (faster; a power cut may then leave the renamed
                                      file short). Default: fsync'd, so a finished download is on
                                      disk when the send returns. */

/** Downloads the body to `path` (copied) atomically: a temporary file in the same directory is
 *  fsync'd and renamed over `path` only when the whole body arrived; on any failure it is
 *  removed and an existing file is left untouched (with HC_FILE_RESUME, PATH.part is kept so a
 *  later request can continue it). A response with no body by definition (HEAD, 204, 205, a
 *  redirect not followed)
 *  leaves `path` and PATH.part as they were (0 bytes written). An unwritable directory fails
 *  with HC_EIO before sending. `flags` combines HC_FILE_*. Accepts 200-299, any type.
 *  The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_file_new(const char *path, unsigned int flags);

/** Offers each response to `handlers[0..count)` in order; the first that accepts it takes the
 *  body (see hc_response_handler_index). When none accepts, the first one's error is returned.
 *  The compound keeps its own references: the caller may free the handlers and must free the
 *  result with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_compound_new(hc_handler *const *handlers, size_t count);

#define HC_HANDLER_VTABLE_VERSION 1u

/** A handler written in C. Every pointer may be NULL. The response's status codes and types are
 *  checked against the handler's acceptance (hc_handler_accept_*) before `accept` is called.
 *   accept:  once the headers are complete; `head` is borrowed for the call (use the
 *            hc_response_* getters on it: status, headers, URL). Return 0 to take the body, or
 *            an hc_code to refuse it (HC_EUNACCEPTABLE_STATUS for an unwanted response).
 *   consume: each chunk as it arrives. Return 0 to continue, or an hc_code to stop.
 *   finish:  once the body is complete. Return 0, or an hc_code to fail the request.
 *   cleanup: always last, with `failed` non-zero when the request failed. */
typedef struct hc_handler_vtable {
    unsigned int version; /**< HC_HANDLER_VTABLE_VERSION */
    int (*accept)(void *userdata, const hc_response *head);
    int (*consume)(void *userdata, const uint8_t *buf, size_t len);
    int (*finish)(void *userdata);
    void (*cleanup)(void *userdata, int failed);
} hc_handler_vtable;

/** A handler driven by `vtable` (copied) with `userdata`, which must stay valid while requests
 *  use the handler; every send using this handler shares it, so use one handler per concurrent
 *  request. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_custom_new(const hc_handler_vtable *vtable, void *userdata);

/* ------------------------------------------------------------------------------------------ */
/* Requests                                                                                    */
/* ------------------------------------------------------------------------------------------ */

typedef struct hc_request hc_request;

/** Progress of a transfer: bytes received on the wire and expected (0 if unknown), bytes handed
 *  to the handler after decompression, bytes sent and to send. A resumed download
 *  (HC_FILE_RESUME) counts the part it continues: received starts at the part's size and
 *  expected is the whole file's. Return 0 to continue, non-zero to
 *  cancel the transfer (it then fails with HC_ECANCELLED). */
typedef int (*hc_progress_cb)(void *userdata, int64_t received, int64_t expected,
                              int64_t decoded, int64_t sent, int64_t to_send);

/** A request for `method` ("GET", "POST"...) on `url`. Returns NULL with HC_EINVALID_ARG when
 *  either is NULL or malformed, or when the URL's scheme is not http or https ("ftp://",
 *  "file://"...: refused here, before any connection, with a message naming the scheme).
 *  The caller owns the result and frees it with hc_request_free. */
HC_EXTERN hc_request *hc_request_new(const char *method, const char *url);

HC_EXTERN void hc_request_free(hc_request *request);

/** Adds a header line. A name that is not a token, or a value with CR, LF or NUL, is refused
 *  with HC_EINVALID_ARG and nothing is added. */
HC_EXTERN hc_code hc_request_add_header(hc_request *request, const char *name, const char *value);

/** Sets the body to a copy of `len` bytes at `data`, sent with Content-Type `content_type`
 *  (NULL: none, unless a header sets it). The caller keeps ownership of `data`. */
HC_EXTERN hc_code hc_request_set_body(hc_request *request, const uint8_t *data, size_t len,
                                      const char *content_type);

/** Sets what becomes of the body. The request takes its own reference: the caller may free
 *  `handler` at any time. Without a handler, the body is kept as bytes (hc_handler_bytes_new(0)). */
HC_EXTERN hc_code hc_request_set_handler(hc_request *request, hc_handler *handler);

/** A request's time limit of none: it lifts the client's for this request. */
#define HC_TIMEOUT_NONE (-1L)

/** Total time allowed for this request in milliseconds (0: the client's setting;
 *  HC_TIMEOUT_NONE: no limit, whatever the client's). */
HC_EXTERN hc_code hc_request_set_timeout_ms(hc_request *request, long timeout_ms);

/** Time allowed to connect for this request in milliseconds (0: the client's setting;
 *  HC_TIMEOUT_NONE: libcurl's own 300 s). */
HC_EXTERN hc_code hc_request_set_connect_timeout_ms(hc_request *request, long timeout_ms);

/** The longest silence allowed for this request, in milliseconds: no byte received (or sent)
 *  for that long fails it with HC_ETIMEOUT ("read timeout: ..."). 0: the client's setting;
 *  HC_TIMEOUT_NONE: none. The limit for streams, which a total timeout would cut. */
HC_EXTERN hc_code hc_request_set_read_timeout_ms(hc_request *request, long timeout_ms);

/** Whether this request follows redirects (1) or not (0), overriding the client's setting. A 3xx
 *  with a Location that is not followed is the answer: handlers with the default status codes
 *  accept it, whatever its type, with empty content as for a 204 (read Location with
 *  hc_response_header). */
HC_EXTERN hc_code hc_request_set_follow_redirects(hc_request *request, int follow);

/** Calls `cb` with `userdata` as the transfer progresses (NULL cb: no calls). The callback runs
 *  on the thread that calls hc_client_send; `userdata` must stay valid while a send runs. */
HC_EXTERN hc_code hc_request_set_progress(hc_request *request, hc_progress_cb cb, void *userdata);

/** This request's proxy, as hc_client_set_proxy (copied; "" sends directly), overriding the
 *  client's; NULL restores the client's. A malformed proxy gives HC_EINVALID_ARG. */
HC_EXTERN hc_code hc_request_set_proxy(hc_request *request, const char *proxy);

/** Attaches a cancellation token; the request keeps its own reference (NULL detaches). */
HC_EXTERN hc_code hc_request_set_cancel(hc_request *request, hc_cancel *token);

/* ------------------------------------------------------------------------------------------ */
/* Clients                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef struct hc_client hc_client;

/** A client with the default settings: no total timeout, 30 s connect timeout, redirects
 *  followed up to 10, TLS verified, compressed bodies accepted and decoded, User-Agent
 *  "httpcontent/VERSION". Connections are kept alive and reused between its requests.
 *  The caller owns the result and frees it with hc_client_free. */
HC_EXTERN hc_client *hc_client_new(void);

/** Frees the client and closes its idle connections. No send may be running on it. */
HC_EXTERN void hc_client_free(hc_client *client);

/** Total time allowed for each request, in milliseconds (0: no limit, the default). */
HC_EXTERN hc_code hc_client_set_timeout_ms(hc_client *client, long timeout_ms);

/** Time allowed to connect, in milliseconds (0: libcurl's own 300 s; default 30000). */
HC_EXTERN hc_code hc_client_set_connect_timeout_ms(hc_client *client, long timeout_ms);

/** The longest silence allowed while a request runs, in milliseconds: no byte received (or
 *  sent) for that long fails it with HC_ETIMEOUT (0: none, the default). Checked while the
 *  transfer waits, so it fires on time on an idle connection. */
HC_EXTERN hc_code hc_client_set_read_timeout_ms(hc_client *client, long timeout_ms);

/** Fail with HC_ETIMEOUT when fewer than `bytes_per_second` arrive for `seconds` in a row
 *  (0, 0: off, the default). */
HC_EXTERN hc_code hc_client_set_low_speed(hc_client *client, long bytes_per_second, long seconds);

/** Follow redirects (1, the default) or not (0), and how many at most (default 10). */
HC_EXTERN hc_code hc_client_set_redirects(hc_client *client, int follow, int max_redirects);

/** libcurl's receive buffer (the most one chunk holds: 1 KiB to 10 MiB) and upload buffer (16 KiB
 *  to 2 MiB), in bytes; 0 for the default: 256 KiB and 1 MiB for a request sent alone
 *  (hc_client_send, hc_client_fetch), libcurl's 16 KiB and 64 KiB for batch transfers, which
 *  may be many at once, each holding its buffers. Out of range: HC_EINVALID_ARG. */
HC_EXTERN hc_code hc_client_set_buffer_sizes(hc_client *client, size_t receive, size_t upload);

/** The proxy for every request, as a URL (copied): "http://host:port", "https://..." (TLS to
 *  the proxy), "socks4://", "socks4a://", "socks5://", "socks5h://" (names resolved by the
 *  proxy); credentials as "scheme://user:password@host:port". "" sends directly whatever the
 *  environment says. NULL (the default) uses the environment's http_proxy, https_proxy and
 *  all_proxy, read when hc_client_new ran. Another scheme or a control byte: HC_EINVALID_ARG. */
HC_EXTERN hc_code hc_client_set_proxy(hc_client *client, const char *proxy);

/** Hosts reached without the proxy (copied): a comma-separated list of names, domains (which
 *  cover their subdomains), IP addresses or CIDR ranges, or "*". NULL (the default): the
 *  environment's no_proxy, or none when hc_client_set_proxy set a proxy. */
HC_EXTERN hc_code hc_client_set_no_proxy(hc_client *client, const char *hosts);

/** Whether the proxy variables of the environment (http_proxy, https_proxy, all_proxy, no_proxy)
 *  are read (non-zero, the default) or ignored (0: requests go directly unless
 *  hc_client_set_proxy or hc_request_set_proxy names a proxy). */
HC_EXTERN hc_code hc_client_set_trust_env(hc_client *client, int trust);

/** The User-Agent sent unless a request sets its own. */
HC_EXTERN hc_code hc_client_set_user_agent(hc_client *client, const char *user_agent);

/** Adds a header sent with every request that does not set the same name. */
HC_EXTERN hc_code hc_client_add_header(hc_client *client, const char *name, const char *value);

/** Verify TLS certificates and host names (1, the default) or not (0: insecure). */
HC_EXTERN hc_code hc_client_set_verify_tls(hc_client *client, int verify);

/** Trust the CA certificates in this PEM file instead of the system's (NULL: the system's). */
HC_EXTERN hc_code hc_client_set_ca_file(hc_client *client, const char *path);

/** A client certificate (PEM file) sent when a server asks for one, and its private key (PEM
 *  file; NULL: in the certificate's file). Both copied; NULL `cert` removes it. */
HC_EXTERN hc_code hc_client_set_client_cert(hc_client *client, const char *cert, const char *key);

/** Whether to ask for compressed bodies and decode them (1, the default) or take bodies as the
 *  server sends them, Content-Encoding and all (0: for a caller that decodes them itself). */
HC_EXTERN hc_code hc_client_set_compressed(hc_client *client, int on);

/** How much of a rejected response's body the error keeps, in bytes (default 65536). */
HC_EXTERN hc_code hc_client_set_rejected_body_limit(hc_client *client, size_t bytes);

/** Sends `request` and waits for the outcome. On HC_OK, *response is set to a new response the
 *  caller owns and frees with hc_response_free; on failure *response is NULL and
 *  hc_error_last() has the details (for a rejected response: status, headers, capped body and
 *  the server's message). The request is only borrowed and may be sent again. Several threads
 *  may send on one client at once, each with its own request. */
HC_EXTERN hc_code hc_client_send(hc_client *client, const hc_request *request,
                                 hc_response **response);

/** What hc_client_fetch reports. Every field is zero/NULL when the fetch fails. */
typedef struct hc_fetch_result {
    hc_response *response;  /* new; the caller owns it and frees it with hc_response_free */
    int status;             /* hc_response_status(response) */
    const uint8_t *bytes;   /* the body kept by a bytes or image handler (as hc_response_bytes):
                               borrowed from `response`; NULL for other handlers */
    size_t bytes_len;
} hc_fetch_result;

/** hc_client_send in one call for a request with no body and no header of its own: `method`
 *  and `url` (copied), `handler` (borrowed for the call; NULL: the body is kept as bytes),
 *  `timeout_ms` (0: the client's setting, HC_TIMEOUT_NONE: none) and `follow_redirects` (-1: the client's setting,
 *  0: no, 1: yes). On HC_OK, *result has the response the caller now owns, its status and, for
 *  a bytes handler, its body; on failure *result is zeroed and hc_error_last() has the details.
 *  Safe to call concurrently on one client, like hc_client_send. */
HC_EXTERN hc_code hc_client_fetch(hc_client *client, const char *method, const char *url,
                                  hc_handler *handler, long timeout_ms, int follow_redirects,
                                  hc_fetch_result *result);

/* ------------------------------------------------------------------------------------------ */
/* Responses                                                                                   */
/* ------------------------------------------------------------------------------------------ */

HC_EXTERN void hc_response_free(hc_response *response);

/** Frees the first `count` responses of `responses`, each as hc_response_free (a NULL entry is
 *  skipped), in one call: for a binding that pays per call. This consumes those responses: do
 *  not use or free them afterwards; the array itself stays the caller's. NULL `responses` does
 *  nothing. */
HC_EXTERN void hc_response_free_many(hc_response *const *responses, size_t count);

/** The final status code (after redirects), or 0 if response is NULL. */
HC_EXTERN int hc_response_status(const hc_response *response);

/** The URL of the final response. Borrowed: valid until the response is freed. */
HC_EXTERN const char *hc_response_url(const hc_response *response);

/** The final response's reason phrase ("Not Found"; "" for HTTP/2 and later, which have none).
 *  Borrowed: valid until the response is freed. NULL if response is NULL. Also valid on the
 *  response a handler's accept callback is given. */
HC_EXTERN const char *hc_response_reason(const hc_response *response);

/** The final response's protocol version as its status line gave it ("HTTP/1.1", "HTTP/2"). Borrowed:
 *  valid until the response is freed. NULL if response is NULL. */
HC_EXTERN const char *hc_response_http_version(const hc_response *response);

/** The first value of header `name`, compared case-insensitively, or NULL.
 *  Borrowed: valid until the response is freed. */
HC_EXTERN const char *hc_response_header(const hc_response *response, const char *name);

/** How many header fields the response has (0 if response is NULL). */
HC_EXTERN size_t hc_response_header_count(const hc_response *response);

/** The `index`th header field, in the order received. Sets *name and *value.
 *  Borrowed: valid until the response is freed. HC_EINVALID_ARG when index is out of range. */
HC_EXTERN hc_code hc_response_header_at(const hc_response *response, size_t index,
                                        const char **name, const char **value);

/** All header fields as one block of "Name: value\r\n" lines, in order, for callers that parse
 *  them in one go. Not NUL-terminated. Borrowed: valid until the response is freed. */
HC_EXTERN hc_code hc_response_headers_raw(const hc_response *response, const uint8_t **data,
                                          size_t *len);

/** How many redirects were followed before the final response (0 if response is NULL): the
 *  entries of hc_response_history_at. */
HC_EXTERN size_t hc_response_history_count(const hc_response *response);

/** The `index`th redirect response followed, oldest first: sets *status, *url (the URL it came
 *  from) and *headers (its fields as "Name: value\r\n" lines, NUL-terminated). Any of the three
 *  may be NULL. Borrowed: valid until the response is freed. HC_EINVALID_ARG when index is out
 *  of range. */
HC_EXTERN hc_code hc_response_history_at(const hc_response *response, size_t index, int *status,
                                         const char **url, const char **headers);

/** The Content-Type's media type, lowercased, without parameters ("text/html"), or NULL.
 *  Borrowed: valid until the response is freed. */
HC_EXTERN const char *hc_response_media_type(const hc_response *response);

/** The Content-Type's charset parameter, lowercased, or NULL.
 *  Borrowed: valid until the response is freed. */
HC_EXTERN const char *hc_response_charset(const hc_response *response);

/** The body kept by a bytes or image handler. Sets *data and *len (*data may be NULL when len is 0).
 *  Not NUL-terminated. Borrowed: valid until the response is freed.
 *  HC_EINVALID_ARG if the response's handler does not keep bytes. */
HC_EXTERN hc_code hc_response_bytes(const hc_response *response, const uint8_t **data, size_t *len);

/** The text made by a text handler, as UTF-8: *text is NUL-terminated, *len excludes the NUL
 *  (the text itself may contain NUL). Borrowed: valid until the response is freed.
 *  HC_EINVALID_ARG if the response's handler does not make text. */
HC_EXTERN hc_code hc_response_text(const hc_response *response, const char **text, size_t *len);

/** Image formats reported by hc_response_image. */
typedef enum hc_image_format {
    HC_IMAGE_NONE = 0,   /**< An allowed empty response (204, HEAD): no image. */
    HC_IMAGE_PNG = 1,
    HC_IMAGE_JPEG = 2,
    HC_IMAGE_GIF = 3,
    HC_IMAGE_WEBP = 4,
    HC_IMAGE_BMP = 5
} hc_image_format;

/** The format and pixel size found by an image handler (pointers may be NULL); the image's
 *  bytes are available with hc_response_bytes. HC_EINVALID_ARG for other handlers. */
HC_EXTERN hc_code hc_response_image(const hc_response *response, hc_image_format *format,
                                    int64_t *width, int64_t *height);

/** What a file handler wrote: the path (borrowed: valid until the response is freed), the
 *  bytes this transfer wrote, the file's final size, and whether it resumed a partial
 *  download. Pointers may be NULL. HC_EINVALID_ARG for other handlers. */
HC_EXTERN hc_code hc_response_file(const hc_response *response, const char **path,
                                   int64_t *bytes_written, int64_t *size, int *resumed);

/** The number of bytes a stream handler passed on, or -1 for other handlers (or a NULL
 *  response). */
HC_EXTERN int64_t hc_response_streamed(const hc_response *response);

/** For a compound handler: the index of the handler that took the body; -1 otherwise (and
 *  for a NULL response). The content getters above, and the JSON ones (hc_response_json...),
 *  look through the compound to that handler's content. */
HC_EXTERN int hc_response_handler_index(const hc_response *response);

/** HC_OK when the status is below 400; else fails as a handler refusing the status would
 *  (HC_EUNACCEPTABLE_STATUS, the same message, status, headers, URL and method, and the body a
 *  bytes handler kept, up to 64 KiB, with the server's message from a JSON error document), for
 *  a response taken whatever its status (Python's raise_for_status). */
HC_EXTERN hc_code hc_response_check_status(const hc_response *response);

/** How many links the response's Link header fields hold (RFC 8288), in order. */
HC_EXTERN size_t hc_response_link_count(const hc_response *response);

/** Link `index`: its target as written between < and > in *url, and how many parameters it has
 *  in *param_count (may be NULL). Borrowed: valid until the response is freed.
 *  HC_EINVALID_ARG past the end. */
HC_EXTERN hc_code hc_response_link_at(const hc_response *response, size_t index, const char **url,
                                      size_t *param_count);

/** Parameter `param` of link `index` (rel, type, title...): its name, lowercased, and its value
 *  without quotes or escapes ("" when none). Borrowed: valid until the response is freed.
 *  HC_EINVALID_ARG past the end. */
HC_EXTERN hc_code hc_response_link_param_at(const hc_response *response, size_t index, size_t param,
                                            const char **name, const char **value);

/** Figures about the transfer: body bytes on the wire, body bytes after decompression, and
 *  total time in seconds. Any pointer may be NULL. */
HC_EXTERN hc_code hc_response_metrics(const hc_response *response, int64_t *wire_bytes,
                                      int64_t *decoded_bytes, double *total_seconds);

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

/* Driving a batch from your event loop with one descriptor (Linux): the batch watches its own
 * sockets in an epoll set and your loop watches that set's descriptor for reading. One
 * hc_batch_step per wake-up then serves every ready socket and hands back, in arrays you own,
 * the requests that completed: nothing is called back per socket or per request, which is what
 * an interpreter's loop (asyncio) pays most for. */

/** Has the batch poll its own sockets and sets *fd to the descriptor your loop watches for
 *  reading. Call it before the first request is added (again later: the same descriptor), and
 *  not with hc_batch_watch. Borrowed: the batch closes the descriptor when it is freed. Then
 *  call hc_batch_step when *fd is readable, when the timeout it gives has passed, and soon after
 *  adding requests or cancelling a token; not hc_batch_run, _perform, _wait or _socket_action.
 *  HC_EINVALID_ARG after requests were added or after hc_batch_watch; HC_EIO without epoll. */
HC_EXTERN hc_code hc_batch_poll_fd(hc_batch *batch, int *fd);

/** hc_batch_add without a callback: the request's outcome is queued under `key` (yours, any
 *  value, unique among the batch's requests not yet taken) for hc_batch_step to hand back, once.
 *  The request is borrowed (may be freed after the call). Only a NULL batch or request fails the
 *  call (HC_EINVALID_ARG); a request that fails is queued with its error. */
HC_EXTERN hc_code hc_batch_add_queued(hc_batch *batch, const hc_request *request, uint64_t key);

/** hc_batch_add_queued for a request with no body and no header of its own, in one call (as
 *  hc_client_fetch): `method` and `url` are copied, `handler` is kept while the request runs
 *  (NULL: the body is kept as bytes). Only a NULL batch, method or url fails the call. */
HC_EXTERN hc_code hc_batch_fetch_queued(hc_batch *batch, const char *method, const char *url,
                                        hc_handler *handler, uint64_t key);

/** hc_batch_fetch_queued for `count` requests in one call, for a binding that pays per call:
 *  request i is methods[i] and urls[i] (copied), handlers[i] (kept while it runs; a NULL entry,
 *  or NULL `handlers`: the body is kept as bytes) under keys[i]. An entry with a NULL method or
 *  url is queued with HC_EINVALID_ARG under its key. The arrays stay the caller's. Only a NULL
 *  batch, or NULL `methods`, `urls` or `keys` with `count` above 0, fails the call
 *  (HC_EINVALID_ARG, nothing queued). */
HC_EXTERN hc_code hc_batch_fetch_queued_many(hc_batch *batch, size_t count, const char *const *methods,
                                             const char *const *urls, hc_handler *const *handlers,
                                             const uint64_t *keys);

/** Cancels the queued request under `key` (it completes with HC_ECANCELLED at the next
 *  hc_batch_step); nothing if it already completed. A request's own token (hc_request_set_cancel)
 *  still cancels it too. HC_EINVALID_ARG only for a NULL batch. */
HC_EXTERN hc_code hc_batch_cancel_queued(hc_batch *batch, uint64_t key);

/** Drives the batch (with hc_batch_poll_fd: every ready socket and the timer if due; without,
 *  as hc_batch_perform), then takes up to `capacity` queued completions, in completion order:
 *  keys[i], and either results[i] (as hc_client_fetch reports it; errors[i] NULL) or errors[i]
 *  (results[i] zeroed). The caller owns results[i].response and errors[i] and frees them with
 *  hc_response_free / hc_error_free. *count is set to how many were taken; when it equals
 *  `capacity` more may wait (call again). *timeout_ms (may be NULL): call hc_batch_step again
 *  after that many milliseconds even if the descriptor stays quiet (-1: no timer, 0: at once, as
 *  while completions wait to be taken). The arrays may be NULL when `capacity` is 0;
 *  completions not taken when the batch is freed are freed with it. */
HC_EXTERN hc_code hc_batch_step(hc_batch *batch, size_t capacity, uint64_t *keys,
                                hc_fetch_result *results, hc_error **errors, size_t *count,
                                long *timeout_ms);

/** How many handles of any kind the library has handed out and not had back (a leak check). */
HC_EXTERN int64_t hc_live_handles(void);

/* ------------------------------------------------------------------------------------------ */
/* Request bodies                                                                              */
/* ------------------------------------------------------------------------------------------ */

/** Frees a buffer the library returned. NULL is a no-op. */
HC_EXTERN void hc_buffer_free(void *buf);

/** Ordered key/value pairs for an application/x-www-form-urlencoded body or a query string.
 *  Keys and values are escaped byte by byte: every byte outside A-Z a-z 0-9 - . _ ~ becomes
 *  %XX (uppercase hex). Repeated keys are kept, in order. Nested values (arrays, dictionaries)
 *  are built with hc_form_open_array / hc_form_open_dict ... hc_form_close; inside an array,
 *  values take a NULL key. Brackets in nested keys are escaped too (a%5B%5D=1 for a[]=1). */
typedef struct hc_form hc_form;

/** How a space is written (default HC_FORM_SPACE_PERCENT). */
typedef enum hc_form_space {
    HC_FORM_SPACE_PERCENT = 0,          /**< %20 (default): understood by every server. */
    HC_FORM_SPACE_PLUS = 1              /**< +, as HTML forms send it. */
} hc_form_space;

/** How an array is written (default HC_FORM_ARRAYS_BRACKETS). */
typedef enum hc_form_arrays {
    HC_FORM_ARRAYS_BRACKETS = 0,        /**< a[]=1&a[]=2 (default). */
    HC_FORM_ARRAYS_REPEAT = 1,          /**< a=1&a=2. */
    HC_FORM_ARRAYS_INDEXED = 2          /**< a[0]=1&a[1]=2. */
} hc_form_arrays;

/** How a boolean is written (default HC_FORM_BOOLS_NUMERIC). */
typedef enum hc_form_bools {
    HC_FORM_BOOLS_NUMERIC = 0,          /**< 1 and 0 (default). */
    HC_FORM_BOOLS_LITERAL = 1           /**< true and false. */
} hc_form_bools;

/** What becomes of a null value (default HC_FORM_NULLS_DROPPED). */
typedef enum hc_form_nulls {
    HC_FORM_NULLS_DROPPED = 0,          /**< The pair is left out (default). */
    HC_FORM_NULLS_EMPTY = 1             /**< The pair is sent as key= . */
} hc_form_nulls;

/** An empty form with the default options. The caller owns the result and frees it with hc_form_free. */
HC_EXTERN hc_form *hc_form_new(void);

/** Frees the form. Requests it was set on keep their own encoded copy. */
HC_EXTERN void hc_form_free(hc_form *form);

/** Adds the text `value` under `key` (NULL inside an array). Both strings are copied. */
HC_EXTERN hc_code hc_form_add(hc_form *form, const char *key, const char *value);

/** Adds `vlen` bytes of `value` under `klen` bytes of `key` (NULL, 0 inside an array); neither
 *  needs to be text nor NUL-terminated. Both are copied. */
HC_EXTERN hc_code hc_form_add_bytes(hc_form *form, const uint8_t *key, size_t klen,
                                    const uint8_t *value, size_t vlen);

/** Adds a boolean (0: false, other: true), written as hc_form_set_bool_encoding says. `key` is copied. */
HC_EXTERN hc_code hc_form_add_bool(hc_form *form, const char *key, int value);

/** Adds a null, dropped or sent empty as hc_form_set_null_encoding says. `key` is copied. */
HC_EXTERN hc_code hc_form_add_null(hc_form *form, const char *key);

/** Opens an array under `key` (NULL inside an array): values added until hc_form_close go in it.
 *  `key` is copied. */
HC_EXTERN hc_code hc_form_open_array(hc_form *form, const char *key);

/** Opens a dictionary under `key` (NULL inside an array): pairs added until hc_form_close go in it.
 *  `key` is copied. */
HC_EXTERN hc_code hc_form_open_dict(hc_form *form, const char *key);

/** Closes the innermost open array or dictionary; HC_EINVALID_ARG when none is open. */
HC_EXTERN hc_code hc_form_close(hc_form *form);

/** Sets how spaces are written (hc_form_space; default %20). */
HC_EXTERN hc_code hc_form_set_space_encoding(hc_form *form, hc_form_space space);

/** Sets how arrays are written (hc_form_arrays; default hc_form_default_array_encoding()). */
HC_EXTERN hc_code hc_form_set_array_encoding(hc_form *form, hc_form_arrays arrays);

/** How a new form writes arrays (HC_FORM_ARRAYS_BRACKETS): forms and query strings alike. */
HC_EXTERN hc_form_arrays hc_form_default_array_encoding(void);

/** Sets how booleans are written (hc_form_bools; default 1/0). */
HC_EXTERN hc_code hc_form_set_bool_encoding(hc_form *form, hc_form_bools bools);

/** Sets what becomes of nulls (hc_form_nulls; default dropped). */
HC_EXTERN hc_code hc_form_set_null_encoding(hc_form *form, hc_form_nulls nulls);

/** Sorts pairs by key, bytewise and stable, at every level (1) or keeps the order they were
 *  added in (0, the default). Arrays always keep their order. */
HC_EXTERN hc_code hc_form_set_sort(hc_form *form, int sort);

/** Encodes the form: sets *buf and *len (without '&' or '?' around it). The text is ASCII and
 *  NUL-terminated for convenience (the NUL is not counted in *len). HC_EINVALID_ARG while an
 *  array or dictionary is open. The caller owns the result and frees it with hc_buffer_free. */
HC_EXTERN hc_code hc_form_encode(const hc_form *form, uint8_t **buf, size_t *len);

/** Sets the body to the encoded form, with Content-Type application/x-www-form-urlencoded unless
 *  a header sets another. The form is encoded now and copied: it may be changed or freed after. */
HC_EXTERN hc_code hc_request_set_form_body(hc_request *request, const hc_form *form);

/** Appends the encoded form to the request URL's query: an existing query is kept and the new
 *  pairs follow it after '&'; a fragment (#...) is dropped. The form is encoded now and copied. */
HC_EXTERN hc_code hc_request_add_query(hc_request *request, const hc_form *form);

/** Sets the body to `text` (NUL-terminated UTF-8) encoded in `charset` ("utf-8" when NULL;
 *  also "iso-8859-1"/"latin1", "us-ascii", "utf-16le", "utf-16be"), with Content-Type
 *  "text/plain; charset=<charset>". A character the charset cannot represent, or an unknown
 *  charset, gives HC_EINVALID_ARG. `text` is copied. */
HC_EXTERN hc_code hc_request_set_text_body(hc_request *request, const char *text, const char *charset);

/** Sets the body to `len` bytes of JSON text at `data`, sent as they are with Content-Type
 *  application/json. `data` is copied. */
HC_EXTERN hc_code hc_request_set_json_body(hc_request *request, const uint8_t *data, size_t len);

/** Streams the file at `path` as the body, read while sending: memory stays flat whatever its
 *  size. The file is opened at each send, before connecting; missing or unreadable gives HC_EIO
 *  and nothing is sent. A regular file's size is sent as Content-Length; a FIFO is sent chunked.
 *  `content_type` may be NULL (no Content-Type). Both strings are copied. */
HC_EXTERN hc_code hc_request_set_file_body(hc_request *request, const char *path, const char *content_type);

/** Streams from the open descriptor `fd`: `len` bytes, or -1 for the rest of a regular file (or
 *  chunked, for a pipe or socket). A seekable fd is read with pread from its offset at the start
 *  of each send and its offset is left unchanged. Borrowed: `fd` must stay open while a send
 *  runs; the library never closes it. `content_type` may be NULL and is copied. */
HC_EXTERN hc_code hc_request_set_fd_body(hc_request *request, int fd, int64_t len, const char *content_type);

/** Supplies an upload's bytes: write at most `cap` bytes to `buf`, set *written (0: the body is
 *  complete) and return 0; return non-zero to abort the transfer, which then fails with
 *  HC_ECALLBACK. Runs on the thread that calls hc_client_send. */
typedef int (*hc_read_cb)(void *userdata, uint8_t *buf, size_t cap, size_t *written);

/** Streams the body from `cb`: `len` bytes (sent with Content-Length; fewer is HC_ECALLBACK), or
 *  -1 when unknown (sent chunked). Borrowed: `userdata` must stay valid while a send runs.
 *  `content_type` may be NULL and is copied. */
HC_EXTERN hc_code hc_request_set_read_body(hc_request *request, hc_read_cb cb, void *userdata,
                                           int64_t len, const char *content_type);

/** The parts of a multipart/form-data body, sent through libcurl's mime API (libcurl writes the
 *  boundary and the Content-Type). */
typedef struct hc_multipart hc_multipart;

/** An empty multipart body. The caller owns the result and frees it with hc_multipart_free. */
HC_EXTERN hc_multipart *hc_multipart_new(void);

/** Frees the parts. Requests they were set on keep their own copy. */
HC_EXTERN void hc_multipart_free(hc_multipart *mp);

/** Adds a text field. A name with CR, LF or NUL gives HC_EINVALID_ARG. Both strings are copied. */
HC_EXTERN hc_code hc_multipart_add_field(hc_multipart *mp, const char *name, const char *value);

/** Adds a file part read from `path` while sending. `filename` (NULL: the path's last component)
 *  and `content_type` (NULL: guessed by libcurl from the extension, else
 *  application/octet-stream) are optional. A missing or unreadable file gives HC_EIO now; a
 *  file gone by the time of sending gives HC_EIO from hc_client_send, before connecting.
 *  All strings are copied; the file is read at each send. */
HC_EXTERN hc_code hc_multipart_add_file(hc_multipart *mp, const char *name, const char *path,
                                        const char *filename, const char *content_type);

/** Adds a part with `len` bytes of `data`, an optional `filename` and `content_type` (NULL: none).
 *  Everything is copied. */
HC_EXTERN hc_code hc_multipart_add_bytes(hc_multipart *mp, const char *name, const uint8_t *data,
                                         size_t len, const char *filename, const char *content_type);

/** Sets the body to the multipart parts. The parts are copied: `mp` may be changed or freed after. */
HC_EXTERN hc_code hc_request_set_multipart(hc_request *request, const hc_multipart *mp);

/* ------------------------------------------------------------------------------------------ */
/* JSON                                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* JSON is parsed with yajl as each chunk arrives: a malformed or oversized document fails at the
 * chunk holding the bad byte (HC_EDECODE, with the offset in the message and the first bytes of
 * the body, up to HC_JSON_ERROR_BODY_LIMIT, in hc_error_body). Form feed is not whitespace
 * (RFC 8259). Integers that fit int64 are HC_JSON_INT, other numbers HC_JSON_DOUBLE (a number
 * beyond double's range is HC_EDECODE), or HC_JSON_NUMBER text with HC_JSON_KEEP_NUMBER_TEXT. */

/** A JSON value. Values from a response or a callback are borrowed; only hc_json_parse gives one
 *  the caller owns. */
typedef struct hc_json hc_json;

/** Parse and handler options, copied by each handler or parse that uses them. */
typedef struct hc_json_options hc_json_options;

/** What a JSON value is (hc_json_type). */
typedef enum hc_json_kind {
    HC_JSON_INVALID = -1,               /**< Not a value: the handle was NULL. */
    HC_JSON_NULL = 0,                   /**< null */
    HC_JSON_BOOL = 1,                   /**< true or false: hc_json_bool */
    HC_JSON_INT = 2,                    /**< An integer that fits int64: hc_json_int64 */
    HC_JSON_DOUBLE = 3,                 /**< Any other number: hc_json_double */
    HC_JSON_NUMBER = 4,                 /**< A number kept as text: hc_json_number_text */
    HC_JSON_STRING = 5,                 /**< hc_json_string */
    HC_JSON_ARRAY = 6,                  /**< hc_json_array_length, hc_json_array_at */
    HC_JSON_OBJECT = 7                  /**< hc_json_object_size, hc_json_object_member_at */
} hc_json_kind;

/** Options for hc_json_options_set; booleans are 0 or 1. */
typedef enum hc_json_option {
    HC_JSON_REMOVE_NULLS = 1,           /**< Drop null-valued object members at every depth. Default 0. */
    HC_JSON_ALLOW_COMMENTS = 2,         /**< Accept comments. Default 0. */
    HC_JSON_ALLOW_MULTIPLE_VALUES = 3,  /**< Several top-level values (NDJSON); a tree is then an array of them. Default 0. */
    HC_JSON_MAX_DEPTH = 4,              /**< Deepest nesting accepted, at least 1. Default 512. */
    HC_JSON_MAX_SIZE = 5,               /**< Largest body in bytes (HC_ETOO_LARGE beyond); 0: no limit. Default 0. */
    HC_JSON_STRICT_UTF8 = 6,            /**< Reject invalid UTF-8 in strings (else U+FFFD). Default 1. */
    HC_JSON_KEEP_NUMBER_TEXT = 7,       /**< Keep every number as its text (HC_JSON_NUMBER). Default 0. */
    HC_JSON_ALLOW_EMPTY = 8,            /**< An empty body on any status gives no value, not HC_EDECODE. Default 0. */
    HC_JSON_ITEMS_LIMIT = 9,            /**< Items handlers: stop with success after this many values; 0: none. Default 0. */
    HC_JSON_ITEMS_STOP_WHEN_CLOSED = 10,/**< Items handlers: stop with success once no prefix can match again. Default 0. */
    HC_JSON_ITEMS_REQUIRE_PREFIX = 11,  /**< Items handlers: HC_EDECODE if a prefix never appears. Default 0. */
    HC_JSON_BATCH_BYTES = 12,           /**< Batches handler: deliver a batch once its text reaches this size. Default 65536. */
    HC_JSON_ALLOW_TRAILING_GARBAGE = 13,/**< Ignore what follows the first value. Default 0. */
    HC_JSON_ALLOW_PARTIAL_VALUES = 14,  /**< Accept a body that ends inside a value (a tree closes it). Default 0. */
    HC_JSON_ERROR_BODY_LIMIT = 15       /**< How many leading body bytes a decode error keeps. Default 65536. */
} hc_json_option;

/** Returned by an item or batch callback to stop the transfer early with success. */
#define HC_JSON_STOP (-1)

/** Called with each value found under a prefix, as soon as its last byte is parsed. `prefix_index`
 *  indexes the prefixes given to the handler; `value` is borrowed for the duration of the call.
 *  Return 0 to continue, HC_JSON_STOP to stop with success, anything else to abort with HC_ECALLBACK. */
typedef int (*hc_json_item_cb)(void *userdata, size_t prefix_index, const hc_json *value);

/** Called with a batch of values found under one prefix, as one JSON array text "[v1,v2,...]" of
 *  `count` values (`len` bytes, not NUL-terminated, borrowed for the duration of the call).
 *  Return as hc_json_item_cb. */
typedef int (*hc_json_batch_cb)(void *userdata, size_t prefix_index, const uint8_t *json, size_t len,
                                size_t count);

/** New options, all at their defaults. The caller owns the result and frees it with hc_json_options_free. */
HC_EXTERN hc_json_options *hc_json_options_new(void);

/** Frees options; handlers made from them keep their own copy. */
HC_EXTERN void hc_json_options_free(hc_json_options *opts);

/** Sets an option. HC_EINVALID_ARG for an unknown option or a value out of range. */
HC_EXTERN hc_code hc_json_options_set(hc_json_options *opts, hc_json_option option, int64_t value);

/** Reads an option's current value into *value. */
HC_EXTERN hc_code hc_json_options_get(const hc_json_options *opts, hc_json_option option, int64_t *value);

/** Parses the body into a tree while it arrives (read it with hc_response_json). `opts` may be
 *  NULL for the defaults. Accepts 200-299 and application/json, text/json, text/javascript,
 *  * / *+json (without the spaces); sends "Accept: application/json" unless the request sets one.
 *  The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_json_new(const hc_json_options *opts);

/** Path streaming: calls `cb` with each value under one of `count` ijson prefixes ("results.item":
 *  each element of the array at member "results"; "" the top-level value), keeping one value in
 *  memory at a time. Prefixes must not lie inside one another (at most 64). `userdata` must stay
 *  valid while a send runs. Acceptance as hc_handler_json_new. The caller owns the result and
 *  frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_json_items_new(const char *const *prefixes, size_t count,
                                                const hc_json_options *opts, hc_json_item_cb cb,
                                                void *userdata);

/** Path streaming in batches (one call per batch, for bindings where each call is costly): values
 *  are written as JSON array texts without building trees, numbers keep their text, and a batch is
 *  delivered at HC_JSON_BATCH_BYTES, when the prefix changes, and at the end of each received
 *  chunk (the values complete by then; one still open starts the next batch). Values nested deeper than 127 levels fail with HC_EINVALID_ARG. Otherwise as
 *  hc_handler_json_items_new. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_json_batches_new(const char *const *prefixes, size_t count,
                                                  const hc_json_options *opts, hc_json_batch_cb cb,
                                                  void *userdata);



/** The tree of a response from hc_handler_json_new. NULL when the body was empty (the
 *  handler's empty statuses and methods, by default 204, 205 and HEAD; 304; or
 *  HC_JSON_ALLOW_EMPTY), which is not a failure: hc_error_last() is left as it was. NULL with
 *  HC_EINVALID_ARG for another handler's response. Borrowed: valid until the response is freed. */
HC_EXTERN const hc_json *hc_response_json(const hc_response *response);

/** For a response from an items or batches handler: how many values were delivered, and whether
 *  it stopped early (1) or read the whole body (0). Either pointer may be NULL. */
HC_EXTERN hc_code hc_response_json_items(const hc_response *response, size_t *count, int *stopped_early);


/** Parses `len` bytes of JSON text (`opts` may be NULL). On HC_OK, *out is a value the caller
 *  owns and frees with hc_json_free; on failure *out is NULL. */
HC_EXTERN hc_code hc_json_parse(const uint8_t *data, size_t len, const hc_json_options *opts, hc_json **out);

/** Frees a value from hc_json_parse (and every value borrowed from it). Does nothing for NULL or
 *  for a borrowed value. */
HC_EXTERN void hc_json_free(hc_json *value);

/** The value's kind; HC_JSON_INVALID if value is NULL. */
HC_EXTERN hc_json_kind hc_json_type(const hc_json *value);

/** The value at a dot-separated key path ("user.followers.0.name": member names, and decimal
 *  indices in arrays; "" is the value itself), or NULL with HC_EINVALID_ARG when there is none.
 *  Borrowed: valid as long as `value`. */
HC_EXTERN const hc_json *hc_json_get(const hc_json *value, const char *key_path);

/** As hc_json_get with the path given as `count` components (for names that contain dots).
 *  Borrowed: valid as long as `value`. */
HC_EXTERN const hc_json *hc_json_get_path(const hc_json *value, const char *const *components, size_t count);

/** The number of elements of an array (0 for anything else, NULL included). */
HC_EXTERN size_t hc_json_array_length(const hc_json *value);

/** Element `index` of an array, or NULL with HC_EINVALID_ARG. Borrowed: valid as long as `value`. */
HC_EXTERN const hc_json *hc_json_array_at(const hc_json *value, size_t index);

/** The number of members of an object, duplicates included (0 for anything else, NULL
 *  included). */
HC_EXTERN size_t hc_json_object_size(const hc_json *value);

/** Member `index` of an object, in document order: returns its value and sets *key (NUL-terminated)
 *  and *key_len (its length; keys may contain NUL). `key` and `key_len` may be NULL. NULL with
 *  HC_EINVALID_ARG when out of range. Borrowed (value and key): valid as long as `value`. */
HC_EXTERN const hc_json *hc_json_object_member_at(const hc_json *value, size_t index, const char **key,
                                                  size_t *key_len);

/** A string's UTF-8 bytes: sets *data (NUL-terminated for convenience) and *len (strings may
 *  contain NUL). HC_EINVALID_ARG if not a string. Borrowed: valid as long as `value`. */
HC_EXTERN hc_code hc_json_string(const hc_json *value, const char **data, size_t *len);

/** A number as int64: integers, and doubles or number texts holding an exact integer in range.
 *  HC_EINVALID_ARG otherwise. */
HC_EXTERN hc_code hc_json_int64(const hc_json *value, int64_t *out);

/** A number as double (integers converted, number texts parsed). HC_EINVALID_ARG if not a number. */
HC_EXTERN hc_code hc_json_double(const hc_json *value, double *out);

/** A number's text: the kept text, or the integer, or the shortest text of the double. NULL with
 *  HC_EINVALID_ARG if not a number. Borrowed: valid as long as `value`. */
HC_EXTERN const char *hc_json_number_text(const hc_json *value);

/** A boolean as 1 or 0 in *out. HC_EINVALID_ARG if not a boolean. */
HC_EXTERN hc_code hc_json_bool(const hc_json *value, int *out);

/** The value as JSON text (compact, or indented when `pretty`), in *data and *len (not
 *  NUL-terminated). HC_EINVALID_ARG for nesting deeper than 127 (yajl_gen's limit). The caller
 *  owns *data and frees it with hc_buffer_free (it is also NUL-terminated). */
HC_EXTERN hc_code hc_json_serialize(const hc_json *value, int pretty, uint8_t **data, size_t *len);

/** Sets the request body to the JSON text of `value`, with Content-Type application/json (unless
 *  a header sets one). The value is only read: the caller keeps it. */
HC_EXTERN hc_code hc_request_set_json_value(hc_request *request, const hc_json *value);

/* Building JSON from C values, event by event (as yajl_gen): values, begin/end of arrays and
 * objects, and in an object a key before each value. Misuse (a value without its key, an
 * unbalanced end, a second top-level value, NaN or infinity, invalid UTF-8) is HC_EINVALID_ARG
 * and leaves the builder as it was. Then hc_json_builder_finish gives the value, for
 * hc_request_set_json_value, hc_json_serialize or the getters above. */
typedef struct hc_json_builder hc_json_builder;

/** An empty builder. The caller owns the result and frees it with hc_json_builder_free. */
HC_EXTERN hc_json_builder *hc_json_builder_new(void);

HC_EXTERN void hc_json_builder_free(hc_json_builder *builder);

HC_EXTERN hc_code hc_json_builder_null(hc_json_builder *builder);
HC_EXTERN hc_code hc_json_builder_bool(hc_json_builder *builder, int value);
HC_EXTERN hc_code hc_json_builder_int64(hc_json_builder *builder, int64_t value);
/** A finite double (written as its shortest round-tripping text). */
HC_EXTERN hc_code hc_json_builder_double(hc_json_builder *builder, double value);
/** A number written exactly as `text` (copied), which must follow JSON's number grammar. */
HC_EXTERN hc_code hc_json_builder_number_text(hc_json_builder *builder, const char *text);
/** A string of `len` bytes of UTF-8 at `data` (copied; NUL allowed inside). */
HC_EXTERN hc_code hc_json_builder_string(hc_json_builder *builder, const char *data, size_t len);
/** The next member's name in the innermost object: `len` bytes of UTF-8 (copied). */
HC_EXTERN hc_code hc_json_builder_key(hc_json_builder *builder, const char *data, size_t len);
HC_EXTERN hc_code hc_json_builder_begin_array(hc_json_builder *builder);
HC_EXTERN hc_code hc_json_builder_end_array(hc_json_builder *builder);
HC_EXTERN hc_code hc_json_builder_begin_object(hc_json_builder *builder);
HC_EXTERN hc_code hc_json_builder_end_object(hc_json_builder *builder);

/** The value built (every array and object closed). On HC_OK, *out is a value the caller owns
 *  and frees with hc_json_free, and the builder is empty again; on failure *out is NULL. */
HC_EXTERN hc_code hc_json_builder_finish(hc_json_builder *builder, hc_json **out);

/* ------------------------------------------------------------------------------------------ */
/* Decoded images                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* hc_handler_image_decode_new decodes PNG (libpng's progressive reader), JPEG (libjpeg-turbo,
 * suspending source), WebP (libwebp's incremental decoder) and GIF (giflib, first frame; GIF is
 * buffered, giflib has no push API) while the body arrives: the pixels are ready when the last
 * byte is. The format is sniffed from the bytes; a declared image type that disagrees is
 * HC_EDECODE. Pixels are 8 bits per channel, row-major, tightly packed (stride = width x
 * channels); 16-bit channels keep their high byte; gray from colour is Rec.601 luma as Pillow
 * computes it. A header claiming more pixels than the cap fails with HC_ETOO_LARGE before any
 * pixel memory is taken; truncated, corrupt or lying images fail with HC_EDECODE. The encoded
 * body is not kept unless HC_IMAGE_KEEP_ENCODED asks. BMP is recognised but not decoded
 * (HC_EDECODE). */

/** Decode options, copied into each handler made from them. */
typedef struct hc_image_options hc_image_options;

/** The pixel layouts (the value is the channel count). */
typedef enum hc_image_mode {
    HC_IMAGE_MODE_L = 1,                /**< Gray (Rec.601 luma of colour images). */
    HC_IMAGE_MODE_RGB = 3,              /**< Red, green, blue; alpha dropped, not composited. */
    HC_IMAGE_MODE_RGBA = 4              /**< Red, green, blue, alpha (default); 255 when opaque. */
} hc_image_mode;

/** The options of hc_image_options_set / _get. */
typedef enum hc_image_option {
    HC_IMAGE_MODE = 1,                  /**< An hc_image_mode. Default HC_IMAGE_MODE_RGBA. */
    HC_IMAGE_MAX_PIXELS = 2,            /**< Largest width x height decoded (>= 1). Default 100000000. */
    HC_IMAGE_APPLY_ORIENTATION = 3,     /**< Non-zero: rotate/flip JPEGs by their EXIF orientation
                                             (width and height swap for 5-8). Default 0. */
    HC_IMAGE_KEEP_ENCODED = 4           /**< Non-zero: keep the encoded body too
                                             (hc_response_image_encoded). Default 0. */
} hc_image_option;

/** Options with every default. The caller owns the result and frees it with hc_image_options_free. */
HC_EXTERN hc_image_options *hc_image_options_new(void);

/** Frees the options. Handlers made from them keep their own copy. NULL is a no-op. */
HC_EXTERN void hc_image_options_free(hc_image_options *opts);

/** Sets one option; an unknown option or a value out of range is HC_EINVALID_ARG. */
HC_EXTERN hc_code hc_image_options_set(hc_image_options *opts, hc_image_option option, int64_t value);

/** Reads one option into *value. */
HC_EXTERN hc_code hc_image_options_get(const hc_image_options *opts, hc_image_option option, int64_t *value);

/** Called with output rows [first_row, first_row + row_count) once they are decoded, at most
 *  once per chunk received plus once at the end (interlaced PNG: as passes update rows, then
 *  every row; progressive JPEG: once the last scan is in; an applied orientation: every row at
 *  the end). Runs on the transfer's thread. Return 0 to continue, or an hc_code to stop the
 *  transfer (HC_ECALLBACK when in doubt). */
typedef int (*hc_image_rows_cb)(void *userdata, uint32_t first_row, uint32_t row_count);

/** Sets (or with NULL clears) the rows callback. Borrowed: `userdata` must stay valid while
 *  requests with handlers made from these options run. */
HC_EXTERN hc_code hc_image_options_set_rows_cb(hc_image_options *opts, hc_image_rows_cb cb, void *userdata);

/** Asks `allocate` for the pixel memory (width x height x channels bytes) once the header is
 *  read, so hc_response_image_pixels returns that very memory; NULL from `allocate` means the
 *  library's own. `release` (may be NULL) is called when the response no longer uses it (on
 *  hc_response_free, or when the transfer fails). `release` and `userdata` must stay valid until
 *  every response filled this way is freed. NULL `allocate` restores the default. */
HC_EXTERN hc_code hc_image_options_set_allocator(hc_image_options *opts, hc_alloc_cb allocate,
                                                 hc_release_cb release, void *userdata);

/** A handler decoding images to pixels with `opts` (NULL: the defaults), read with
 *  hc_response_image_attr and hc_response_image_pixels. hc_handler_set_max_size limits the
 *  encoded body (HC_ETOO_LARGE). Accepts 200-299, image/ types; an allowed empty response
 *  (204, HEAD) has no image. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_image_decode_new(const hc_image_options *opts);

/** The attributes of hc_response_image_attr. */
typedef enum hc_image_attr {
    HC_IMAGE_ATTR_FORMAT = 1,           /**< An hc_image_format (HC_IMAGE_NONE: empty response). */
    HC_IMAGE_ATTR_WIDTH = 2,            /**< Pixels per row (after an applied orientation). */
    HC_IMAGE_ATTR_HEIGHT = 3,           /**< Rows. */
    HC_IMAGE_ATTR_CHANNELS = 4,         /**< 4, 3 or 1, as the hc_image_mode. */
    HC_IMAGE_ATTR_STRIDE = 5,           /**< Bytes per row: width x channels. */
    HC_IMAGE_ATTR_HAS_ALPHA = 6,        /**< 1 if the source had alpha or a transparent colour. */
    HC_IMAGE_ATTR_ORIENTATION = 7,      /**< The JPEG's EXIF orientation 1-8 (1 when absent). */
    HC_IMAGE_ATTR_FRAME_COUNT = 8       /**< Frames in the file (GIF); 1 for other formats. */
} hc_image_attr;

/** Reads one attribute of a decoded image into *value (0 for every attribute of an allowed
 *  empty response). HC_EINVALID_ARG for other handlers or an unknown attribute. */
HC_EXTERN hc_code hc_response_image_attr(const hc_response *response, hc_image_attr attr, int64_t *value);

/** The pixels: sets *data and *len (width x height x channels bytes; NULL and 0 for an empty
 *  response). Borrowed: valid until the response is freed. Not NUL-terminated. */
HC_EXTERN hc_code hc_response_image_pixels(const hc_response *response, const uint8_t **data, size_t *len);

/** The encoded body, when HC_IMAGE_KEEP_ENCODED was set (else HC_EINVALID_ARG). Borrowed: valid
 *  until the response is freed. */
HC_EXTERN hc_code hc_response_image_encoded(const hc_response *response, const uint8_t **data, size_t *len);

/** Encodes 8-bit pixels as PNG with libpng: `channels` 1 (gray), 2 (gray + alpha), 3 (RGB) or 4
 *  (RGBA), rows `stride` bytes apart (e.g. a decoded image's pixels, to save a copy). An invalid
 *  layout is HC_EINVALID_ARG. The caller owns *out and frees it with hc_buffer_free. */
HC_EXTERN hc_code hc_image_encode_png(const uint8_t *pixels, uint32_t width, uint32_t height, int channels,
                                      size_t stride, uint8_t **out, size_t *len);

/* ------------------------------------------------------------------------------------------ */
/* Property lists                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* Property lists, XML or binary (sniffed from the first bytes: "bplist00" is binary), are read
 * with libplist. A plist cannot be parsed chunk by chunk (the binary index is at its end), so
 * the body is kept up to HC_PLIST_MAX_SIZE, then checked for depth, value count and
 * self-reference before libplist reads it. Malformed input is HC_EDECODE (libplist gives no
 * position; hc_error_body holds the first bytes); too many values or bytes HC_ETOO_LARGE.
 * libplist's XML parser reads no DTD and resolves no entity (a document declaring one is
 * HC_EDECODE); it never opens a file or a socket. libplist 2.2 handles UIDs up to 2^32-1. */

/** A property-list value. Values from a response are borrowed; hc_plist_parse and
 *  hc_plist_builder_finish give ones the caller owns. */
typedef struct hc_plist hc_plist;

/** Parse and handler options, copied by each handler or parse that uses them. */
typedef struct hc_plist_options hc_plist_options;

/** What a plist value is (hc_plist_type). */
typedef enum hc_plist_kind {
    HC_PLIST_INVALID = -1,              /**< Not a value: the handle was NULL. */
    HC_PLIST_DICT = 0,                  /**< hc_plist_dict_size, hc_plist_dict_member_at */
    HC_PLIST_ARRAY = 1,                 /**< hc_plist_array_length, hc_plist_array_at */
    HC_PLIST_STRING = 2,                /**< hc_plist_string */
    HC_PLIST_INT = 3,                   /**< An integer that fits int64: hc_plist_int64 */
    HC_PLIST_UINT = 4,                  /**< An integer above INT64_MAX: hc_plist_uint64 */
    HC_PLIST_REAL = 5,                  /**< hc_plist_real */
    HC_PLIST_BOOL = 6,                  /**< hc_plist_bool */
    HC_PLIST_DATE = 7,                  /**< hc_plist_date */
    HC_PLIST_DATA = 8,                  /**< hc_plist_data */
    HC_PLIST_UID = 9                    /**< A keyed archiver's object reference: hc_plist_uid */
} hc_plist_kind;

/** The two encodings of a property list. */
typedef enum hc_plist_format {
    HC_PLIST_XML = 0,                   /**< XML, UTF-8; Content-Type application/x-plist. */
    HC_PLIST_BINARY = 1                 /**< bplist00; Content-Type application/x-bplist. */
} hc_plist_format;

/** Options for hc_plist_options_set. */
typedef enum hc_plist_option {
    HC_PLIST_MAX_DEPTH = 1,             /**< Deepest nesting of arrays and dictionaries, 1 to 2048. Default 512. */
    HC_PLIST_MAX_SIZE = 2,              /**< Largest document in bytes (HC_ETOO_LARGE beyond), 1 to 2^32-1. Default 67108864 (64 MiB). */
    HC_PLIST_MAX_OBJECTS = 3,           /**< Most values (keys and elements; shared binary objects once per reference). Default 10000000. */
    HC_PLIST_ALLOW_EMPTY = 4,           /**< An empty body on any status gives no value, not HC_EDECODE. Default 0. */
    HC_PLIST_ERROR_BODY_LIMIT = 5       /**< How many leading body bytes a decode error keeps. Default 65536. */
} hc_plist_option;

/** New options, all at their defaults. The caller owns the result and frees it with hc_plist_options_free. */
HC_EXTERN hc_plist_options *hc_plist_options_new(void);

/** Frees options; handlers made from them keep their own copy. */
HC_EXTERN void hc_plist_options_free(hc_plist_options *opts);

/** Sets an option. HC_EINVALID_ARG for an unknown option or a value out of range. */
HC_EXTERN hc_code hc_plist_options_set(hc_plist_options *opts, hc_plist_option option, int64_t value);

/** Reads an option's current value into *value. */
HC_EXTERN hc_code hc_plist_options_get(const hc_plist_options *opts, hc_plist_option option, int64_t *value);

/** Keeps the body and parses it as a property list (read it with hc_response_plist). `opts`
 *  may be NULL for the defaults; hc_handler_set_max_size overrides HC_PLIST_MAX_SIZE. Accepts
 *  200-299 and application/x-plist, application/x-bplist, application/plist, text/xml,
 *  application/xml; sends an Accept header naming them unless the request sets one. The caller
 *  owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_plist_new(const hc_plist_options *opts);

/** The value of a response from hc_handler_plist_new. NULL when the body was empty (the
 *  handler's empty statuses and methods, 304, or HC_PLIST_ALLOW_EMPTY), which is not a
 *  failure: hc_error_last() is left as it was. NULL with HC_EINVALID_ARG for another handler's
 *  response. Borrowed: valid until the response is freed. */
HC_EXTERN const hc_plist *hc_response_plist(const hc_response *response);

/** Parses `len` bytes of a property list, XML or binary (`opts` may be NULL). On HC_OK, *out is
 *  a value the caller owns and frees with hc_plist_free; on failure *out is NULL. */
HC_EXTERN hc_code hc_plist_parse(const uint8_t *data, size_t len, const hc_plist_options *opts, hc_plist **out);

/** Frees a value the caller owns (and every value borrowed from it). Does nothing for NULL or
 *  for a borrowed value. */
HC_EXTERN void hc_plist_free(hc_plist *value);

/** The value's kind; HC_PLIST_INVALID if value is NULL. */
HC_EXTERN hc_plist_kind hc_plist_type(const hc_plist *value);

/** The value at a dot-separated key path ("items.0.name": keys, and decimal indices in arrays;
 *  "" is the value itself), or NULL with HC_EINVALID_ARG. Borrowed: valid as long as `value`. */
HC_EXTERN const hc_plist *hc_plist_get(const hc_plist *value, const char *key_path);

/** The number of elements of an array (0 for anything else). */
HC_EXTERN size_t hc_plist_array_length(const hc_plist *value);

/** Element `index` of an array, or NULL with HC_EINVALID_ARG. Borrowed: valid as long as `value`. */
HC_EXTERN const hc_plist *hc_plist_array_at(const hc_plist *value, size_t index);

/** The number of members of a dictionary (0 for anything else). */
HC_EXTERN size_t hc_plist_dict_size(const hc_plist *value);

/** Member `index` of a dictionary, in document order: returns its value and sets *key
 *  (NUL-terminated) and *key_len; either may be NULL. NULL with HC_EINVALID_ARG when out of
 *  range. Borrowed (value and key): valid as long as `value`. */
HC_EXTERN const hc_plist *hc_plist_dict_member_at(const hc_plist *value, size_t index, const char **key,
                                                  size_t *key_len);

/** A string's UTF-8 bytes in *data (NUL-terminated for convenience) and *len. HC_EINVALID_ARG
 *  if not a string. Borrowed: valid as long as `value`. */
HC_EXTERN hc_code hc_plist_string(const hc_plist *value, const char **data, size_t *len);

/** An integer that fits int64 in *out. HC_EINVALID_ARG otherwise (HC_PLIST_UINT included). */
HC_EXTERN hc_code hc_plist_int64(const hc_plist *value, int64_t *out);

/** A non-negative integer (HC_PLIST_INT >= 0 or HC_PLIST_UINT) in *out. HC_EINVALID_ARG otherwise. */
HC_EXTERN hc_code hc_plist_uint64(const hc_plist *value, uint64_t *out);

/** A real (or an integer, converted) in *out. HC_EINVALID_ARG otherwise. */
HC_EXTERN hc_code hc_plist_real(const hc_plist *value, double *out);

/** A boolean as 1 or 0 in *out. HC_EINVALID_ARG if not a boolean. */
HC_EXTERN hc_code hc_plist_bool(const hc_plist *value, int *out);

/** A date as seconds since 1970-01-01 00:00:00 UTC (negative before) in *out. HC_EINVALID_ARG
 *  if not a date. */
HC_EXTERN hc_code hc_plist_date(const hc_plist *value, double *out);

/** Data bytes in *data and *len (not NUL-terminated; *data may be NULL when *len is 0).
 *  HC_EINVALID_ARG if not data. Borrowed: valid as long as `value`. */
HC_EXTERN hc_code hc_plist_data(const hc_plist *value, const uint8_t **data, size_t *len);

/** A UID in *out. HC_EINVALID_ARG if not a UID. */
HC_EXTERN hc_code hc_plist_uid(const hc_plist *value, uint64_t *out);

/** The value as a document in `format`, in *data and *len. XML dates are whole seconds.
 *  HC_EINVALID_ARG for a string holding NUL, control characters in XML text, or a UID above
 *  2^32-1. The caller owns *data and frees it with hc_buffer_free. */
HC_EXTERN hc_code hc_plist_serialize(const hc_plist *value, hc_plist_format format, uint8_t **data, size_t *len);

/** Sets the request body to `value` as a document in `format`, with Content-Type
 *  application/x-plist (XML) or application/x-bplist (binary) unless a header sets one.
 *  Errors as hc_plist_serialize. The value is only read: the caller keeps it. */
HC_EXTERN hc_code hc_request_set_plist_value(hc_request *request, const hc_plist *value, hc_plist_format format);

/* Building a plist from C values, event by event: values, begin/end of arrays and dictionaries,
 * and in a dictionary a key before each value. Misuse (a value without its key, an unbalanced
 * end, a second top-level value, invalid UTF-8) is HC_EINVALID_ARG and leaves the builder as
 * it was. hc_plist_builder_finish gives the value. */
typedef struct hc_plist_builder hc_plist_builder;

/** An empty builder. The caller owns the result and frees it with hc_plist_builder_free. */
HC_EXTERN hc_plist_builder *hc_plist_builder_new(void);

HC_EXTERN void hc_plist_builder_free(hc_plist_builder *builder);

/** A string of `len` bytes of UTF-8 at `data` (copied). */
HC_EXTERN hc_code hc_plist_builder_string(hc_plist_builder *builder, const char *data, size_t len);
/** The next member's key in the innermost dictionary: `len` bytes of UTF-8 (copied). */
HC_EXTERN hc_code hc_plist_builder_key(hc_plist_builder *builder, const char *data, size_t len);
HC_EXTERN hc_code hc_plist_builder_int64(hc_plist_builder *builder, int64_t value);
HC_EXTERN hc_code hc_plist_builder_uint64(hc_plist_builder *builder, uint64_t value);
HC_EXTERN hc_code hc_plist_builder_real(hc_plist_builder *builder, double value);
HC_EXTERN hc_code hc_plist_builder_bool(hc_plist_builder *builder, int value);
/** A date, as finite seconds since 1970-01-01 00:00:00 UTC. */
HC_EXTERN hc_code hc_plist_builder_date(hc_plist_builder *builder, double seconds_since_1970);
/** `len` bytes of data at `data` (copied). */
HC_EXTERN hc_code hc_plist_builder_data(hc_plist_builder *builder, const uint8_t *data, size_t len);
HC_EXTERN hc_code hc_plist_builder_uid(hc_plist_builder *builder, uint64_t value);
HC_EXTERN hc_code hc_plist_builder_begin_array(hc_plist_builder *builder);
HC_EXTERN hc_code hc_plist_builder_end_array(hc_plist_builder *builder);
HC_EXTERN hc_code hc_plist_builder_begin_dict(hc_plist_builder *builder);
HC_EXTERN hc_code hc_plist_builder_end_dict(hc_plist_builder *builder);

/** The value built (every container closed). On HC_OK, *out is a value the caller owns and
 *  frees with hc_plist_free, and the builder is empty again; on failure *out is NULL. */
HC_EXTERN hc_code hc_plist_builder_finish(hc_plist_builder *builder, hc_plist **out);

/* ------------------------------------------------------------------------------------------ */
/* Schemas: JSON Schema draft 2020-12 validation                                               */
/* ------------------------------------------------------------------------------------------ */

/* A schema validates JSON values: responses (hc_handler_json_set_schema), request bodies
 * (hc_request_set_json_body_schema) or any value (hc_schema_validate). Every keyword of the
 * 2020-12 core, applicator, unevaluated and validation vocabularies; `format` is an annotation
 * unless HC_SCHEMA assert-format is set. The 2020-12 meta-schemas are built in; other documents
 * that `$ref` names are given with hc_schema_options_add_remote: nothing is ever fetched.
 * `pattern` uses PCRE2 configured close to ECMA-262 (README: differences). A failed validation
 * is HC_EDECODE (HC_EINVALID_ARG for a request body) whose hc_error_sub_kind is "schema"; the
 * violations are read with hc_error_schema_count and the hc_error_schema_* getters. */

/** A compiled schema: immutable, usable from several threads at once. */
typedef struct hc_schema hc_schema;
/** Options for making schemas: remote documents and flags. */
typedef struct hc_schema_options hc_schema_options;

/** Report every violation instead of the first only (hc_schema_validate, hc_handler_json_set_schema,
 *  hc_request_set_json_body_schema and their plist counterparts). */
#define HC_SCHEMA_ALL_ERRORS 1
/** For a JSON items or JSON lines handler: skip invalid items or records instead of failing the transfer. */
#define HC_SCHEMA_SKIP_INVALID 2

/** New options: no remotes, format not asserted. The caller owns the result and frees it with
 *  hc_schema_options_free. */
HC_EXTERN hc_schema_options *hc_schema_options_new(void);

/** Frees options (schemas made with them keep their own copy). Does nothing for NULL. */
HC_EXTERN void hc_schema_options_free(hc_schema_options *opts);

/** Adds a remote document: `$ref`s to `uri` resolve to the JSON text `data` (`len` bytes, copied).
 *  HC_EINVALID_ARG when it is not JSON. */
HC_EXTERN hc_code hc_schema_options_add_remote(hc_schema_options *opts, const char *uri,
                                               const uint8_t *data, size_t len);

/** Declares that the caller transforms values of `format` (copied) itself: hc_schema_format_annotations
 *  and hc_response_json_format_annotations then list them too (date-time, date, uri and uuid are
 *  listed without this). */
HC_EXTERN hc_code hc_schema_options_add_transformer(hc_schema_options *opts, const char *format);

/** `format` as an assertion (1) or an annotation only (0, the default). */
HC_EXTERN hc_code hc_schema_options_set_assert_format(hc_schema_options *opts, int on);

/** Compiles the schema in the JSON text `data` (`opts` may be NULL). NULL with HC_EINVALID_ARG for
 *  text that is not JSON, an invalid schema, or a `$ref` that names nothing known. The caller owns
 *  the result and frees it with hc_schema_free. */
HC_EXTERN hc_schema *hc_schema_new_from_json(const uint8_t *data, size_t len, const hc_schema_options *opts);

/** Frees a schema (handlers and requests using it keep it alive). Does nothing for NULL. */
HC_EXTERN void hc_schema_free(hc_schema *schema);

/** Validates the JSON text `data`: HC_OK when valid, HC_EDECODE when not (sub-kind "schema", or
 *  none when the text is not JSON). `flags`: 0 or HC_SCHEMA_ALL_ERRORS. Nothing is kept. */
HC_EXTERN hc_code hc_schema_validate(const hc_schema *schema, const uint8_t *data, size_t len, int flags);

/** Validates a JSON value (borrowed or parsed): as hc_schema_validate. The value is only read. */
HC_EXTERN hc_code hc_schema_validate_json(const hc_schema *schema, const hc_json *value, int flags);

/** Validates what a JSON tree handler (hc_handler_json_new) produces as the tree is built (each
 *  element of a top-level array against the root's items / prefixItems as soon as it is complete,
 *  failing the transfer at the first invalid one with that element's violations; the rest of the
 *  schema once the tree is complete), each item of a JSON items handler (hc_handler_json_items_new) before its callback
 *  sees it, or each record of a JSON lines handler (hc_handler_json_lines_new; its value at the
 *  path, if one is set). An invalid body fails the transfer with HC_EDECODE (sub-kind "schema";
 *  status, headers and the body's first bytes on the error); an invalid item or record fails it
 *  too (a record's error has its hc_error_record_index and hc_error_offset), or is skipped with
 *  HC_SCHEMA_SKIP_INVALID (a record then goes to the handler's skip callback). NULL `schema` removes it. The handler keeps its own reference to
 *  the schema: the caller may free it. HC_EINVALID_ARG for other handlers. */
HC_EXTERN hc_code hc_handler_json_set_schema(hc_handler *handler, const hc_schema *schema, int flags);

/** Validates the JSON text `data` against `schema`, then sets it as the request body (as
 *  hc_request_set_json_body). When invalid: HC_EINVALID_ARG with sub-kind "schema", and the
 *  request is unchanged, so nothing is sent. `data` is copied. */
HC_EXTERN hc_code hc_request_set_json_body_schema(hc_request *request, const uint8_t *data, size_t len,
                                                  const hc_schema *schema, int flags);

/* Property lists. The same schemas validate plists (hc_handler_plist_set_schema,
 * hc_request_set_plist_value_schema, hc_schema_validate_plist), which the validator sees as JSON:
 * dictionary -> object, array, string, integer (UID too), real -> number, boolean; a date is a
 * string holding its RFC 3339 date-time in UTC ("2024-05-01T12:00:00Z"), so "type": "string",
 * "format": "date-time" matches it; data is a string holding its base64 text, and in a plist
 * "contentEncoding": "base64" asserts that the value is data (a plist string there fails with
 * keyword "contentEncoding"; for JSON documents contentEncoding stays an annotation). Schemas may
 * be written as plists too (hc_schema_new_from_plist). */

/** Compiles the schema in the property list `data` (XML or binary; dates and data become strings
 *  as above; `opts` may be NULL). NULL with HC_EINVALID_ARG for bytes that are not a plist, an
 *  invalid schema, or a `$ref` that names nothing known. The caller owns the result and frees it
 *  with hc_schema_free. */
HC_EXTERN hc_schema *hc_schema_new_from_plist(const uint8_t *data, size_t len, const hc_schema_options *opts);

/** Validates a plist value (borrowed or parsed): HC_OK when valid, HC_EDECODE with sub-kind
 *  "schema" when not. `flags`: 0 or HC_SCHEMA_ALL_ERRORS. The value is only read. */
HC_EXTERN hc_code hc_schema_validate_plist(const hc_schema *schema, const hc_plist *value, int flags);

/** Validates what a plist handler (hc_handler_plist_new) parses before the response carries it:
 *  an invalid body fails the transfer with HC_EDECODE (sub-kind "schema"; status, headers and the
 *  body's first bytes on the error). `flags`: 0 or HC_SCHEMA_ALL_ERRORS. NULL `schema` removes it.
 *  The handler keeps its own reference to the schema: the caller may free it. HC_EINVALID_ARG for
 *  other handlers. */
HC_EXTERN hc_code hc_handler_plist_set_schema(hc_handler *handler, const hc_schema *schema, int flags);

/** Validates `value` against `schema`, then sets it as the request body in `format` (as
 *  hc_request_set_plist_value). When invalid: HC_EINVALID_ARG with sub-kind "schema", and the
 *  request is unchanged, so nothing is sent. The value is only read: the caller keeps it. */
HC_EXTERN hc_code hc_request_set_plist_value_schema(hc_request *request, const hc_plist *value,
                                                    hc_plist_format format, const hc_schema *schema, int flags);

/** The format annotations of a plist value, as hc_schema_format_annotations writes them (a date
 *  under "date-time" is listed). HC_EDECODE when the value is not valid under the schema. The
 *  caller owns *out and frees it with hc_buffer_free. */
HC_EXTERN hc_code hc_schema_plist_format_annotations(const hc_schema *schema, const hc_plist *value,
                                                     uint8_t **out, size_t *out_len);

/* Value transformers. After validation, the strings whose (passing) subschema has a `format`
 * with a transformer (built in: date-time, date, uri, uuid) are listed with their location, so
 * that each front turns them into its own typed values; C reads date-times with
 * hc_schema_date_time. */

/** The format annotations of the JSON text `data` as JSON text `[["/json/pointer","format"],...]`
 *  in *out and *out_len (`[]` when none). HC_EDECODE when `data` is not valid under the schema.
 *  The caller owns *out and frees it with hc_buffer_free. */
HC_EXTERN hc_code hc_schema_format_annotations(const hc_schema *schema, const uint8_t *data, size_t len,
                                               uint8_t **out, size_t *out_len);

/** The format annotations of a response from hc_handler_json_pymarshal_new with a schema, as
 *  hc_schema_format_annotations writes them; *data NULL and *len 0 when there are none. Borrowed:
 *  valid until the response is freed. Not NUL-terminated. */
HC_EXTERN hc_code hc_response_json_format_annotations(const hc_response *response, const uint8_t **data,
                                                      size_t *len);

/** Reads an RFC 3339 date-time: seconds since 1970-01-01T00:00:00Z (a leap second counts as the
 *  second before), the nanoseconds and the offset from UTC in minutes, each pointer optional.
 *  HC_EINVALID_ARG when `text` is not a date-time. */
HC_EXTERN hc_code hc_schema_date_time(const char *text, int64_t *seconds, int32_t *nanosecond,
                                      int32_t *offset_minutes);

/* Transformers of your own, in C. Register a decode callback (text -> your value) and optionally
 * an encode callback (your value -> text) by format name; after validation, hc_schema_transform
 * runs them on every scalar (string, number, boolean, null) whose passing subschema has that
 * format (`{"type": "integer", "format": "cents"}` as well as strings), and hc_schema_encode
 * writes a value back for a request body. The built-in transformers take strings only. The callbacks may run on any thread using the schema,
 * several at once; `userdata` must stay valid as long as the schemas made with the options and
 * the hc_schema_values they produce. */

/** Text -> value: `text` is NUL-terminated, `len` bytes of UTF-8: a string's own text, or the JSON
 *  text of a number, `true`, `false` or `null` (with hc_schema_options_set_transformer_json_cb,
 *  the JSON text of any scalar: a string comes quoted). Return your value, or NULL to refuse the
 *  text (the transform fails with HC_ECALLBACK). */
typedef void *(*hc_schema_decode_cb)(void *userdata, const char *text, size_t len);
/** Value -> text: return a NUL-terminated string allocated with malloc (the library frees it with
 *  free), or NULL to refuse the value (HC_EINVALID_ARG). The text is a JSON string's contents;
 *  with hc_schema_options_set_transformer_json_cb, JSON text of any value (`1999`, `true`,
 *  `"x"`), which a body built with it is validated against like the rest. */
typedef char *(*hc_schema_encode_cb)(void *userdata, const void *value);
/** Frees a value your decode callback returned. */
typedef void (*hc_schema_value_free_cb)(void *userdata, void *value);

/** Registers (or replaces, built-in ones included) the transformer of `format` (copied) for the
 *  schemas made with these options. `decode` is required; `encode` and `free_value` may be NULL. */
HC_EXTERN hc_code hc_schema_options_set_transformer_cb(hc_schema_options *opts, const char *format,
                                                       hc_schema_decode_cb decode, hc_schema_encode_cb encode,
                                                       hc_schema_value_free_cb free_value, void *userdata);

/** As hc_schema_options_set_transformer_cb, the callbacks speaking JSON text both ways: `decode`
 *  gets the scalar's JSON text (strings quoted and escaped), `encode` returns JSON text of any
 *  value (refused, HC_EINVALID_ARG, when it is not JSON). */
HC_EXTERN hc_code hc_schema_options_set_transformer_json_cb(hc_schema_options *opts, const char *format,
                                                            hc_schema_decode_cb decode, hc_schema_encode_cb encode,
                                                            hc_schema_value_free_cb free_value, void *userdata);

/** The typed values of a validated document: one entry per transformed scalar. */
typedef struct hc_schema_values hc_schema_values;

/** Validates the JSON text `data`, then transforms every scalar whose (passing) subschema has a
 *  `format` with a transformer for it. On HC_OK, *out holds the values: the caller owns it and frees it
 *  with hc_schema_values_free, which calls `free_value` on each value your callbacks made.
 *  HC_EDECODE when `data` is not valid (sub-kind "schema"); HC_ECALLBACK when a decode callback
 *  refuses its text (the values made so far are freed). On failure *out is NULL. */
HC_EXTERN hc_code hc_schema_transform(const hc_schema *schema, const uint8_t *data, size_t len,
                                      hc_schema_values **out);

/** As hc_schema_transform, for a JSON value (borrowed or parsed; only read). */
HC_EXTERN hc_code hc_schema_transform_json(const hc_schema *schema, const hc_json *value, hc_schema_values **out);

/** Frees the values (calling `free_value` on yours). Does nothing for NULL. */
HC_EXTERN void hc_schema_values_free(hc_schema_values *values);

/** How many values there are (0 for NULL). */
HC_EXTERN size_t hc_schema_values_count(const hc_schema_values *values);

/** Entry `index`'s location (an RFC 6901 JSON Pointer), format name and original text (a string's
 *  own, the JSON text of another scalar). NULL with
 *  HC_EINVALID_ARG for NULL `values` or an index out of range. Borrowed: valid as long as `values`. */
HC_EXTERN const char *hc_schema_values_path(const hc_schema_values *values, size_t index);
HC_EXTERN const char *hc_schema_values_format(const hc_schema_values *values, size_t index);
HC_EXTERN const char *hc_schema_values_text(const hc_schema_values *values, size_t index);

/** Entry `index`'s value as your decode callback returned it; NULL for a built-in format without a
 *  callback of yours (read its text; hc_schema_date_time parses date-times), and NULL with
 *  HC_EINVALID_ARG for NULL `values` or an index out of range. Borrowed: freed by
 *  hc_schema_values_free. */
HC_EXTERN void *hc_schema_values_value(const hc_schema_values *values, size_t index);

/** The index of the entry at JSON Pointer `pointer`, or -1 when none (or for NULL arguments). */
HC_EXTERN ptrdiff_t hc_schema_values_find(const hc_schema_values *values, const char *pointer);

/** The text `format`'s transformer writes for `value` (its encode callback; the pointer is passed
 *  as given), for a request body: NUL-terminated in *out, its length in *out_len. The caller owns
 *  *out and frees it with hc_buffer_free. HC_EINVALID_ARG when the schema has no transformer for
 *  `format` or it refuses the value. */
HC_EXTERN hc_code hc_schema_encode(const hc_schema *schema, const char *format, const void *value,
                                   uint8_t **out, size_t *out_len);

/** As hc_schema_encode, the value written as JSON text (`"42.07"` quoted, `1999`, `true`): what
 *  to put in a JSON body as it is. */
HC_EXTERN hc_code hc_schema_encode_json(const hc_schema *schema, const char *format, const void *value,
                                        uint8_t **out, size_t *out_len);

/** "schema" when the error comes from a schema validation, else NULL. Static storage. NULL with
 *  HC_EINVALID_ARG for a NULL `err`. */
HC_EXTERN const char *hc_error_sub_kind(const hc_error *err);

/** How many violations the error carries (0 unless its sub-kind is "schema"). */
HC_EXTERN size_t hc_error_schema_count(const hc_error *err);

/** Violation `index`'s instance location, an RFC 6901 JSON Pointer ("" for the root). NULL when
 *  out of range (the last error left as it was), or with HC_EINVALID_ARG for a NULL `err` (as the
 *  three getters below). Borrowed: valid as long as the error. */
HC_EXTERN const char *hc_error_schema_instance_path(const hc_error *err, size_t index);

/** Violation `index`'s schema location: the JSON Pointer of the failing keyword along the
 *  evaluation path ($ref steps included). NULL when out of range. Borrowed: valid as long as the error. */
HC_EXTERN const char *hc_error_schema_path(const hc_error *err, size_t index);

/** Violation `index`'s keyword ("type", "required"...; "false" for a false schema). NULL when out
 *  of range. Borrowed: valid as long as the error. */
HC_EXTERN const char *hc_error_schema_keyword(const hc_error *err, size_t index);

/** Violation `index`'s message. NULL when out of range. Borrowed: valid as long as the error. */
HC_EXTERN const char *hc_error_schema_message(const hc_error *err, size_t index);

/* ------------------------------------------------------------------------------------------ */
/* Record streams: lines, JSON records (JSON Lines, NDJSON, RFC 7464 sequences, concatenated   */
/* JSON), Server-Sent Events                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* A body that is a stream of records, each handed to a callback as soon as it is complete,
 * however the body is cut into chunks (a record may span many chunks, a chunk may hold many
 * records). Only the record being read is held: memory stays flat over an endless stream.
 * Callbacks return 0 to continue, HC_RECORDS_STOP to end the transfer early with success, and
 * anything else to abort it with HC_ECALLBACK. Every lent pointer is valid during the call only. */

/** Returned by a record callback to stop the transfer early with success. */
#define HC_RECORDS_STOP (-1)

/** The version of hc_records_options this header describes. */
#define HC_RECORDS_OPTIONS_VERSION 1

/** How JSON records are laid out (hc_records_options.framing). */
typedef enum hc_json_framing {
    HC_JSON_LINES = 0,                  /**< JSON Lines / NDJSON: one value per line (LF or CRLF), blank lines skipped. */
    HC_JSON_SEQ = 1,                    /**< RFC 7464 (application/json-seq): RS before each record; a top-level number,
                                             true, false or null not followed by whitespace is a truncated (bad) record. */
    HC_JSON_CONCATENATED = 2,           /**< Values one after another ({..}{..}), whitespace optional; a bad one always fails. */
    HC_JSON_AUTO = 3                    /**< The response decides: HC_JSON_SEQ for Content-Type application/json-seq,
                                             else HC_JSON_LINES (default). */
} hc_json_framing;

/** Options of the record handlers and hc_client_events; a handler ignores the fields it does not
 *  use. Fill it with hc_records_options_init first, then change fields. Copied by the function
 *  it is given to. */
typedef struct hc_records_options {
    unsigned int version;               /**< HC_RECORDS_OPTIONS_VERSION. */
    size_t max_line_size;               /**< Lines, SSE: longest line in bytes (HC_ETOO_LARGE beyond); 0: none. Default 1048576. */
    size_t max_record_size;             /**< JSON: largest record; SSE: largest event (data and type), in bytes
                                             (HC_ETOO_LARGE beyond); 0: none. Default 16777216. */
    int framing;                        /**< JSON: an hc_json_framing. Default HC_JSON_AUTO. */
    int skip_bad_records;               /**< JSON: a bad record goes to the skip callback and the stream goes on (1),
                                             or fails the transfer with HC_EDECODE (0). Default 0. */
    int strict;                         /**< Lines: bytes invalid in the charset fail with HC_EDECODE (1) or become
                                             U+FFFD (0). Default 1. */
    int reconnect;                      /**< hc_client_events: reconnect when the stream ends or breaks. Default 0. */
    unsigned int max_reconnects;        /**< hc_client_events: at most this many reconnections. Default 10. */
    unsigned int retry_ms;              /**< hc_client_events: wait before reconnecting until the server sends retry:. Default 3000. */
    unsigned int max_retry_ms;          /**< hc_client_events: longest wait, whatever the server asks (plus up to 10%
                                             jitter within it). Default 30000. */
    size_t batch_bytes;                 /**< Batch handlers: deliver a batch once it reaches this size (and at the end
                                             of each received chunk). Default 65536. */
} hc_records_options;

/** Called with each line: its UTF-8 bytes without the terminator (`len` may be 0), not
 *  NUL-terminated. */
typedef int (*hc_line_cb)(void *userdata, const char *line, size_t len);

/** Called with a batch of `count` records as `len` bytes at `data` (lines: their UTF-8 joined with
 *  LF; JSON: one list in Python's marshal format). Not NUL-terminated. */
typedef int (*hc_records_batch_cb)(void *userdata, const uint8_t *data, size_t len, size_t count);

/** Called with each JSON record and its index among the records delivered (from 0). `value` is
 *  borrowed for the duration of the call. */
typedef int (*hc_json_record_cb)(void *userdata, size_t index, const hc_json *value);

/** Called with each bad record skipped (HC_JSON_SEQ or HC_JSON_LINES with skip_bad_records): its
 *  index among all records (good and bad, from 0), the byte offset of the fault in the body, and
 *  the message (NUL-terminated, borrowed for the duration of the call). */
typedef int (*hc_record_skip_cb)(void *userdata, size_t record_index, int64_t offset, const char *message);

/** Called with each Server-Sent Event: its type ("message" when unset), data (data lines joined
 *  with LF) and last event ID ("" when none), each NUL-terminated with its length (they may hold
 *  NUL), and the event's retry field in milliseconds or -1. All borrowed for the duration of the call. */
typedef int (*hc_sse_event_cb)(void *userdata, const char *event, size_t event_len, const char *data,
                               size_t data_len, const char *id, size_t id_len, int64_t retry);

/** Called with each comment line (a keep-alive): the text after the colon, NUL-terminated,
 *  borrowed for the duration of the call. */
typedef int (*hc_sse_comment_cb)(void *userdata, const char *text, size_t len);

/** Fills `opts` with the defaults of `version` (HC_RECORDS_OPTIONS_VERSION). HC_EINVALID_ARG for
 *  NULL or a version this library does not know. */
HC_EXTERN hc_code hc_records_options_init(hc_records_options *opts, unsigned int version);

/** Text lines as they arrive: decoded from the Content-Type's charset (UTF-8 when none; a UTF-8
 *  byte order mark dropped), split at CR, LF or CRLF even when a chunk ends between CR and LF.
 *  Empty lines are kept, and a last line without a terminator. `opts` may be NULL (defaults);
 *  `userdata` must stay valid while a send runs. Accepts 200-299, any type. The caller owns the
 *  result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_lines_new(hc_line_cb cb, void *userdata, const hc_records_options *opts);

/** As hc_handler_lines_new, the lines delivered in batches (hc_records_batch_cb). The caller owns
 *  the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_lines_batches_new(hc_records_batch_cb cb, void *userdata,
                                                   const hc_records_options *opts);

/** JSON records parsed by yajl as their bytes arrive (the framing from `opts`). A bad record
 *  fails the transfer with HC_EDECODE (hc_error_record_index and hc_error_offset say which and
 *  where), or with skip_bad_records goes to `skip` (may be NULL). Accepts 200-299 and
 *  application/x-ndjson, application/jsonl, application/json-seq, application/json,
 *  application/x-jsonlines, application/jsonlines. An integer too large for int64 is kept exact,
 *  as HC_JSON_NUMBER (hc_json_number_text; hc_json_double reads it too). The caller owns the
 *  result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_json_lines_new(hc_json_record_cb cb, hc_record_skip_cb skip, void *userdata,
                                                const hc_records_options *opts);

/** Hands over, of each record of a JSON lines handler (hc_handler_json_lines_new), the value at
 *  `path` (copied): member names and decimal array indices joined with dots ("data.items.0"). A
 *  record without it is invalid: it fails the transfer with HC_EDECODE (hc_error_record_index and
 *  hc_error_offset say which and where), or with `skip_invalid` 1 goes to the skip callback. NULL
 *  `path`: the whole record again (the default). A schema set with hc_handler_json_set_schema
 *  checks the value handed over; `skip_invalid` is the setting HC_SCHEMA_SKIP_INVALID sets there
 *  too (the last call decides). HC_EINVALID_ARG for other handlers. */
HC_EXTERN hc_code hc_handler_json_lines_set_path(hc_handler *handler, const char *path, int skip_invalid);

/** Server-Sent Events (text/event-stream) as the WHATWG standard interprets them, one connection:
 *  each event to `cb` when its blank line arrives, comments to `comment` (may be NULL). Sends
 *  "Accept: text/event-stream" unless the request sets one. Accepts 200 and 204 (no events) with
 *  text/event-stream. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_sse_new(hc_sse_event_cb cb, hc_sse_comment_cb comment, void *userdata,
                                         const hc_records_options *opts);

/** Runs an event stream from `request` (its URL, method, headers, cancel token; its handler is not
 *  used) on this thread until it ends for good: with `reconnect`, a stream that ends or breaks
 *  (transport error, timeout) is asked for again after the reconnection time, with Last-Event-ID;
 *  a 204 ends it; another status or type fails as for any handler. *events (may be NULL) counts
 *  the events dispatched. The request is only read: the caller keeps it. */
HC_EXTERN hc_code hc_client_events(hc_client *client, const hc_request *request, hc_sse_event_cb cb,
                                   hc_sse_comment_cb comment, void *userdata, const hc_records_options *opts,
                                   size_t *events);

/** An event stream whose connections you send yourself (hc_event_source_new). */
typedef struct hc_event_source hc_event_source;

/** One event stream whose connections you send yourself (say, in a batch your event loop
 *  drives, see hc_batch_watch), with hc_client_events' reconnection: send each connection with a
 *  request whose handler is hc_event_source_handler's, then ask hc_event_source_next what to do.
 *  The connections share one parser: the last event ID goes out as Last-Event-ID, the server's
 *  retry: sets the wait. `cb`, `comment` (may be NULL) and `userdata` as hc_handler_sse_new's;
 *  `opts` as hc_client_events' (NULL: defaults). NULL on a bad argument (hc_error_last says
 *  why). The caller owns the result and frees it with hc_event_source_free. */
HC_EXTERN hc_event_source *hc_event_source_new(hc_sse_event_cb cb, hc_sse_comment_cb comment, void *userdata,
                                               const hc_records_options *opts);

/** Frees the event source; NULL is a no-op. A handler from it stays usable (it keeps what it needs). */
HC_EXTERN void hc_event_source_free(hc_event_source *source);

/** The handler for the event source's connections (one at a time), with hc_handler_sse_new's
 *  acceptance. NULL for a NULL source. The caller owns the result and frees it with
 *  hc_handler_free. */
HC_EXTERN hc_handler *hc_event_source_handler(hc_event_source *source);

/** After a connection ended with `outcome` (HC_OK, or the code its send or batch reported): sets
 *  *delay_ms to the wait in milliseconds before the next connection, or to -1 when the stream is
 *  over (a 204, a callback returned HC_RECORDS_STOP, no reconnection asked for or left), and
 *  returns HC_OK. Returns `outcome` itself when the stream ends with that connection's error (not
 *  a transport error or timeout, or no reconnection left): its detail is what that send reported,
 *  and hc_error_last() is left as it was. HC_EINVALID_ARG for a NULL argument or an unknown code. */
HC_EXTERN hc_code hc_event_source_next(hc_event_source *source, hc_code outcome, int64_t *delay_ms);

/** For a response from a record handler: how many records (lines, events) were delivered, and
 *  how many bad ones were skipped. Either pointer may be NULL. HC_EINVALID_ARG for another
 *  handler's response. */
HC_EXTERN hc_code hc_response_records(const hc_response *response, size_t *count, size_t *skipped);

/** For a bad record of a record stream: its index among the records (from 0), else -1. */
HC_EXTERN int64_t hc_error_record_index(const hc_error *err);

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
 *  HC_EINVALID_ARG when there is none). HC_EIO when the file cannot be written. */
HC_EXTERN hc_code hc_client_cookies_save(hc_client *client, const char *path);

/** Adds the cookies of the Netscape cookie file `path` to the jar. HC_EIO if it cannot be read. */
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
 *  `hex`; a mismatch fails the send with HC_ECHECKSUM and leaves neither the file nor a part.
 *  Digests the server sends (RFC 9530 Repr-Digest, Content-Digest on a whole unencoded body,
 *  legacy Digest) are checked whether or not one is set. NULL `algorithm` removes it. Only for
 *  file handlers (others ignore it). The strings are copied. */
HC_EXTERN hc_code hc_handler_file_set_digest(hc_handler *handler, const char *algorithm, const char *hex);

/** The digest computed for a download, "sha256:<hex>" (the expected digest's algorithm, else
 *  the server's), or NULL when none was checked or the handler was not a file handler.
 *  Borrowed: valid until the response is freed. */
HC_EXTERN const char *hc_response_file_digest(const hc_response *response);

/* ------------------------------------------------------------------------------------------ */
/* XML                                                                                         */
/* ------------------------------------------------------------------------------------------ */

/* XML is parsed with libxml2's push parser as each chunk arrives: a malformed, hostile or oversized
 * document fails at the chunk holding the bad byte (HC_EDECODE, with line, column and byte offset
 * in the message, the first body bytes in hc_error_body). Secure by default: no DTD or external
 * entity is ever loaded (a reference to an external entity is HC_EDECODE), no network access,
 * internal entity expansion is bounded (billion laughs and quadratic blowup are HC_EDECODE), depth
 * and size are limited. Encoding: the Content-Type charset, else the byte order mark or the XML
 * declaration, else UTF-8. Names come with their namespace URI (NULL: none). Default acceptance:
 * 200-299 and application/xml, text/xml, * / *+xml (without the spaces); the handlers send
 * "Accept: application/xml, text/xml" unless the request sets one. */

/** A node of an XML tree: an element, or a text, CDATA or comment node among its children.
 *  Nodes from a response or a callback are borrowed; only hc_xml_parse gives one the caller owns. */
typedef struct hc_xml hc_xml;

/** Parse and handler options, copied by each handler or parse that uses them. */
typedef struct hc_xml_options hc_xml_options;

/** What a node is (hc_xml_kind). */
typedef enum hc_xml_node_kind {
    HC_XML_INVALID = -1,                /**< Not a node: the handle was NULL. */
    HC_XML_ELEMENT = 1,                 /**< An element: name, namespace, attributes, children. */
    HC_XML_TEXT = 2,                    /**< Character data (entities replaced): hc_xml_text. */
    HC_XML_CDATA = 3,                   /**< A CDATA section (with HC_XML_KEEP_CDATA): hc_xml_text. */
    HC_XML_COMMENT = 4                  /**< A comment (with HC_XML_KEEP_COMMENTS): hc_xml_text. */
} hc_xml_node_kind;

/** Options for hc_xml_options_set; booleans are 0 or 1. */
typedef enum hc_xml_option {
    HC_XML_KEEP_COMMENTS = 1,           /**< Keep comments as HC_XML_COMMENT nodes. Default 0. */
    HC_XML_KEEP_CDATA = 2,              /**< Keep CDATA sections apart (HC_XML_CDATA); else joined to the text. Default 0. */
    HC_XML_MAX_DEPTH = 3,               /**< Deepest element nesting accepted, 1 to 256. Default 256. */
    HC_XML_MAX_SIZE = 4,                /**< Largest body in bytes (HC_ETOO_LARGE beyond); 0: no limit. Default 0. */
    HC_XML_MAX_ENTITY_EXPANSION = 5,    /**< Bytes of entity replacement text allowed beyond the document's size. Default 1048576. */
    HC_XML_ALLOW_EMPTY = 6,             /**< An empty body on any status gives no tree, not HC_EDECODE. Default 0. */
    HC_XML_ELEMENTS_LIMIT = 7,          /**< Elements handlers: stop with success after this many; 0: none. Default 0. */
    HC_XML_BATCH_BYTES = 8,             /**< Batches handler (httpcontent_binding.h): deliver a batch once it reaches this size. Default 65536. */
    HC_XML_ERROR_BODY_LIMIT = 9         /**< How many leading body bytes a decode error keeps. Default 65536. */
} hc_xml_option;

/** Returned by an element or batch callback to stop the transfer early with success. */
#define HC_XML_STOP (-1)

/** Called with each element matching one of the handler's paths, complete, as soon as its end tag
 *  is parsed. `path_index` indexes the paths; `element` is borrowed for the duration of the call.
 *  Return 0 to continue, HC_XML_STOP to stop with success, anything else to abort with HC_ECALLBACK. */
typedef int (*hc_xml_element_cb)(void *userdata, size_t path_index, const hc_xml *element);

/** New options, all at their defaults. The caller owns the result and frees it with hc_xml_options_free. */
HC_EXTERN hc_xml_options *hc_xml_options_new(void);

/** Frees options; handlers made from them keep their own copy. */
HC_EXTERN void hc_xml_options_free(hc_xml_options *opts);

/** Sets an option. HC_EINVALID_ARG for an unknown option or a value out of range. */
HC_EXTERN hc_code hc_xml_options_set(hc_xml_options *opts, hc_xml_option option, int64_t value);

/** Reads an option's current value into *value. */
HC_EXTERN hc_code hc_xml_options_get(const hc_xml_options *opts, hc_xml_option option, int64_t *value);

/** Parses the body into a tree while it arrives (read it with hc_response_xml). `opts` may be NULL
 *  for the defaults. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_xml_new(const hc_xml_options *opts);

/** Path streaming: calls `cb` with each element matching one of `count` element paths from the root
 *  ("feed/entry"; a step is a local name in any namespace, "{uri}name", "{}name" for no namespace,
 *  or "*"), then forgets it: memory stays flat however long the document. At most 64 paths.
 *  `userdata` must stay valid while a send runs. The caller owns the result and frees it with
 *  hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_xml_elements_new(const char *const *paths, size_t count,
                                                  const hc_xml_options *opts, hc_xml_element_cb cb,
                                                  void *userdata);

/** The root element of a response from hc_handler_xml_new. NULL with hc_error_last() cleared (HC_OK)
 *  when the body was empty (204, 205, 304, HEAD, or HC_XML_ALLOW_EMPTY); NULL with HC_EINVALID_ARG
 *  for another handler's response. Borrowed: valid until the response is freed. */
HC_EXTERN const hc_xml *hc_response_xml(const hc_response *response);

/** For a response from an elements or batches handler: how many elements were delivered, and
 *  whether it stopped early (1) or read the whole body (0). Either pointer may be NULL. */
HC_EXTERN hc_code hc_response_xml_elements(const hc_response *response, size_t *count, int *stopped_early);

/** Parses `len` bytes of XML (`opts` may be NULL). On HC_OK, *out is the root element, which the
 *  caller owns and frees with hc_xml_free; on failure *out is NULL. */
HC_EXTERN hc_code hc_xml_parse(const uint8_t *data, size_t len, const hc_xml_options *opts, hc_xml **out);

/** Frees a tree from hc_xml_parse (and every node borrowed from it). Does nothing for NULL or for a
 *  borrowed node. */
HC_EXTERN void hc_xml_free(hc_xml *node);

/** The node's kind (hc_xml_node_kind); HC_XML_INVALID if node is NULL. */
HC_EXTERN int hc_xml_kind(const hc_xml *node);

/** An element's local name ("entry" for <atom:entry>); NULL for another node (NULL with
 *  HC_EINVALID_ARG for a NULL node). Borrowed: valid as long as `node`. */
HC_EXTERN const char *hc_xml_name(const hc_xml *node);

/** An element's namespace URI; NULL when it has none (or for another node; NULL with
 *  HC_EINVALID_ARG for a NULL node). Borrowed: valid as long as `node`. */
HC_EXTERN const char *hc_xml_namespace(const hc_xml *node);

/** The prefix the document wrote ("atom" for <atom:entry>); NULL for none (NULL with
 *  HC_EINVALID_ARG for a NULL node). Borrowed: valid as long as `node`. */
HC_EXTERN const char *hc_xml_prefix(const hc_xml *node);

/** The number of attributes of an element (namespace declarations excluded; 0 for another node). */
HC_EXTERN size_t hc_xml_attribute_count(const hc_xml *node);

/** Attribute `index`: sets *name (local name), *namespace (NULL: none) and *value, each optional.
 *  HC_EINVALID_ARG when out of range. Borrowed (all three): valid as long as `node`. */
HC_EXTERN hc_code hc_xml_attribute_at(const hc_xml *node, size_t index, const char **name,
                                      const char **namespace_uri, const char **value);

/** The value of the attribute with this local name and namespace (NULL: no namespace), or NULL when
 *  there is none (NULL with HC_EINVALID_ARG for a NULL node or name). Borrowed: valid as long as
 *  `node`. */
HC_EXTERN const char *hc_xml_attribute(const hc_xml *node, const char *name, const char *namespace_uri);

/** The number of child nodes of an element (elements, text, and kept CDATA and comments). */
HC_EXTERN size_t hc_xml_child_count(const hc_xml *node);

/** Child node `index`, or NULL with HC_EINVALID_ARG. Borrowed: valid as long as `node`. */
HC_EXTERN const hc_xml *hc_xml_child_at(const hc_xml *node, size_t index);

/** The first child element matching `step` (as a path step: "name", "{uri}name", "{}name", "*"), or
 *  NULL (hc_error_last() cleared) when none. Borrowed: valid as long as `node`. */
HC_EXTERN const hc_xml *hc_xml_first(const hc_xml *node, const char *step);

/** The text of a text, CDATA or comment node, or all the text inside an element at every depth:
 *  sets *data (NUL-terminated UTF-8) and *len, each optional. Borrowed: valid as long as `node`. */
HC_EXTERN hc_code hc_xml_text(const hc_xml *node, const char **data, size_t *len);

/** The element as XML text (UTF-8, no declaration; indented when `pretty`, where no text would
 *  change), in *data and *len. A child element declares on itself the namespaces it inherits
 *  from its ancestors, so the text is well-formed and namespace-correct on its own. The caller owns *data and frees it with hc_buffer_free (it is also
 *  NUL-terminated). */
HC_EXTERN hc_code hc_xml_serialize(const hc_xml *node, int pretty, uint8_t **data, size_t *len);

/* ------------------------------------------------------------------------------------------ */
/* XML events                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* The document's events for handlers of one's own (the same push parser, options, security and
 * errors as the XML section): start element, text, end element, and comments with
 * HC_XML_KEEP_COMMENTS. Nothing is kept between events. Text comes whole between two tags
 * (entities replaced; CDATA joined to it unless HC_XML_KEEP_CDATA keeps a section apart); text
 * outside the root element is not reported. `depth` is the element's own depth (1 for the root)
 * for start and end, and the depth of the element holding it for text and comments. Every
 * string is NUL-terminated UTF-8, borrowed for the duration of the call. */

#define HC_XML_CALLBACKS_VERSION 1u

/** The callbacks of an events handler; every pointer may be NULL (that event is skipped). Each
 *  returns 0 to continue, HC_XML_STOP to stop with success, anything else to abort with
 *  HC_ECALLBACK.
 *   start_element: `name` is the local name, `namespace_uri` its namespace (NULL: none),
 *                  `prefix` the prefix written (NULL: none); `attributes` holds
 *                  3 * attribute_count pointers, (local name, namespace URI or NULL, value) for
 *                  each attribute in document order (NULL when there are none); namespace
 *                  declarations are not attributes.
 *   text:          `len` bytes of character data; `cdata` is 1 for a CDATA section kept apart.
 *   end_element:   the element's local name and namespace, as at its start.
 *   comment:       `len` bytes of a comment's text. */
typedef struct hc_xml_callbacks {
    unsigned int version; /**< HC_XML_CALLBACKS_VERSION */
    int (*start_element)(void *userdata, const char *name, const char *namespace_uri, const char *prefix,
                         const char *const *attributes, size_t attribute_count, size_t depth);
    int (*text)(void *userdata, const char *data, size_t len, int cdata, size_t depth);
    int (*end_element)(void *userdata, const char *name, const char *namespace_uri, size_t depth);
    int (*comment)(void *userdata, const char *data, size_t len, size_t depth);
} hc_xml_callbacks;

/** A handler calling `callbacks` (copied) with each event while the body arrives; `opts` may be
 *  NULL for the defaults (copied). `userdata` must stay valid while a send runs; every send using
 *  this handler calls the same callbacks, so use one handler per concurrent request. Stopping with
 *  HC_XML_STOP ends the transfer with success. The response has no content. HC_EINVALID_ARG (NULL
 *  result) for NULL callbacks or a version other than HC_XML_CALLBACKS_VERSION. The caller owns
 *  the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_xml_events_new(const hc_xml_options *opts, const hc_xml_callbacks *callbacks,
                                                void *userdata);

/** Parses `len` bytes of XML (`opts` may be NULL), calling `callbacks` (as hc_handler_xml_events_new)
 *  during the call. HC_OK when the document is read to its end or a callback stopped it with
 *  HC_XML_STOP; HC_EDECODE (line, column, byte offset) or HC_ETOO_LARGE at the bad byte, after the
 *  events before it; HC_ECALLBACK when a callback aborted. */
HC_EXTERN hc_code hc_xml_events_parse(const uint8_t *data, size_t len, const hc_xml_options *opts,
                                      const hc_xml_callbacks *callbacks, void *userdata);

HC_END_DECL

#include "httpcontent/transport.h" /* hc_client_set_resolve ... hc_response_timing */

#endif /* HTTPCONTENT_H */
