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
 *  straight from its bytes): read it with hc_response_plist_pickle. A date outside datetime's
 *  years is HC_EDECODE from the transfer. No schema (hc_handler_plist_set_schema refuses it).
 *  The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_plist_pickle_new(const hc_plist_options *opts);

/** The pickle bytes of a response from hc_handler_plist_pickle_new, borrowed until the response
 *  is freed. *data NULL and *len 0 (HC_OK) for an empty body where hc_response_plist gives NULL. */
HC_EXTERN hc_code hc_response_plist_pickle(const hc_response *response, const uint8_t **data, size_t *len);

/* ------------------------------------------------------------------------------------------ */
/* Python: XML written as a pickle of ElementTree elements (bindings/python/httpcontent/xmlcontent.py) */
/* ------------------------------------------------------------------------------------------ */

/** Called with a batch of `count` elements matching the path `path_index`, as `len` bytes (borrowed
 *  for the duration of the call). Return as hc_xml_element_cb. */
typedef int (*hc_xml_batch_cb)(void *userdata, size_t path_index, const uint8_t *data, size_t len, size_t count);

/** For the Python binding: the tree handler's parse, options, errors and acceptance, but the document
 *  is written while it is parsed as a Python pickle (protocol 4) whose pickle.loads is the root
 *  xml.etree.ElementTree.Element (read it with hc_response_xml_pickle). The caller owns the result
 *  and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_xml_pickle_new(const hc_xml_options *opts);

/** For the Python binding: as hc_handler_xml_elements_new, but elements come in batches, each a
 *  pickle of a list of xml.etree.ElementTree.Element, delivered at HC_XML_BATCH_BYTES and at the
 *  end of received chunks. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_xml_batches_pickle_new(const char *const *paths, size_t count,
                                                        const hc_xml_options *opts, hc_xml_batch_cb cb,
                                                        void *userdata);

/** The pickle bytes of a response from hc_handler_xml_pickle_new, borrowed until the response is
 *  freed. *data NULL and *len 0 (HC_OK) for an empty body. */
HC_EXTERN hc_code hc_response_xml_pickle(const hc_response *response, const uint8_t **data, size_t *len);

HC_END_DECL

#endif /* HTTPCONTENT_BINDING_H */
