/*
 * httpcontent/core.h — cancellation, handlers, requests, clients and responses: sending a request and reading its outcome.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_CORE_H
#define HTTPCONTENT_CORE_H

#include "httpcontent/error.h"

HC_BEGIN_DECL

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
#define HC_FILE_NO_OVERWRITE 2u  /**< Fail with HC_ELOCAL_IO before sending if the file exists. */
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
 *  with HC_ELOCAL_IO before sending. `flags` combines HC_FILE_*. Accepts 200-299, any type.
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
 *  (0, 0: off, the default). libcurl measures the speed as an average over its last 5 seconds:
 *  after a burst, a stall fires the limit about 5 s later than `seconds` (the read timeout,
 *  hc_client_set_read_timeout_ms, fires on time). */
HC_EXTERN hc_code hc_client_set_low_speed(hc_client *client, long bytes_per_second, long seconds);

/** Follow redirects (1, the default) or not (0), and how many at most (default 10). */
HC_EXTERN hc_code hc_client_set_redirects(hc_client *client, int follow, int max_redirects);

/** libcurl's receive buffer (the most one chunk holds: 1 KiB to 10 MiB) and upload buffer (16 KiB
 *  to 2 MiB), in bytes; 0 for the default: 256 KiB and 1 MiB for a request sent alone
 *  (hc_client_send, hc_client_fetch), 128 KiB and libcurl's 64 KiB for batch transfers, which
 *  may be many at once, each holding its buffers (below 128 KiB, libcurl 7.88 stalls an HTTP/2
 *  connection each time one stream's buffer fills). Out of range: HC_EINVALID_ARG. */
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
HC_EXTERN hc_code hc_client_set_verify(hc_client *client, int verify);

/** The old name of hc_client_set_verify (still exported; the Python binding calls it). */
HC_EXTERN hc_code hc_client_set_verify_tls(hc_client *client, int verify);
HC_DEPRECATED("renamed hc_client_set_verify") hc_code hc_client_set_verify_tls(hc_client *client, int verify);

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

/** Frees a buffer the library returned. NULL is a no-op. */
HC_EXTERN void hc_buffer_free(void *buf);

HC_END_DECL

#endif /* HTTPCONTENT_CORE_H */
