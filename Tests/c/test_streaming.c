/* The streaming promise from C: batches hand over what is complete at the end of each chunk
 * (an item cut there goes on in the next batch), a token set from another thread stops a
 * transfer waiting on an idle connection at once, and the read timeout fails a silent one on
 * time while a long stream that never goes silent that long lives. */
#include "testutil.h"
#include <pthread.h>
#include <time.h>

static hc_client *client;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct batches {
    double start;
    double second_item_at;
    size_t items;
    char text[256];
};

static int on_batch(void *userdata, size_t prefix_index, const uint8_t *json, size_t len, size_t count) {
    (void)prefix_index;
    struct batches *b = userdata;
    b->items += count;
    if (b->items >= 2 && b->second_item_at == 0) b->second_item_at = now() - b->start;
    size_t used = strlen(b->text);
    if (used + len < sizeof b->text) { memcpy(b->text + used, json, len); b->text[used + len] = 0; }
    return 0;
}

/* {"items": [{"a": 1}, {"a": 2}, {"a"  ...3 s...  : 3}]}: the first two come before the hold ends,
 * and the third whole, once, in the next batch. */
static void test_batches_hand_over_the_items_complete_when_a_chunk_ends(void) {
    static const char *paths[] = {"items.item"};
    struct batches b = {0};
    hc_handler *h = hc_handler_json_batches_new(paths, 1, NULL, on_batch, &b);
    CHECK(h != NULL);
    hc_response *resp = NULL;
    b.start = now();
    /* base64 of {"items": [{"a": 1}, {"a": 2}, {"a": 3}]}, cut after {"a" (byte 35). */
    CHECK_CODE(hc_test_send(client, "GET", "/records/drip?b64=eyJpdGVtcyI6IFt7ImEiOiAxfSwgeyJhIjogMn0sIHsiYSI6IDN9XX0="
                            "&at=35&hold=2", h, &resp), HC_OK);
    CHECK(b.items == 3);
    CHECK(b.second_item_at > 0 && b.second_item_at < 1.0);
    CHECK(strcmp(b.text, "[{\"a\":1},{\"a\":2}][{\"a\":3}]") == 0);
    hc_response_free(resp);
    hc_handler_free(h);
}

static void *cancel_later(void *token) {
    usleep(300 * 1000);
    hc_cancel_cancel(token);
    return NULL;
}

static void test_a_token_set_elsewhere_stops_an_idle_transfer_at_once(void) {
    hc_cancel *token = hc_cancel_new();
    hc_request *req = hc_request_new("GET", hc_url("/stall?bytes=100"));
    CHECK_CODE(hc_request_set_cancel(req, token), HC_OK);
    pthread_t t;
    pthread_create(&t, NULL, cancel_later, token);
    double start = now();
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_ECANCELLED);
    CHECK(now() - start < 0.9);
    pthread_join(t, NULL);
    hc_request_free(req);
    hc_cancel_free(token);
}

static void test_read_timeouts(void) {
    hc_client *c = hc_client_new();
    CHECK_CODE(hc_client_set_read_timeout_ms(c, 400), HC_OK);
    hc_response *resp = NULL;
    double start = now();
    CHECK_CODE(hc_test_send(c, "GET", "/stall?bytes=100", NULL, &resp), HC_ETIMEOUT);
    double took = now() - start;
    CHECK(took > 0.35 && took < 1.5);
    CHECK(strstr(hc_error_message(hc_error_last()), "read timeout") != NULL);
    CHECK(hc_error_curl_code(hc_error_last()) == 28);

    /* Lines every 0.3 s for 1.2 s: longer than a total of 0.5 s, never silent for 0.4 s. */
    const char *drip = "/records/drip?b64=MQoyCjMKNAo1Cg==&at=2,4,6,8&hold=0.3&ctype=text/plain";
    CHECK_CODE(hc_test_send(c, "GET", drip, NULL, &resp), HC_OK);
    const uint8_t *data = NULL;
    size_t len = 0;
    CHECK_CODE(hc_response_bytes(resp, &data, &len), HC_OK);
    CHECK(len == 10);
    hc_response_free(resp);

    /* A request may lift the client's limit (HC_TIMEOUT_NONE) or set its own. */
    CHECK_CODE(hc_client_set_read_timeout_ms(c, 0), HC_OK);
    CHECK_CODE(hc_client_set_timeout_ms(c, 500), HC_OK);
    CHECK_CODE(hc_test_send(c, "GET", drip, NULL, &resp), HC_ETIMEOUT);
    hc_request *req = hc_request_new("GET", hc_url(drip));
    CHECK_CODE(hc_request_set_timeout_ms(req, HC_TIMEOUT_NONE), HC_OK);
    CHECK_CODE(hc_request_set_read_timeout_ms(req, 1000), HC_OK);
    CHECK_CODE(hc_request_set_connect_timeout_ms(req, 5000), HC_OK);
    CHECK_CODE(hc_client_send(c, req, &resp), HC_OK);
    hc_response_free(resp);
    CHECK_CODE(hc_request_set_read_timeout_ms(req, 100), HC_OK);
    CHECK_CODE(hc_client_send(c, req, &resp), HC_ETIMEOUT);
    CHECK_CODE(hc_request_set_read_timeout_ms(req, -2), HC_EINVALID_ARG);
    hc_request_free(req);
    hc_fetch_result fr;
    CHECK_CODE(hc_client_fetch(c, "GET", hc_url(drip), NULL, HC_TIMEOUT_NONE, -1, &fr), HC_OK);
    hc_response_free(fr.response);
    hc_client_free(c);
}

int main(void) {
    hc_test_server_start();
    client = hc_client_new();
    test_batches_hand_over_the_items_complete_when_a_chunk_ends();
    test_a_token_set_elsewhere_stops_an_idle_transfer_at_once();
    test_read_timeouts();
    hc_client_free(client);
    return hc_test_finish();
}
