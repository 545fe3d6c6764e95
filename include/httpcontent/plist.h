/*
 * httpcontent/plist.h — property lists, XML or binary: handlers, values, building one.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_PLIST_H
#define HTTPCONTENT_PLIST_H

#include "httpcontent/core.h"

HC_BEGIN_DECL

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

HC_END_DECL

#endif /* HTTPCONTENT_PLIST_H */
