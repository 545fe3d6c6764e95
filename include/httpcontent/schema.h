/*
 * httpcontent/schema.h — JSON Schema draft 2020-12 validation of JSON and plist values, value transformers.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_SCHEMA_H
#define HTTPCONTENT_SCHEMA_H

#include "httpcontent/json.h"
#include "httpcontent/plist.h"

HC_BEGIN_DECL

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

HC_END_DECL

#endif /* HTTPCONTENT_SCHEMA_H */
