/* Hostile documents: JSON nested a million deep, invalid UTF-8 in strict text, an image whose
 * header lies about its size.
 * (Hostile servers and the security defaults: see hostile.h.) */
#include "hostile.h"

/* ---------------------------------------------------------------- bodies */

static int count_items(void *userdata, size_t prefix_index, const hc_json *value) {
    (void)userdata; (void)prefix_index; (void)value;
    return 0;
}

static void test_json_nested_a_million_deep_is_refused_by_depth_or_parsed_without_recursion(void) {
    begin();
    /* The default depth limit (512) stops it at the 513th byte (offset 512), long before the body ends. */
    CHECK_CODE(get("/deep-json?depth=1000000", hc_handler_json_new(NULL), NULL), HC_EDECODE);
    CHECK(hc_error_offset(hc_error_last()) == 512);
    const char *prefixes[] = {"item"};
    CHECK_CODE(get("/deep-json?depth=1000000", hc_handler_json_items_new(prefixes, 1, NULL, count_items, NULL), NULL),
               HC_EDECODE);
    /* With the limit raised, the whole tree is built, read and freed without recursing. Under
     * valgrind (30x slower) 200,000 levels, still far beyond what recursion would survive. */
    long levels = getenv("HC_UNDER_VALGRIND") ? 200000 : 1000000;
    char deep[64];
    snprintf(deep, sizeof deep, "/deep-json?depth=%ld", levels);
    hc_json_options *opts = hc_json_options_new();
    CHECK_CODE(hc_json_options_set(opts, HC_JSON_MAX_DEPTH, 2000000), HC_OK);
    hc_response *r = NULL;
    CHECK_CODE(send_on(client, url(deep), hc_handler_json_new(opts), &r, NULL), HC_OK);
    const hc_json *node = hc_response_json(r);
    long depth = 0;
    while (node && hc_json_type(node) == HC_JSON_ARRAY && hc_json_array_length(node) == 1) {
        node = hc_json_array_at(node, 0);
        depth++;
    }
    CHECK(depth == levels - 1 && node && hc_json_type(node) == HC_JSON_ARRAY && hc_json_array_length(node) == 0);
    hc_response_free(r);
    hc_json_options_free(opts);
    end();
}

static void test_json_nested_a_million_deep_is_streamed_through_text_and_bytes(void) {
    begin();
    hc_response *r = NULL;
    CHECK_CODE(send_on(client, url("/deep-json?depth=1000000"), hc_handler_text_new(HC_ENCODING_AUTO, 1), &r, NULL),
               HC_OK);
    const char *text; size_t len = 0;
    CHECK(hc_response_text(r, &text, &len) == HC_OK && len == 2000000);
    CHECK(len == 2000000 && text[0] == '[' && text[999999] == '[' && text[1000000] == ']' && text[1999999] == ']');
    hc_response_free(r);
    CHECK_CODE(get("/deep-json?depth=1000000", hc_handler_bytes_new(1000000), NULL), HC_ETOO_LARGE);
    end();
}

static void test_invalid_utf8_in_strict_text_is_a_decode_error_at_its_offset(void) {
    static const char *kinds[] = {"invalid", "overlong", "surrogate", "too-big", "continuation", "truncated"};
    begin();
    for (int i = 0; i < 6; i++) {
        char path[64];
        snprintf(path, sizeof path, "/bad-utf8/%s", kinds[i]);
        CHECK_CODE(get(path, hc_handler_text_new(HC_ENCODING_AUTO, 1), NULL), HC_EDECODE);
        CHECK(hc_error_offset(hc_error_last()) == 3);
    }
    end();
}

static void test_an_image_whose_header_lies_about_its_size_is_refused(void) {
    static const char *kinds[] = {"png", "gif", "bmp", "jpeg", "zero", "short"};
    begin();
    for (int i = 0; i < 6; i++) {
        char path[64];
        snprintf(path, sizeof path, "/lying-image/%s", kinds[i]);
        CHECK_CODE(get(path, hc_handler_image_new(), NULL), HC_EDECODE);
        CHECK((strstr(hc_error_message(hc_error_last()), "claims") != NULL) == (i < 5));
    }
    end();
}

HOSTILE_MAIN(test_json_nested_a_million_deep_is_refused_by_depth_or_parsed_without_recursion,
             test_json_nested_a_million_deep_is_streamed_through_text_and_bytes,
             test_invalid_utf8_in_strict_text_is_a_decode_error_at_its_offset,
             test_an_image_whose_header_lies_about_its_size_is_refused)
