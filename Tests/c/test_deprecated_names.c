/* The names replaced when the fronts took one vocabulary (docs/concepts.md) still work for the
 * callers that use them (the Python binding's modules): the same values, the same functions.
 * The headers mark them deprecated; this file alone uses them, on purpose. */
#include "testutil.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static void test_old_code_names_are_the_new_codes(void) {
    CHECK(HC_EIO == HC_ELOCAL_IO && HC_ELOCAL_IO == 10);
    CHECK(HC_ECHECKSUM == HC_ECHECKSUM_MISMATCH && HC_ECHECKSUM_MISMATCH == 12);
}

static void test_old_function_names_call_the_new_ones(void) {
    hc_client *client = hc_client_new();
    CHECK_CODE(hc_client_set_verify_tls(client, 0), HC_OK);
    CHECK_CODE(hc_client_set_verify_tls(NULL, 1), HC_EINVALID_ARG);
    hc_client_free(client);

    hc_handler *plist = hc_handler_plist_pickle_new(NULL);
    hc_handler *xml = hc_handler_xml_pickle_new(NULL);
    CHECK(plist != NULL && xml != NULL);
    hc_handler_free(plist);
    hc_handler_free(xml);
    const uint8_t *data = NULL;
    size_t len = 0;
    CHECK_CODE(hc_response_plist_pickle(NULL, &data, &len), HC_EINVALID_ARG);
    CHECK_CODE(hc_response_xml_pickle(NULL, &data, &len), HC_EINVALID_ARG);
    CHECK(hc_handler_xml_batches_pickle_new(NULL, 0, NULL, NULL, NULL) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
}

int main(void) {
    (void)hc_url; (void)hc_test_server_start;  /* no server: nothing here is sent */
    int64_t before = hc_live_handles();
    test_old_code_names_are_the_new_codes();
    test_old_function_names_call_the_new_ones();
    CHECK(hc_live_handles() == before);
    hc_error_clear();
    return hc_test_finish();
}
