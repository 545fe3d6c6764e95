/* Schemas: NULL rows of the section, optional pointers, and the references the handler and
 * request keep to a schema.
 * (The audit of the headers' promises, issue 14: see promises.h.) */
#include "promises.h"
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>

static void *decode_nothing(void *u, const char *t, size_t n) { (void)u; (void)t; (void)n; return NULL; }

/* Schemas: NULL handles and required pointers of every function of the section; optional
 * pointers; the handler and request keep their own reference to the schema. */
static void test_schemas_keep_their_promises(void) {
    hc_schema_options *o = hc_schema_options_new();
    hc_schema *sch = hc_schema_new_from_json((const uint8_t *)"{\"type\":\"object\"}", 17, NULL);  /* NULL opts */
    CHECK(o != NULL && sch != NULL);
    hc_json *doc = NULL;
    CHECK_CODE(hc_json_parse((const uint8_t *)"{}", 2, NULL, &doc), HC_OK);
    hc_plist *pl = NULL;
    CHECK_CODE(hc_plist_parse((const uint8_t *)"<plist><dict/></plist>", 22, NULL, &pl), HC_OK);
    hc_request *req = hc_request_new("POST", hc_url("/echo"));
    hc_handler *jh = hc_handler_json_new(NULL), *ph = hc_handler_plist_new(NULL);
    const uint8_t *d = NULL;
    uint8_t *out = NULL;
    size_t n = 0;
    int64_t secs = 0;
    int32_t ns = 0, off = 0;
    const uint8_t *obj = (const uint8_t *)"{}";

    cover("hc_schema_options_new(");
    FREE_NULL(hc_schema_options_free(NULL));
    NULL_CODE(hc_schema_options_add_remote(NULL, "u", obj, 2));
    NULL_CODE(hc_schema_options_add_remote(o, NULL, obj, 2));
    NULL_CODE(hc_schema_options_add_remote(o, "u", NULL, 2));
    NULL_CODE(hc_schema_options_add_transformer(NULL, "f"));
    NULL_CODE(hc_schema_options_add_transformer(o, NULL));
    NULL_CODE(hc_schema_options_set_assert_format(NULL, 1));
    NULL_PTR(hc_schema_new_from_json(NULL, 2, o));
    NULL_PTR(hc_schema_new_from_plist(NULL, 2, o));
    FREE_NULL(hc_schema_free(NULL));
    NULL_CODE(hc_schema_validate(NULL, obj, 2, 0));
    NULL_CODE(hc_schema_validate(sch, NULL, 2, 0));
    NULL_CODE(hc_schema_validate_json(NULL, doc, 0));
    NULL_CODE(hc_schema_validate_json(sch, NULL, 0));
    NULL_CODE(hc_schema_validate_plist(NULL, pl, 0));
    NULL_CODE(hc_schema_validate_plist(sch, NULL, 0));
    NULL_CODE(hc_handler_json_set_schema(NULL, sch, 0));
    OPTIONAL_OK(hc_handler_json_set_schema(jh, NULL, 0));                /* NULL removes it */
    NULL_CODE(hc_handler_plist_set_schema(NULL, sch, 0));
    OPTIONAL_OK(hc_handler_plist_set_schema(ph, NULL, 0));               /* NULL removes it */
    NULL_CODE(hc_request_set_json_body_schema(NULL, obj, 2, sch, 0));
    NULL_CODE(hc_request_set_json_body_schema(req, NULL, 2, sch, 0));
    NULL_CODE(hc_request_set_json_body_schema(req, obj, 2, NULL, 0));
    NULL_CODE(hc_request_set_plist_value_schema(NULL, pl, HC_PLIST_XML, sch, 0));
    NULL_CODE(hc_request_set_plist_value_schema(req, NULL, HC_PLIST_XML, sch, 0));
    NULL_CODE(hc_request_set_plist_value_schema(req, pl, HC_PLIST_XML, NULL, 0));
    NULL_CODE(hc_schema_format_annotations(NULL, obj, 2, &out, &n));
    NULL_CODE(hc_schema_format_annotations(sch, NULL, 2, &out, &n));
    NULL_CODE(hc_schema_format_annotations(sch, obj, 2, NULL, &n));
    NULL_CODE(hc_schema_format_annotations(sch, obj, 2, &out, NULL));
    NULL_CODE(hc_schema_plist_format_annotations(NULL, pl, &out, &n));
    NULL_CODE(hc_schema_plist_format_annotations(sch, NULL, &out, &n));
    NULL_CODE(hc_schema_plist_format_annotations(sch, pl, NULL, &n));
    NULL_CODE(hc_schema_plist_format_annotations(sch, pl, &out, NULL));
    NULL_CODE(hc_response_json_format_annotations(NULL, &d, &n));
    NULL_CODE(hc_schema_date_time(NULL, &secs, &ns, &off));
    OPTIONAL_OK(hc_schema_date_time("2024-01-01T00:00:00Z", NULL, NULL, NULL));   /* each pointer optional */
    cover("hc_schema_options_set_transformer_cb(");
    NULL_CODE(hc_schema_options_set_transformer_cb(NULL, "f", decode_nothing, NULL, NULL, NULL));
    NULL_CODE(hc_schema_options_set_transformer_cb(o, NULL, decode_nothing, NULL, NULL, NULL));
    NULL_CODE(hc_schema_options_set_transformer_cb(o, "f", NULL, NULL, NULL, NULL));
    OPTIONAL_OK(hc_schema_options_set_transformer_cb(o, "f", decode_nothing, NULL, NULL, NULL));  /* encode, free_value, userdata */
    cover("hc_schema_options_set_transformer_json_cb(");
    NULL_CODE(hc_schema_options_set_transformer_json_cb(NULL, "g", decode_nothing, NULL, NULL, NULL));
    NULL_CODE(hc_schema_options_set_transformer_json_cb(o, NULL, decode_nothing, NULL, NULL, NULL));
    NULL_CODE(hc_schema_options_set_transformer_json_cb(o, "g", NULL, NULL, NULL, NULL));
    OPTIONAL_OK(hc_schema_options_set_transformer_json_cb(o, "g", decode_nothing, NULL, NULL, NULL));
    hc_schema_values *vals = (hc_schema_values *)&n;
    NULL_CODE(hc_schema_transform(NULL, obj, 2, &vals));
    CHECK(vals == NULL);                                        /* "On failure *out is NULL" */
    NULL_CODE(hc_schema_transform(sch, NULL, 2, &vals));
    NULL_CODE(hc_schema_transform(sch, obj, 2, NULL));
    NULL_CODE(hc_schema_transform_json(NULL, doc, &vals));
    NULL_CODE(hc_schema_transform_json(sch, NULL, &vals));
    NULL_CODE(hc_schema_transform_json(sch, doc, NULL));
    FREE_NULL(hc_schema_values_free(NULL));
    NULL_VALUE(hc_schema_values_count(NULL), 0);
    NULL_PTR(hc_schema_values_path(NULL, 0));
    NULL_PTR(hc_schema_values_format(NULL, 0));
    NULL_PTR(hc_schema_values_text(NULL, 0));
    NULL_PTR(hc_schema_values_value(NULL, 0));
    NULL_VALUE(hc_schema_values_find(NULL, ""), -1);
    CHECK_CODE(hc_schema_transform(sch, obj, 2, &vals), HC_OK);
    NULL_VALUE(hc_schema_values_find(vals, NULL), -1);
    NULL_PTR(hc_schema_values_path(vals, 0));                   /* out of range: no values */
    hc_schema_values_free(vals);
    NULL_CODE(hc_schema_encode(NULL, "date", "x", &out, &n));
    NULL_CODE(hc_schema_encode(sch, NULL, "x", &out, &n));
    NULL_CODE(hc_schema_encode(sch, "date", "x", NULL, &n));
    NULL_CODE(hc_schema_encode(sch, "date", "x", &out, NULL));
    NULL_CODE(hc_schema_encode_json(NULL, "date", "x", &out, &n));
    NULL_CODE(hc_schema_encode_json(sch, NULL, "x", &out, &n));
    NULL_CODE(hc_schema_encode_json(sch, "date", "x", NULL, &n));
    NULL_CODE(hc_schema_encode_json(sch, "date", "x", &out, NULL));
    NULL_PTR(hc_error_sub_kind(NULL));
    NULL_VALUE(hc_error_schema_count(NULL), 0);
    NULL_PTR(hc_error_schema_instance_path(NULL, 0));
    NULL_PTR(hc_error_schema_path(NULL, 0));
    NULL_PTR(hc_error_schema_keyword(NULL, 0));
    NULL_PTR(hc_error_schema_message(NULL, 0));

    /* Out of range: NULL, and the error being read is left as it was. */
    CHECK_CODE(hc_schema_validate(sch, (const uint8_t *)"1", 1, 0), HC_EDECODE);
    const hc_error *last = hc_error_last();
    CHECK(hc_error_schema_count(last) == 1 && hc_error_schema_keyword(last, 1) == NULL);
    CHECK(hc_error_last() == last && strcmp(hc_error_sub_kind(last), "schema") == 0);

    /* Handlers and requests keep their own reference: the schema freed first, then used. */
    CHECK_CODE(hc_handler_plist_set_schema(ph, sch, 0), HC_OK);
    CHECK_CODE(hc_request_set_plist_value_schema(req, pl, HC_PLIST_XML, sch, 0), HC_OK);
    hc_schema_free(sch);
    hc_request *back = hc_request_new("POST", hc_url("/plist"));
    CHECK_CODE(hc_request_set_plist_value(back, pl, HC_PLIST_XML), HC_OK);
    CHECK_CODE(hc_request_set_handler(back, ph), HC_OK);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, back, &resp), HC_OK);
    CHECK(hc_plist_type(hc_response_plist(resp)) == HC_PLIST_DICT);
    hc_response_free(resp);
    hc_request_free(back);

    hc_handler_free(jh);
    hc_handler_free(ph);
    hc_request_free(req);
    hc_plist_free(pl);
    hc_json_free(doc);
    hc_schema_options_free(o);
    hc_error_clear();
}

PROMISES_MAIN(test_schemas_keep_their_promises)
