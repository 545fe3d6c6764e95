/* The speed options of issue 15 as the C front sets them: libcurl's buffers
 * (hc_client_set_buffer_sizes) and a download without fsync (HC_FILE_NO_FSYNC). */
#include "testutil.h"
#include <sys/stat.h>

static size_t largest_chunk;

static int record(void *userdata, const uint8_t *buf, size_t len) {
    (void)userdata; (void)buf;
    if (len > largest_chunk) largest_chunk = len;
    return 0;
}

static void test_the_receive_buffer_bounds_every_chunk(void) {
    hc_client *c = hc_client_new();
    CHECK_CODE(hc_client_set_buffer_sizes(c, 4096, 0), HC_OK);
    hc_handler *h = hc_handler_stream_cb_new(record, NULL);
    hc_response *resp = NULL;
    largest_chunk = 0;
    CHECK_CODE(hc_test_send(c, "GET", "/bytes/1000000", h, &resp), HC_OK);
    CHECK(hc_response_streamed(resp) == 1000000);
    CHECK(largest_chunk > 0 && largest_chunk <= 4096);
    hc_response_free(resp);
    /* Out of range: refused, and the client keeps its setting. */
    CHECK_CODE(hc_client_set_buffer_sizes(c, 1000, 0), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_buffer_sizes(c, (10u << 20) + 1, 0), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_buffer_sizes(c, 0, 1024), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_buffer_sizes(c, 0, (2u << 20) + 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_buffer_sizes(NULL, 0, 0), HC_EINVALID_ARG);
    largest_chunk = 0;
    CHECK_CODE(hc_test_send(c, "GET", "/bytes/100000", h, &resp), HC_OK);
    CHECK(largest_chunk <= 4096);
    hc_response_free(resp);
    CHECK_CODE(hc_client_set_buffer_sizes(c, 0, 0), HC_OK);   /* back to the defaults */
    CHECK_CODE(hc_test_send(c, "GET", "/bytes/100000", h, &resp), HC_OK);
    hc_response_free(resp);
    hc_handler_free(h);
    hc_client_free(c);
}

static void test_a_download_without_fsync_is_complete(void) {
    char dir[] = "/tmp/hc-speed-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[128];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    hc_client *c = hc_client_new();
    hc_handler *file = hc_handler_file_new(path, HC_FILE_NO_FSYNC);
    CHECK(file != NULL);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(c, "GET", "/bytes/300000", file, &resp), HC_OK);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == 300000);
    hc_response_free(resp);
    CHECK(hc_handler_file_new(path, 16u) == NULL);          /* an unknown flag */
    CHECK_CODE(hc_error_code(hc_error_last()), HC_EINVALID_ARG);
    hc_handler_free(file);
    hc_client_free(c);
    unlink(path);
    rmdir(dir);
}

int main(void) {
    hc_test_server_start();
    test_the_receive_buffer_bounds_every_chunk();
    test_a_download_without_fsync_is_complete();
    return hc_test_finish();
}
