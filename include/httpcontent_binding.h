/*
 * httpcontent_binding.h — entry points of libhttpcontent that serve one language binding, not
 * C programs. They are exported and keep the conventions of httpcontent.h (which this includes),
 * but they are not part of the public C contract: a C program needs none of them.
 */
#ifndef HTTPCONTENT_BINDING_H
#define HTTPCONTENT_BINDING_H

#include "httpcontent.h"

HC_BEGIN_DECL

/* ------------------------------------------------------------------------------------------ */
/* Python: one-call fetch, the result in a struct (client.py fast path)                       */
/* ------------------------------------------------------------------------------------------ */

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
/* Python: a batch driven from one descriptor, completions taken by key (asyncio)             */
/* ------------------------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------------------------ */
/* Leak check for the bindings' tests                                                         */
/* ------------------------------------------------------------------------------------------ */

/** How many handles of any kind the library has handed out and not had back (a leak check). */
HC_EXTERN int64_t hc_live_handles(void);

/* ------------------------------------------------------------------------------------------ */
/* Python: JSON written in Python's marshal format (bindings/python/httpcontent/jsoncontent.py)*/
/* ------------------------------------------------------------------------------------------ */

/** As hc_handler_json_batches_new, but each batch is one list in Python's marshal format
 *  (`json`/`len` are its bytes; marshal.loads gives what json.loads gives for the JSON text
 *  batch: integers exact at any size, other numbers as float(text)). */
HC_EXTERN hc_handler *hc_handler_json_batches_pymarshal_new(const char *const *prefixes, size_t count,
                                                            const hc_json_options *opts, hc_json_batch_cb cb,
                                                            void *userdata);

/** The tree handler's parse, options, errors and acceptance, but the document is written in
 *  Python's marshal format while it is parsed, with no tree (read it with
 *  hc_response_json_pymarshal; marshal.loads gives what json.loads of the document gives with
 *  the same options). HC_EINVALID_ARG with HC_JSON_KEEP_NUMBER_TEXT. The caller owns the result
 *  and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_json_pymarshal_new(const hc_json_options *opts);

/** The marshal bytes of a response from hc_handler_json_pymarshal_new, borrowed until the
 *  response is freed. *data NULL and *len 0 (HC_OK) for an empty body where hc_response_json
 *  gives NULL. */
HC_EXTERN hc_code hc_response_json_pymarshal(const hc_response *response, const uint8_t **data, size_t *len);

/* ------------------------------------------------------------------------------------------ */
/* Python: JSON records in Python's marshal format (bindings/python/httpcontent/records.py)    */
/* ------------------------------------------------------------------------------------------ */

/** As hc_handler_lines_batches_new, but each batch is one list of str in Python's marshal format
 *  (`data`/`len`, borrowed for the call; `count` lines): marshal.loads gives the batch's lines,
 *  without terminators. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_lines_pymarshal_new(hc_records_batch_cb cb, void *userdata,
                                                     const hc_records_options *opts);

/** As hc_handler_json_lines_new, the records written as they are parsed into lists in Python's
 *  marshal format (marshal.loads gives what json.loads gives for each record: integers exact at
 *  any size, other numbers as float(text)), delivered in batches to `cb` (hc_records_batch_cb)
 *  at batch_bytes and at the end of each received chunk once no record is half written. The
 *  caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_json_lines_pymarshal_new(hc_records_batch_cb cb, hc_record_skip_cb skip,
                                                          void *userdata, const hc_records_options *opts);

/* ------------------------------------------------------------------------------------------ */
/* Python: property lists written as a pickle (bindings/python/httpcontent/plist.py)          */
/* ------------------------------------------------------------------------------------------ */

/** `value` written as a pickle (protocol 4) for the Python binding: pickle.loads gives what
 *  plistlib.loads gives (dict, list, str, int, float, bool, naive UTC datetime.datetime, bytes,
 *  plistlib.UID); the only globals it names are datetime.datetime and plistlib.UID.
 *  HC_EDECODE for a date outside datetime's years 1 to 9999. The caller owns *data and frees it
 *  with hc_buffer_free. */
HC_EXTERN hc_code hc_plist_pypickle(const hc_plist *value, uint8_t **data, size_t *len);

