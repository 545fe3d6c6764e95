/* Value transformers from C: any JSON scalar, both directions (the core decides where the
 * formats are; the C ABI only translates). */
#include "testutil.h"

/* Transformers from C: a decode callback per format (text -> value, freed by free_value with
 * the values), encode back to text for a request body; built-in formats give their text. */
struct money { long cents; };
struct transformer_log { int decoded, freed, refused; };

static void *decode_money(void *userdata, const char *text, size_t len) {
    struct transformer_log *log = userdata;
    char *end = NULL;
    double v = strtod(text, &end);
    if (len == 0 || end != text + len || len != strlen(text)) { log->refused++; return NULL; }
    struct money *m = malloc(sizeof *m);
    if (!m) return NULL;
    m->cents = (long)(v * 100 + (v < 0 ? -0.5 : 0.5));
    log->decoded++;
    return m;
}

static char *encode_money(void *userdata, const void *value) {
    (void)userdata;
    const struct money *m = value;
    if (!m || m->cents < 0) return NULL;
    char *out = malloc(32);
    if (out) snprintf(out, 32, "%ld.%02ld", m->cents / 100, m->cents % 100);
    return out;
}

static void free_money(void *userdata, void *value) {
    struct transformer_log *log = userdata;
    log->freed++;
    free(value);
}

