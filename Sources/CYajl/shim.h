/* Typed wrappers for yajl's variadic configuration calls, which Swift cannot call.
 * static inline: compiled into the Swift module that uses them, never exported. */
#ifndef HC_CYAJL_SHIM_H
#define HC_CYAJL_SHIM_H

#include <yajl/yajl_parse.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_version.h>

static inline int hc_yajl_config(yajl_handle h, yajl_option opt, int on) {
    return yajl_config(h, opt, on);
}
static inline int hc_yajl_gen_config_int(yajl_gen g, yajl_gen_option opt, int v) {
    return yajl_gen_config(g, opt, v);
}
static inline int hc_yajl_gen_config_str(yajl_gen g, yajl_gen_option opt, const char *v) {
    return yajl_gen_config(g, opt, v);
}

#endif
