/*
 * httpcontent/json.h — JSON responses (parsed with yajl as chunks arrive), JSON values, building JSON.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_JSON_H
#define HTTPCONTENT_JSON_H

#include "httpcontent/core.h"

HC_BEGIN_DECL

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

HC_END_DECL

#endif /* HTTPCONTENT_JSON_H */
