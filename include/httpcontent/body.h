/*
 * httpcontent/body.h — request bodies: forms, query strings, multipart, files and callbacks.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_BODY_H
#define HTTPCONTENT_BODY_H

#include "httpcontent/core.h"

HC_BEGIN_DECL

/* ------------------------------------------------------------------------------------------ */
/* Request bodies                                                                              */
/* ------------------------------------------------------------------------------------------ */


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
 *  size. The file is opened at each send, before connecting; missing or unreadable gives HC_ELOCAL_IO
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
 *  application/octet-stream) are optional. A missing or unreadable file gives HC_ELOCAL_IO now; a
 *  file gone by the time of sending gives HC_ELOCAL_IO from hc_client_send, before connecting.
 *  All strings are copied; the file is read at each send. */
HC_EXTERN hc_code hc_multipart_add_file(hc_multipart *mp, const char *name, const char *path,
                                        const char *filename, const char *content_type);

/** Adds a part with `len` bytes of `data`, an optional `filename` and `content_type` (NULL: none).
 *  Everything is copied. */
HC_EXTERN hc_code hc_multipart_add_bytes(hc_multipart *mp, const char *name, const uint8_t *data,
                                         size_t len, const char *filename, const char *content_type);

/** Sets the body to the multipart parts. The parts are copied: `mp` may be changed or freed after. */
HC_EXTERN hc_code hc_request_set_multipart(hc_request *request, const hc_multipart *mp);

HC_END_DECL

#endif /* HTTPCONTENT_BODY_H */