static void test_c_transformers_both_directions(void) {
    struct transformer_log log = {0, 0, 0};
    hc_schema_options *o = hc_schema_options_new();
    CHECK_CODE(hc_schema_options_set_transformer_cb(o, "money", decode_money, encode_money, free_money, &log), HC_OK);
    CHECK_CODE(hc_schema_options_set_transformer_cb(o, "money", NULL, NULL, NULL, NULL), HC_EINVALID_ARG);
    const char *text = "{\"type\":\"object\",\"properties\":{\"price\":{\"type\":\"string\",\"format\":\"money\"},"
                       "\"items\":{\"type\":\"array\",\"items\":{\"format\":\"money\"}},"
                       "\"when\":{\"format\":\"date-time\"},\"note\":{\"anyOf\":[{\"type\":\"integer\",\"format\":\"money\"},{\"type\":\"string\"}]}}}";
    hc_schema *s = hc_schema_new_from_json((const uint8_t *)text, strlen(text), o);
    hc_schema_options_free(o); /* the schema keeps its callbacks */
    CHECK(s != NULL);
    if (!s) return;

    const char *doc = "{\"price\":\"12.34\",\"items\":[\"1.5\",\"0.25\"],\"when\":\"2024-05-01T12:00:00+02:00\",\"note\":\"7\"}";
    hc_schema_values *v = NULL;
    CHECK_CODE(hc_schema_transform(s, (const uint8_t *)doc, strlen(doc), &v), HC_OK);
    CHECK(hc_schema_values_count(v) == 4);   /* note: its money branch fails, so no annotation */
    CHECK(log.decoded == 3);
    ptrdiff_t i = hc_schema_values_find(v, "/price");
    CHECK(i >= 0);
    if (i >= 0) {
        const struct money *m = hc_schema_values_value(v, (size_t)i);
        CHECK(m && m->cents == 1234);
        CHECK(strcmp(hc_schema_values_format(v, (size_t)i), "money") == 0);
        CHECK(strcmp(hc_schema_values_text(v, (size_t)i), "12.34") == 0);
    }
    i = hc_schema_values_find(v, "/items/1");
    CHECK(i >= 0 && ((const struct money *)hc_schema_values_value(v, (size_t)i))->cents == 25);
    /* A built-in format: no value of ours, its text parsed by hc_schema_date_time. */
    i = hc_schema_values_find(v, "/when");
    CHECK(i >= 0);
    if (i >= 0) {
        CHECK(hc_schema_values_value(v, (size_t)i) == NULL);
        int64_t secs = 0;
        CHECK_CODE(hc_schema_date_time(hc_schema_values_text(v, (size_t)i), &secs, NULL, NULL), HC_OK);
        CHECK(secs == 1714557600);
    }
    CHECK(hc_schema_values_find(v, "/note") == -1);
    CHECK(hc_schema_values_path(v, 4) == NULL && hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    CHECK(hc_schema_values_value(v, 99) == NULL);
    CHECK(log.freed == 0);
    hc_schema_values_free(v);
    CHECK(log.freed == 3);

    /* Refused text: HC_ECALLBACK, and what was made is freed. Invalid: HC_EDECODE, nothing made. */
    const char *refused = "{\"price\":\"1\",\"items\":[\"2\",\"lots\"]}";
    v = (hc_schema_values *)&log;
    CHECK_CODE(hc_schema_transform(s, (const uint8_t *)refused, strlen(refused), &v), HC_ECALLBACK);
    CHECK(v == NULL);
    CHECK(log.refused == 1 && log.freed == log.decoded);
    const char *invalid = "{\"price\":5}";
    CHECK_CODE(hc_schema_transform(s, (const uint8_t *)invalid, strlen(invalid), &v), HC_EDECODE);
    CHECK(hc_error_schema_count(hc_error_last()) == 1);

    /* From a parsed value. */
    hc_json *parsed = NULL;
    CHECK_CODE(hc_json_parse((const uint8_t *)doc, strlen(doc), NULL, &parsed), HC_OK);
    CHECK_CODE(hc_schema_transform_json(s, parsed, &v), HC_OK);
    CHECK(hc_schema_values_count(v) == 4);
    hc_schema_values_free(v);
    hc_json_free(parsed);

    /* The request direction: a value back to text, then sent in a validated body. */
    struct money m = {4207};
    uint8_t *out = NULL;
    size_t out_len = 0;
    CHECK_CODE(hc_schema_encode(s, "money", &m, &out, &out_len), HC_OK);
    CHECK(out && out_len == 5 && strcmp((const char *)out, "42.07") == 0);
    char body[64];
    snprintf(body, sizeof body, "{\"price\":\"%s\"}", (const char *)out);
    hc_buffer_free(out);
    hc_request *req = hc_request_new("POST", hc_url("/echo"));
    CHECK_CODE(hc_request_set_json_body_schema(req, (const uint8_t *)body, strlen(body), s, 0), HC_OK);
    hc_request_free(req);
    struct money negative = {-1};
    CHECK_CODE(hc_schema_encode(s, "money", &negative, &out, &out_len), HC_EINVALID_ARG);
    CHECK(out == NULL);
    CHECK_CODE(hc_schema_encode(s, "nope", &m, &out, &out_len), HC_EINVALID_ARG);
    hc_schema_free(s);
    CHECK(log.freed == log.decoded);
}

/* Numbers and booleans have transformers too: "cents" on integers, with JSON text both ways. */
static void *decode_cents_json(void *userdata, const char *text, size_t len) {
    struct transformer_log *log = userdata;
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (len == 0 || end != text + len) { log->refused++; return NULL; }
    struct money *m = malloc(sizeof *m);
    if (!m) return NULL;
    m->cents = v;
    log->decoded++;
    return m;
}

static char *encode_cents_json(void *userdata, const void *value) {
    (void)userdata;
    const struct money *m = value;
    char *out = malloc(32);
    if (out && m) snprintf(out, 32, "%ld", m->cents);
    return out;
}

static void *decode_flag(void *userdata, const char *text, size_t len) {
    (void)userdata;
    int *v = malloc(sizeof *v);
    if (v) *v = len == 4 && memcmp(text, "true", 4) == 0;
    return v;
}

static void free_flag(void *userdata, void *value) {
    (void)userdata;
    free(value);
}

static void test_c_transformers_take_any_scalar(void) {
    struct transformer_log log = {0, 0, 0};
    hc_schema_options *o = hc_schema_options_new();
    CHECK_CODE(hc_schema_options_set_transformer_json_cb(o, "cents", decode_cents_json, encode_cents_json, free_money, &log), HC_OK);
    CHECK_CODE(hc_schema_options_set_transformer_cb(o, "flag", decode_flag, NULL, free_flag, NULL), HC_OK);
    CHECK_CODE(hc_schema_options_set_transformer_json_cb(o, "cents", NULL, NULL, NULL, NULL), HC_EINVALID_ARG);
    const char *text = "{\"type\":\"object\",\"properties\":{\"price\":{\"type\":\"integer\",\"format\":\"cents\"},"
                       "\"ok\":{\"type\":\"boolean\",\"format\":\"flag\"},\"when\":{\"format\":\"date-time\"}}}";
    hc_schema *s = hc_schema_new_from_json((const uint8_t *)text, strlen(text), o);
    hc_schema_options_free(o);
    CHECK(s != NULL);
    if (!s) return;
    const char *doc = "{\"price\":1999,\"ok\":true,\"when\":5}";
    hc_schema_values *v = NULL;
    CHECK_CODE(hc_schema_transform(s, (const uint8_t *)doc, strlen(doc), &v), HC_OK);
    /* when: date-time is a string transformer, 5 is left alone. */
    CHECK(hc_schema_values_count(v) == 2);
    ptrdiff_t i = hc_schema_values_find(v, "/price");
    CHECK(i >= 0 && ((const struct money *)hc_schema_values_value(v, (size_t)i))->cents == 1999);
    CHECK(i >= 0 && strcmp(hc_schema_values_text(v, (size_t)i), "1999") == 0);
    i = hc_schema_values_find(v, "/ok");
    CHECK(i >= 0 && *(const int *)hc_schema_values_value(v, (size_t)i) == 1);
    CHECK(hc_schema_values_find(v, "/when") == -1);
    hc_schema_values_free(v);
    CHECK(log.decoded == 1 && log.freed == 1);

    /* The request direction: a number, put in the body as it is and validated with it. */
    struct money m = {4207};
    uint8_t *out = NULL;
    size_t out_len = 0;
    CHECK_CODE(hc_schema_encode_json(s, "cents", &m, &out, &out_len), HC_OK);
    CHECK(out && out_len == 4 && strcmp((const char *)out, "4207") == 0);
    char body[64];
    snprintf(body, sizeof body, "{\"price\":%s}", out ? (const char *)out : "null");
    hc_buffer_free(out);
    hc_request *req = hc_request_new("POST", hc_url("/echo"));
    CHECK_CODE(hc_request_set_json_body_schema(req, (const uint8_t *)body, strlen(body), s, 0), HC_OK);
    const char *as_text = "{\"price\":\"42.07\"}";
    CHECK_CODE(hc_request_set_json_body_schema(req, (const uint8_t *)as_text, strlen(as_text), s, 0), HC_EINVALID_ARG);
    hc_request_free(req);
    hc_schema_free(s);
}

int main(void) {
    hc_test_server_start();
    test_c_transformers_both_directions();
    test_c_transformers_take_any_scalar();
    return hc_test_finish();
}
