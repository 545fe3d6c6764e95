/* libxml2's push parser for the XML handlers. The SAX handler's error callbacks are variadic
 * (Swift cannot make them); the structured one (serror) is used instead. These static inline
 * helpers read libxml2 struct fields and macros Swift does not import cleanly; they are compiled
 * into the Swift module that uses them, never exported. */
#ifndef HC_CXML2_SHIM_H
#define HC_CXML2_SHIM_H

/* libxml2 is built with ICU here, and its encoding.h then includes ICU's headers, which clash
 * with Foundation's own copy of ICU in any module importing both ("UErrorCode has different
 * definitions"). Nothing here touches the ICU fields of xmlCharEncodingHandler (only pointers
 * to it are passed), so the ICU part of the headers is left out. */
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/entities.h>
#include <libxml/xmlerror.h>
#include <libxml/encoding.h>

/** XML_SAX2_MAGIC, which Swift does not import (a macro with a cast). */
static inline unsigned int hc_xml_sax2_magic(void) { return XML_SAX2_MAGIC; }

/** The parser context a SAX callback receives when no user data was given. */
static inline xmlParserCtxtPtr hc_xml_ctxt(void *ctx) { return (xmlParserCtxtPtr) ctx; }

/** The Swift object kept in the context. */
static inline void *hc_xml_private(void *ctx) { return ((xmlParserCtxtPtr) ctx)->_private; }
static inline void hc_xml_set_private(xmlParserCtxtPtr ctxt, void *p) { ctxt->_private = p; }

/** The document libxml2's own SAX2 callbacks made for the DTD (entity declarations), if any. */
static inline xmlDocPtr hc_xml_take_doc(xmlParserCtxtPtr ctxt) {
    xmlDocPtr doc = ctxt->myDoc;
    ctxt->myDoc = NULL;
    return doc;
}

/** Where the parser is, for error messages. */
static inline long hc_xml_byte_index(xmlParserCtxtPtr ctxt) { return xmlByteConsumed(ctxt); }

static inline int hc_xml_entity_type(xmlEntityPtr ent) { return ent ? (int) ent->etype : 0; }
static inline int hc_xml_entity_length(xmlEntityPtr ent) { return ent ? ent->length : 0; }

#endif
