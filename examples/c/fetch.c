/* fetch URL: prints the body of a GET to stdout, or the error to stderr.
 * Build: cc fetch.c $(pkg-config --cflags --libs httpcontent) */
#include <httpcontent.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s URL\n", argv[0]);
        return 2;
    }
    int status = 1;
    hc_client *client = hc_client_new();
    hc_request *request = hc_request_new("GET", argv[1]);
    hc_handler *handler = hc_handler_bytes_new(64 << 20);
    hc_response *response = NULL;
    if (!client || !request || !handler) goto fail;
    if (hc_request_set_handler(request, handler) != HC_OK) goto fail;
    if (hc_client_send(client, request, &response) != HC_OK) goto fail;

    const uint8_t *body;
    size_t len;
    if (hc_response_bytes(response, &body, &len) != HC_OK) goto fail;
    fwrite(body, 1, len, stdout);
    status = 0;
    goto done;
fail:
    fprintf(stderr, "error (%s): %s\n", hc_code_name(hc_error_code(hc_error_last())),
            hc_error_message(hc_error_last()));
done:
    hc_response_free(response);
    hc_handler_free(handler);
    hc_request_free(request);
    hc_client_free(client);
    return status;
}
