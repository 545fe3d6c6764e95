/*
 * httpcontent/records.h — record streams: lines, JSON records, Server-Sent Events.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_RECORDS_H
#define HTTPCONTENT_RECORDS_H

#include "httpcontent/json.h"

HC_BEGIN_DECL

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

HC_END_DECL

#endif /* HTTPCONTENT_RECORDS_H */
