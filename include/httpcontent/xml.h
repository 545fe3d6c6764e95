/*
 * httpcontent/xml.h — XML responses (libxml2 push parser), XML trees, XML events.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_XML_H
#define HTTPCONTENT_XML_H

#include "httpcontent/core.h"

HC_BEGIN_DECL

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

#endif /* HTTPCONTENT_XML_H */