/** For the Python binding: hc_handler_plist_new's limits, errors and acceptance, but the document
 *  is written as the pickle hc_plist_pypickle gives, with no value tree (a binary plist is read
 *  straight from its bytes): read it with hc_response_plist_pypickle. A date outside datetime's
 *  years is HC_EDECODE from the transfer. No schema (hc_handler_plist_set_schema refuses it).
 *  The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_plist_pypickle_new(const hc_plist_options *opts);

/** The pickle bytes of a response from hc_handler_plist_pypickle_new, borrowed until the response
 *  is freed. *data NULL and *len 0 (HC_OK) for an empty body where hc_response_plist gives NULL. */
HC_EXTERN hc_code hc_response_plist_pypickle(const hc_response *response, const uint8_t **data, size_t *len);

/* ------------------------------------------------------------------------------------------ */
/* Python: XML written as a pickle of ElementTree elements (bindings/python/httpcontent/xmlcontent.py) */
/* ------------------------------------------------------------------------------------------ */

/** Called with a batch of `count` elements matching the path `path_index`, as `len` bytes (borrowed
 *  for the duration of the call). Return as hc_xml_element_cb. */
typedef int (*hc_xml_batch_cb)(void *userdata, size_t path_index, const uint8_t *data, size_t len, size_t count);

/** For the Python binding: the tree handler's parse, options, errors and acceptance, but the document
 *  is written while it is parsed as a Python pickle (protocol 4) whose pickle.loads is the root
 *  xml.etree.ElementTree.Element (read it with hc_response_xml_pypickle). The caller owns the result
 *  and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_xml_pypickle_new(const hc_xml_options *opts);

/** For the Python binding: as hc_handler_xml_elements_new, but elements come in batches, each a
 *  pickle of a list of xml.etree.ElementTree.Element, delivered at HC_XML_BATCH_BYTES and at the
 *  end of received chunks. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_xml_batches_pypickle_new(const char *const *paths, size_t count,
                                                        const hc_xml_options *opts, hc_xml_batch_cb cb,
                                                        void *userdata);

/** The pickle bytes of a response from hc_handler_xml_pypickle_new, borrowed until the response is
 *  freed. *data NULL and *len 0 (HC_OK) for an empty body. */
HC_EXTERN hc_code hc_response_xml_pypickle(const hc_response *response, const uint8_t **data, size_t *len);

/* ------------------------------------------------------------------------------------------ */
/* Deprecated spellings (the binding suffix is _pymarshal or _pypickle; these are still exported) */
/* ------------------------------------------------------------------------------------------ */

/** The old name of hc_handler_plist_pypickle_new. */
HC_EXTERN hc_handler *hc_handler_plist_pickle_new(const hc_plist_options *opts);
HC_DEPRECATED("renamed hc_handler_plist_pypickle_new") hc_handler *hc_handler_plist_pickle_new(const hc_plist_options *opts);

/** The old name of hc_response_plist_pypickle. */
HC_EXTERN hc_code hc_response_plist_pickle(const hc_response *response, const uint8_t **data, size_t *len);
HC_DEPRECATED("renamed hc_response_plist_pypickle") hc_code hc_response_plist_pickle(const hc_response *response, const uint8_t **data, size_t *len);

/** The old name of hc_handler_xml_pypickle_new. */
HC_EXTERN hc_handler *hc_handler_xml_pickle_new(const hc_xml_options *opts);
HC_DEPRECATED("renamed hc_handler_xml_pypickle_new") hc_handler *hc_handler_xml_pickle_new(const hc_xml_options *opts);

/** The old name of hc_handler_xml_batches_pypickle_new. */
HC_EXTERN hc_handler *hc_handler_xml_batches_pickle_new(const char *const *paths, size_t count,
                                                        const hc_xml_options *opts, hc_xml_batch_cb cb,
                                                        void *userdata);
HC_DEPRECATED("renamed hc_handler_xml_batches_pypickle_new") hc_handler *hc_handler_xml_batches_pickle_new(const char *const *paths, size_t count, const hc_xml_options *opts, hc_xml_batch_cb cb, void *userdata);

/** The old name of hc_response_xml_pypickle. */
HC_EXTERN hc_code hc_response_xml_pickle(const hc_response *response, const uint8_t **data, size_t *len);
HC_DEPRECATED("renamed hc_response_xml_pypickle") hc_code hc_response_xml_pickle(const hc_response *response, const uint8_t **data, size_t *len);
HC_END_DECL

#endif /* HTTPCONTENT_BINDING_H */
