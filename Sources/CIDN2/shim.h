/* libidn2 (IDNA2008 / UTS #46; libcurl already depends on it) for the schema validator's hostname,
 * idn-hostname and idn-email formats. Typed static inline wrappers, compiled into the Swift module
 * that uses them and never exported. */
#ifndef HC_CIDN2_SHIM_H
#define HC_CIDN2_SHIM_H

#include <idn2.h>
#include <stdint.h>

/* A U-label to its A-label under IDNA2008's registration rules (RFC 5891 section 4: NFC, the
 * code point classes, CONTEXTJ and CONTEXTO rules, the Bidi rule of RFC 5893 for the label);
 * with `normalize`, the label is put in NFC first instead of refused when it is not.
 * Returns IDN2_OK (0) and *alabel (free with hc_idn2_free), or a negative idn2 error. */
static inline int hc_idn2_register(const char *ulabel, int normalize, char **alabel) {
    return idn2_register_u8((const uint8_t *)ulabel, NULL, (uint8_t **)alabel, normalize ? IDN2_NFC_INPUT : 0);
}

/* An A-label (or a name of them) to Unicode. Returns IDN2_OK and *out (free with hc_idn2_free). */
static inline int hc_idn2_to_unicode(const char *alabel, char **out) {
    return idn2_to_unicode_8z8z(alabel, out, 0);
}

static inline void hc_idn2_free(void *p) { idn2_free(p); }

#endif
