/* Property lists: NULL rows of the section and its documented codes.
 * (The audit of the headers' promises, issue 14: see promises.h.) */
#include "promises.h"
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------------------------ */
/* Property lists (audited at the end of issue 16's work)                                      */
/* ------------------------------------------------------------------------------------------ */

static void test_property_lists_keep_their_promises(void) {
    static const uint8_t doc[] = "<plist><dict><key>a</key><array><string>s</string></array></dict></plist>";
    hc_plist_options *o = hc_plist_options_new();
    cover("hc_plist_options_new(");
    CHECK(o != NULL);
    hc_plist *pl = NULL;
    CHECK_CODE(hc_plist_parse(doc, sizeof doc - 1, NULL, &pl), HC_OK);   /* opts may be NULL */
    const hc_plist *arr = hc_plist_get(pl, "a"), *str = hc_plist_get(pl, "a.0");
    CHECK(arr != NULL && str != NULL);
    hc_request *req = hc_request_new("POST", hc_url("/echo"));
    int64_t v = 0;
    uint64_t u = 0;
    double d = 0;
    int b = 0;
    const char *s = NULL;
    const uint8_t *bytes = NULL;
    uint8_t *out = NULL;
    size_t n = 0;
    hc_plist *made = NULL;

    FREE_NULL(hc_plist_options_free(NULL));
    NULL_CODE(hc_plist_options_set(NULL, HC_PLIST_MAX_DEPTH, 4));
    NULL_CODE(hc_plist_options_get(NULL, HC_PLIST_MAX_DEPTH, &v));
    NULL_CODE(hc_plist_options_get(o, HC_PLIST_MAX_DEPTH, NULL));
    hc_handler *h = hc_handler_plist_new(NULL);                          /* opts may be NULL */
    cover("hc_handler_plist_new(");
    CHECK(h != NULL);
    hc_handler_free(h);
    NULL_PTR(hc_response_plist(NULL));
    NULL_CODE(hc_plist_parse(NULL, 3, NULL, &made));
    NULL_CODE(hc_plist_parse(doc, sizeof doc - 1, NULL, NULL));
    FREE_NULL(hc_plist_free(NULL));
    FREE_NULL(hc_plist_free((hc_plist *)str));                           /* borrowed: nothing */
    NULL_VALUE(hc_plist_type(NULL), HC_PLIST_INVALID);
    NULL_PTR(hc_plist_get(NULL, ""));
    NULL_PTR(hc_plist_get(pl, NULL));
    NULL_VALUE(hc_plist_array_length(NULL), 0);
    NULL_PTR(hc_plist_array_at(NULL, 0));
    NULL_VALUE(hc_plist_dict_size(NULL), 0);
    NULL_PTR(hc_plist_dict_member_at(NULL, 0, &s, &n));
    CHECK(hc_plist_dict_member_at(pl, 0, NULL, NULL) == arr);            /* key and key_len may be NULL */
    NULL_CODE(hc_plist_string(NULL, &s, &n));
    NULL_CODE(hc_plist_int64(NULL, &v));
    NULL_CODE(hc_plist_uint64(NULL, &u));
    NULL_CODE(hc_plist_real(NULL, &d));
    NULL_CODE(hc_plist_bool(NULL, &b));
    NULL_CODE(hc_plist_date(NULL, &d));
    NULL_CODE(hc_plist_data(NULL, &bytes, &n));
    NULL_CODE(hc_plist_uid(NULL, &u));
    NULL_CODE(hc_plist_serialize(NULL, HC_PLIST_XML, &out, &n));
    NULL_CODE(hc_plist_serialize(pl, HC_PLIST_XML, NULL, &n));
    NULL_CODE(hc_request_set_plist_value(NULL, pl, HC_PLIST_XML));
    NULL_CODE(hc_request_set_plist_value(req, NULL, HC_PLIST_XML));

    hc_plist_builder *pb = hc_plist_builder_new();
    cover("hc_plist_builder_new(");
    CHECK(pb != NULL);
    FREE_NULL(hc_plist_builder_free(NULL));
    NULL_CODE(hc_plist_builder_string(NULL, "x", 1));
    NULL_CODE(hc_plist_builder_string(pb, NULL, 1));
    NULL_CODE(hc_plist_builder_key(NULL, "x", 1));
    NULL_CODE(hc_plist_builder_key(pb, NULL, 1));
    NULL_CODE(hc_plist_builder_int64(NULL, 1));
    NULL_CODE(hc_plist_builder_uint64(NULL, 1));
    NULL_CODE(hc_plist_builder_real(NULL, 1.5));
    NULL_CODE(hc_plist_builder_bool(NULL, 1));
    NULL_CODE(hc_plist_builder_date(NULL, 0));
    NULL_CODE(hc_plist_builder_data(NULL, doc, 1));
    NULL_CODE(hc_plist_builder_data(pb, NULL, 1));
    NULL_CODE(hc_plist_builder_uid(NULL, 1));
    NULL_CODE(hc_plist_builder_begin_array(NULL));
    NULL_CODE(hc_plist_builder_end_array(NULL));
    NULL_CODE(hc_plist_builder_begin_dict(NULL));
    NULL_CODE(hc_plist_builder_end_dict(NULL));
    NULL_CODE(hc_plist_builder_finish(NULL, &made));
    NULL_CODE(hc_plist_builder_finish(pb, NULL));
    /* The NULL rows left the builder as it was: it still builds a value. */
    CHECK_CODE(hc_plist_builder_bool(pb, 1), HC_OK);
    CHECK_CODE(hc_plist_builder_finish(pb, &made), HC_OK);
    CHECK(made != NULL && hc_plist_bool(made, &b) == HC_OK && b == 1);
    hc_plist_free(made);
    hc_plist_builder_free(pb);

    /* "opts copied": the options freed, then a parse with a copy made before still applies them. */
    CHECK_CODE(hc_plist_options_set(o, HC_PLIST_MAX_DEPTH, 1), HC_OK);
    hc_handler *limited = hc_handler_plist_new(o);
    hc_plist_options_free(o);
    CHECK(limited != NULL);
    hc_handler_free(limited);

    /* A value set as a body is only read: the caller frees it after, and the request still sends. */
    CHECK_CODE(hc_request_set_plist_value(req, pl, HC_PLIST_BINARY), HC_OK);
    hc_plist_free(pl);
    hc_request_free(req);
}

PROMISES_MAIN(test_property_lists_keep_their_promises)
