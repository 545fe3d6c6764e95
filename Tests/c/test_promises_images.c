/* Decoded images: NULL rows of the section, and the lent pixel memory's promises.
 * (The audit of the headers' promises, issue 14: see promises.h.) */
#include "promises.h"
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------------------------ */
/* Decoded images (section landed during the audit)                                            */
/* ------------------------------------------------------------------------------------------ */

struct pixel_lender { int allocs, releases; void *given; size_t asked; };
static void *lend_pixels(void *u, size_t size) {
    struct pixel_lender *l = u;
    l->allocs++;
    l->asked = size;
    l->given = malloc(size);
    return l->given;
}
static void take_pixels_back(void *u, void *memory) {
    struct pixel_lender *l = u;
    l->releases++;
    if (memory == l->given) l->given = NULL;
    free(memory);
}

static void test_decoded_images_keep_their_promises(void) {
    hc_image_options *o = hc_image_options_new();
    int64_t v = 0;
    const uint8_t *d = NULL; size_t n = 0;
    uint8_t *out = NULL;
    static const uint8_t px[4] = {1, 2, 3, 4};
    /* NULL handles and required pointers. */
    cover("hc_image_options_new(");
    FREE_NULL(hc_image_options_free(NULL));
    NULL_CODE(hc_image_options_set(NULL, HC_IMAGE_MODE, HC_IMAGE_MODE_RGB));
    NULL_CODE(hc_image_options_get(NULL, HC_IMAGE_MODE, &v));
    NULL_CODE(hc_image_options_get(o, HC_IMAGE_MODE, NULL));
    NULL_CODE(hc_image_options_set_rows_cb(NULL, NULL, NULL));
    OPTIONAL_OK(hc_image_options_set_rows_cb(o, NULL, NULL));            /* NULL clears */
    NULL_CODE(hc_image_options_set_allocator(NULL, NULL, NULL, NULL));
    OPTIONAL_OK(hc_image_options_set_allocator(o, NULL, NULL, NULL));    /* NULL allocate: the default */
    cover("hc_handler_image_decode_new(");
    hc_handler *defaults = hc_handler_image_decode_new(NULL);            /* NULL: the defaults */
    CHECK(defaults != NULL);
    hc_handler_free(defaults);
    NULL_CODE(hc_response_image_attr(NULL, HC_IMAGE_ATTR_WIDTH, &v));
    NULL_CODE(hc_response_image_pixels(NULL, &d, &n));
    NULL_CODE(hc_response_image_encoded(NULL, &d, &n));
    NULL_CODE(hc_image_encode_png(NULL, 1, 1, 4, 4, &out, &n));
    NULL_CODE(hc_image_encode_png(px, 1, 1, 4, 4, NULL, &n));
    NULL_CODE(hc_image_encode_png(px, 1, 1, 4, 4, &out, NULL));

    /* Options "copied into each handler made from them"; pixels and the encoded body borrowed
     * until the response is freed; pixel memory from the allocator, released on the free. */
    struct pixel_lender lender = {0, 0, NULL, 0};
    CHECK_CODE(hc_image_options_set(o, HC_IMAGE_MODE, HC_IMAGE_MODE_RGB), HC_OK);
    CHECK_CODE(hc_image_options_set(o, HC_IMAGE_KEEP_ENCODED, 1), HC_OK);
    CHECK_CODE(hc_image_options_set_allocator(o, lend_pixels, take_pixels_back, &lender), HC_OK);
    hc_handler *h = hc_handler_image_decode_new(o);
    hc_image_options_free(o);
    hc_response *resp = NULL;
    hc_request *req = hc_request_new("GET", hc_url("/image/png"));
    hc_request_set_handler(req, h);
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    NULL_CODE(hc_response_image_attr(resp, HC_IMAGE_ATTR_WIDTH, NULL));
    NULL_CODE(hc_response_image_pixels(resp, NULL, &n));
    NULL_CODE(hc_response_image_encoded(resp, &d, NULL));
    int64_t w = 0, hgt = 0, ch = 0;
    CHECK_CODE(hc_response_image_attr(resp, HC_IMAGE_ATTR_WIDTH, &w), HC_OK);
    CHECK_CODE(hc_response_image_attr(resp, HC_IMAGE_ATTR_HEIGHT, &hgt), HC_OK);
    CHECK_CODE(hc_response_image_attr(resp, HC_IMAGE_ATTR_CHANNELS, &ch), HC_OK);
    CHECK(w == 3 && hgt == 2 && ch == 3);                    /* the freed options' mode */
    const uint8_t *pixels = NULL, *encoded = NULL; size_t pixels_len = 0, encoded_len = 0;
    CHECK_CODE(hc_response_image_pixels(resp, &pixels, &pixels_len), HC_OK);
    CHECK_CODE(hc_response_image_encoded(resp, &encoded, &encoded_len), HC_OK);
    CHECK(pixels_len == 18 && pixels != NULL && pixels == lender.given && lender.asked == 18);   /* that very memory */
    CHECK(encoded_len > 8 && encoded && memcmp(encoded, "\x89PNG", 4) == 0);
    uint8_t saved_pixels[18];
    if (pixels && pixels_len == 18) memcpy(saved_pixels, pixels, 18);
    uint8_t *saved_encoded = malloc(encoded_len);
    if (saved_encoded && encoded) memcpy(saved_encoded, encoded, encoded_len);
    hc_request_free(req);
    hc_handler_free(h);
    churn();
    CHECK(lender.releases == 0);                             /* still in use by the response */
    CHECK(pixels && pixels_len == 18 && memcmp(pixels, saved_pixels, 18) == 0);
    CHECK(saved_encoded && encoded && memcmp(encoded, saved_encoded, encoded_len) == 0);

    /* hc_image_encode_png: the caller's buffer; decoding it again gives the same pixels. */
    CHECK_CODE(hc_image_encode_png(pixels, 3, 2, 3, 9, &out, &n), HC_OK);
    hc_response_free(resp);
    CHECK(lender.allocs == 1 && lender.releases == 1 && lender.given == NULL);   /* released on the free */
    hc_request *back = hc_request_new("POST", hc_url("/echo/raw"));
    CHECK_CODE(hc_request_set_body(back, out, n, "image/png"), HC_OK);
    hc_buffer_free(out);
    hc_handler *again = hc_handler_image_decode_new(NULL);
    CHECK_CODE(hc_handler_accept_any_type(again), HC_OK);
    hc_request_set_handler(back, again);
    CHECK_CODE(hc_client_send(client, back, &resp), HC_OK);
    const uint8_t *rgba = NULL; size_t rgba_len = 0;
    CHECK_CODE(hc_response_image_pixels(resp, &rgba, &rgba_len), HC_OK);
    int same = rgba_len == 24;
    for (int i = 0; same && i < 6; i++)
        same = memcmp(rgba + 4 * i, saved_pixels + 3 * i, 3) == 0 && rgba[4 * i + 3] == 255;
    CHECK(same);
    /* Without HC_IMAGE_KEEP_ENCODED there is no encoded body; other handlers have no pixels. */
    CHECK_CODE(hc_response_image_encoded(resp, &d, &n), HC_EINVALID_ARG);
    hc_response_free(resp);
    hc_request_free(back);
    hc_handler_free(again);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/10", NULL, &resp), HC_OK);
    CHECK_CODE(hc_response_image_pixels(resp, &d, &n), HC_EINVALID_ARG);
    CHECK_CODE(hc_response_image_attr(resp, HC_IMAGE_ATTR_WIDTH, &v), HC_EINVALID_ARG);
    hc_response_free(resp);
    free(saved_encoded);
}

PROMISES_MAIN(test_decoded_images_keep_their_promises)
