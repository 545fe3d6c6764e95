/* PCRE2 (8-bit code units) for the schema validator's `pattern` keywords.
 * pcre2.h names its functions through macros (pcre2_compile -> pcre2_compile_8), which Swift
 * cannot import: these typed static inline wrappers are compiled into the Swift module that
 * uses them and never exported. */
#ifndef HC_CPCRE2_SHIM_H
#define HC_CPCRE2_SHIM_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

typedef pcre2_code_8 hc_pcre2_code;
typedef pcre2_match_data_8 hc_pcre2_match_data;

/* Options as close to ECMA-262 (the dialect JSON Schema asks for) as PCRE2 allows: see
 * Sources/HTTPContent/Schema/SchemaRegex.swift for what they do and where they still differ. */
static inline hc_pcre2_code *hc_pcre2_compile_ecma(const uint8_t *pattern, size_t length,
                                                  int *error_code, size_t *error_offset) {
    pcre2_compile_context_8 *ctx = pcre2_compile_context_create_8(NULL);
    if (ctx == NULL) { *error_code = PCRE2_ERROR_NOMEMORY; *error_offset = 0; return NULL; }
    pcre2_set_compile_extra_options_8(ctx, PCRE2_EXTRA_ALT_BSUX);
    pcre2_set_newline_8(ctx, PCRE2_NEWLINE_ANYCRLF);
    pcre2_set_parens_nest_limit_8(ctx, 250);
    uint32_t options = PCRE2_UTF | PCRE2_ALT_BSUX | PCRE2_DOLLAR_ENDONLY | PCRE2_MATCH_UNSET_BACKREF
                     | PCRE2_ALLOW_EMPTY_CLASS | PCRE2_NEVER_BACKSLASH_C;
    pcre2_code_8 *code = pcre2_compile_8(pattern, length, options, error_code, error_offset, ctx);
    pcre2_compile_context_free_8(ctx);
    if (code != NULL) (void)pcre2_jit_compile_8(code, PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
    return code;
}

static inline void hc_pcre2_code_free(hc_pcre2_code *code) { pcre2_code_free_8(code); }

static inline hc_pcre2_match_data *hc_pcre2_match_data_new(void) {
    return pcre2_match_data_create_8(1, NULL);
}

static inline void hc_pcre2_match_data_free(hc_pcre2_match_data *md) { pcre2_match_data_free_8(md); }

/* Bounded backtracking: a hostile pattern or subject ends with PCRE2_ERROR_MATCHLIMIT instead of
 * running for minutes. Returns >= 0 on a match, PCRE2_ERROR_NOMATCH, or another negative error. */
static inline int hc_pcre2_search(const hc_pcre2_code *code, const uint8_t *subject, size_t length,
                                  hc_pcre2_match_data *md, pcre2_match_context_8 *mctx) {
    return pcre2_match_8(code, subject, length, 0, PCRE2_NO_UTF_CHECK, md, mctx);
}

static inline pcre2_match_context_8 *hc_pcre2_match_context_new(uint32_t match_limit, uint32_t depth_limit) {
    pcre2_match_context_8 *m = pcre2_match_context_create_8(NULL);
    if (m != NULL) {
        pcre2_set_match_limit_8(m, match_limit);
        pcre2_set_depth_limit_8(m, depth_limit);
    }
    return m;
}

static inline void hc_pcre2_match_context_free(pcre2_match_context_8 *m) { pcre2_match_context_free_8(m); }

static inline int hc_pcre2_error_message(int code, uint8_t *buffer, size_t size) {
    return pcre2_get_error_message_8(code, buffer, size);
}

#endif
