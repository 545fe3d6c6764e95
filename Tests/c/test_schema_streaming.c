/* Schemas while the body streams: an invalid item at any depth fails the transfer at the chunk
 * that carries it (the core decides; the C ABI only reports). */
#include "testutil.h"
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void test_an_invalid_nested_item_fails_before_the_rest_is_sent(hc_client *client) {
    const char *text = "{\"type\":\"object\",\"properties\":{\"count\":{\"type\":\"integer\"},"
                       "\"items\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
                       "\"properties\":{\"id\":{\"type\":\"integer\",\"minimum\":0}}}}}}";
    hc_schema *s = hc_schema_new_from_json((const uint8_t *)text, strlen(text), NULL);
    CHECK(s != NULL);
    if (!s) return;
    hc_handler *h = hc_handler_json_new(NULL);
    CHECK_CODE(hc_handler_json_set_schema(h, s, 0), HC_OK);
    hc_schema_free(s);
    /* head {"count":3,"items":[{"id":1},{"id":-5}, then 8 s of silence, then {"id":3}]} */
    const char *path = "/json-hold?hold=8"
                       "&head=%7B%22count%22%3A3%2C%22items%22%3A%5B%7B%22id%22%3A1%7D%2C%7B%22id%22%3A-5%7D%2C"
                       "&tail=%7B%22id%22%3A3%7D%5D%7D";
    hc_response *resp = NULL;
    double started = now();
    CHECK_CODE(hc_test_send(client, "GET", path, h, &resp), HC_EDECODE);
    double took = now() - started;
    CHECK(took < 4.0);
    if (took >= 4.0) fprintf(stderr, "the error took %.1f s\n", took);
    const hc_error *err = hc_error_last();
    CHECK(hc_error_schema_count(err) == 1);
    const char *where = hc_error_schema_instance_path(err, 0);
    CHECK(where && strcmp(where, "/items/1/id") == 0);
    const char *keyword = hc_error_schema_keyword(err, 0);
    CHECK(keyword && strcmp(keyword, "minimum") == 0);
    CHECK(resp == NULL);
    hc_handler_free(h);
}

int main(void) {
    hc_test_server_start();
    hc_client *client = hc_client_new();
    test_an_invalid_nested_item_fails_before_the_rest_is_sent(client);
    hc_client_free(client);
    return hc_test_finish();
}
