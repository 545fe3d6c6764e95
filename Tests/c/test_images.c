/* Decoded images from C (issue 17): pixels checked against Pillow's (served by the test server's
 * /pixels-expected, see Tests/server/imagecorpus.py), the pixel cap refusing a bomb before any
 * allocation, truncated bodies, the rows callback, lent memory, options and PNG encoding. */
#include "testutil.h"

static hc_client *client;

static hc_code get(const char *path, hc_handler *handler, hc_response **out) {
    return hc_test_send(client, "GET", path, handler, out);
}

static int64_t attr(hc_response *r, hc_image_attr a) {
    int64_t v = -1;
    CHECK_CODE(hc_response_image_attr(r, a, &v), HC_OK);
    return v;
}

/* Decodes /pixels/NAME in `mode` (chunked by `chunk` bytes when > 0) and compares with Pillow. */
static void check_against_pillow(const char *name, hc_image_mode mode, int chunk) {
    char path[256];
    hc_image_options *opts = hc_image_options_new();
    CHECK_CODE(hc_image_options_set(opts, HC_IMAGE_MODE, mode), HC_OK);
    hc_handler *h = hc_handler_image_decode_new(opts);
    hc_image_options_free(opts);
    hc_response *r = NULL, *want = NULL;
    snprintf(path, sizeof path, "/pixels/%s?chunk=%d", name, chunk);
    CHECK_CODE(get(path, h, &r), HC_OK);
    snprintf(path, sizeof path, "/pixels-expected/%s?mode=%s", name,
             mode == HC_IMAGE_MODE_RGBA ? "RGBA" : mode == HC_IMAGE_MODE_RGB ? "RGB" : "L");
    CHECK_CODE(get(path, NULL, &want), HC_OK);
    if (r && want) {
        const uint8_t *px = NULL, *ex = NULL;
        size_t n = 0, en = 0;
        CHECK_CODE(hc_response_image_pixels(r, &px, &n), HC_OK);
        CHECK_CODE(hc_response_bytes(want, &ex, &en), HC_OK);
        CHECK(attr(r, HC_IMAGE_ATTR_WIDTH) == atoll(hc_response_header(want, "X-Width")));
        CHECK(attr(r, HC_IMAGE_ATTR_HEIGHT) == atoll(hc_response_header(want, "X-Height")));
        CHECK(attr(r, HC_IMAGE_ATTR_CHANNELS) == mode);
        CHECK(attr(r, HC_IMAGE_ATTR_STRIDE) == attr(r, HC_IMAGE_ATTR_WIDTH) * mode);
        CHECK(n == en);
        int exact = strcmp(hc_response_header(want, "X-Exact"), "1") == 0, worst = 0;
        for (size_t i = 0; i < n && i < en; i++) {
            int d = abs((int)px[i] - (int)ex[i]);
            if (d > worst) worst = d;
        }
        if (!(exact ? worst == 0 : worst <= 2))
            fprintf(stderr, "%s mode %d: a channel differs from Pillow's by %d\n", name, mode, worst);
        CHECK(exact ? worst == 0 : worst <= 2);
    }
    hc_response_free(r);
    hc_response_free(want);
    hc_handler_free(h);
}

static void test_pixels_match_pillow(void) {
    static const char *names[] = {"png-ct0-1", "png-ct0-16", "png-ct2-16-adam7", "png-ct3-4", "png-ct4-8",
                                  "png-ct6-16", "png-palette-trns", "png-rgb-trns", "jpeg-baseline",
                                  "jpeg-progressive", "jpeg-cmyk", "jpeg-gray", "gif-transparent",
                                  "gif-interlaced", "webp-lossy", "webp-lossless-alpha", "webp-lossy-alpha"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        check_against_pillow(names[i], HC_IMAGE_MODE_RGBA, 0);
        check_against_pillow(names[i], HC_IMAGE_MODE_RGB, 5);
        check_against_pillow(names[i], HC_IMAGE_MODE_L, 0);
    }
}

static int allocations;
static void *count_alloc(void *userdata, size_t size) { (void)userdata; allocations++; return malloc(size); }
static void release_alloc(void *userdata, void *memory) { (void)userdata; free(memory); }

/* 2.5 gigapixels claimed by a tiny PNG: HC_ETOO_LARGE, and the allocator is never asked. */
static void test_bomb_is_refused_before_allocating(void) {
    hc_image_options *opts = hc_image_options_new();
    CHECK_CODE(hc_image_options_set_allocator(opts, count_alloc, release_alloc, NULL), HC_OK);
    hc_handler *h = hc_handler_image_decode_new(opts);
    hc_response *r = NULL;
    allocations = 0;
    CHECK_CODE(get("/pixels/bomb", h, &r), HC_ETOO_LARGE);
    CHECK(strstr(hc_error_message(hc_error_last()), "50000x50000") != NULL);
    CHECK(allocations == 0);
    /* The same handler fills the caller's memory for an image within the cap. */
    CHECK_CODE(get("/pixels/png-ct6-8", h, &r), HC_OK);
    CHECK(allocations == 1);
    const uint8_t *px = NULL; size_t n = 0;
    CHECK_CODE(hc_response_image_pixels(r, &px, &n), HC_OK);
    CHECK(n == 13 * 11 * 4);
    hc_response_free(r);
    hc_handler_free(h);
    /* A cap of 142 pixels refuses the 13x11 image; 143 takes it. */
    CHECK_CODE(hc_image_options_set(opts, HC_IMAGE_MAX_PIXELS, 142), HC_OK);
    h = hc_handler_image_decode_new(opts);
    CHECK_CODE(get("/pixels/png-ct6-8", h, &r), HC_ETOO_LARGE);
    hc_handler_free(h);
    CHECK_CODE(hc_image_options_set(opts, HC_IMAGE_MAX_PIXELS, 143), HC_OK);
    h = hc_handler_image_decode_new(opts);
    CHECK_CODE(get("/pixels/png-ct6-8", h, &r), HC_OK);
    hc_response_free(r);
    hc_handler_free(h);
    hc_image_options_free(opts);
}

static void test_truncated_and_wrong_bodies_are_decode_errors(void) {
    hc_handler *h = hc_handler_image_decode_new(NULL);
    hc_response *r = NULL;
    static const char *paths[] = {"/pixels/png-ct2-8?truncate=100", "/pixels/jpeg-progressive?truncate=500",
                                  "/pixels/gif-animated?truncate=400", "/pixels/webp-lossy?truncate=200",
                                  "/pixels/png-ct2-8?truncate=5", "/pixels/png-ct2-8?ctype=image/gif",
                                  "/bytes/64?ctype=image/png", "/image/bmp"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        CHECK_CODE(get(paths[i], h, &r), HC_EDECODE);
    }
    hc_handler_free(h);
}

static int rows_seen[64], rows_calls;
static int on_rows(void *userdata, uint32_t first, uint32_t count) {
    (void)userdata;
    rows_calls++;
    for (uint32_t y = first; y < first + count && y < 64; y++) rows_seen[y]++;
    return 0;
}
static int stop_rows(void *userdata, uint32_t first, uint32_t count) {
    (void)userdata; (void)first; (void)count;
    return HC_ECALLBACK;
}

static void test_rows_callback_and_attributes(void) {
    hc_image_options *opts = hc_image_options_new();
    CHECK_CODE(hc_image_options_set_rows_cb(opts, on_rows, NULL), HC_OK);
    hc_handler *h = hc_handler_image_decode_new(opts);
    hc_response *r = NULL;
    memset(rows_seen, 0, sizeof rows_seen);
    rows_calls = 0;
    CHECK_CODE(get("/pixels/jpeg-baseline?chunk=40", h, &r), HC_OK);
    CHECK(rows_calls > 1);
    int each_once = 1;
    for (int y = 0; y < 32; y++) each_once &= rows_seen[y] == 1;
    CHECK(each_once);
    CHECK(attr(r, HC_IMAGE_ATTR_FORMAT) == HC_IMAGE_JPEG);
    CHECK(attr(r, HC_IMAGE_ATTR_HAS_ALPHA) == 0 && attr(r, HC_IMAGE_ATTR_FRAME_COUNT) == 1);
    hc_response_free(r);
    hc_handler_free(h);
    CHECK_CODE(hc_image_options_set_rows_cb(opts, stop_rows, NULL), HC_OK);
    h = hc_handler_image_decode_new(opts);
    CHECK_CODE(get("/pixels/png-ct2-8", h, &r), HC_ECALLBACK);
    hc_handler_free(h);
    hc_image_options_free(opts);

    h = hc_handler_image_decode_new(NULL);
    CHECK_CODE(get("/pixels/gif-animated", h, &r), HC_OK);
    CHECK(attr(r, HC_IMAGE_ATTR_FRAME_COUNT) == 3 && attr(r, HC_IMAGE_ATTR_FORMAT) == HC_IMAGE_GIF);
    const uint8_t *enc = NULL; size_t elen = 0;
    CHECK_CODE(hc_response_image_encoded(r, &enc, &elen), HC_EINVALID_ARG);   /* not kept */
    CHECK_CODE(hc_response_image_attr(r, (hc_image_attr)99, &(int64_t){0}), HC_EINVALID_ARG);
    hc_response_free(r);
    CHECK_CODE(get("/pixels/jpeg-exif-6", h, &r), HC_OK);
    CHECK(attr(r, HC_IMAGE_ATTR_ORIENTATION) == 6 && attr(r, HC_IMAGE_ATTR_WIDTH) == 24);
    hc_response_free(r);
    hc_handler_free(h);
    opts = hc_image_options_new();
    hc_image_options_set(opts, HC_IMAGE_APPLY_ORIENTATION, 1);
    hc_image_options_set(opts, HC_IMAGE_KEEP_ENCODED, 1);
    h = hc_handler_image_decode_new(opts);
    CHECK_CODE(get("/pixels/jpeg-exif-6", h, &r), HC_OK);
    CHECK(attr(r, HC_IMAGE_ATTR_WIDTH) == 16 && attr(r, HC_IMAGE_ATTR_HEIGHT) == 24);
    CHECK_CODE(hc_response_image_encoded(r, &enc, &elen), HC_OK);
    CHECK(elen > 100 && enc[0] == 0xFF && enc[1] == 0xD8);
    hc_response_free(r);
    /* HEAD: no image, every attribute 0 */
    CHECK_CODE(hc_test_send(client, "HEAD", "/pixels/png-ct2-8", h, &r), HC_OK);
    CHECK(attr(r, HC_IMAGE_ATTR_FORMAT) == HC_IMAGE_NONE && attr(r, HC_IMAGE_ATTR_WIDTH) == 0);
    hc_response_free(r);
    hc_handler_free(h);
    hc_image_options_free(opts);
}

static void test_options_defaults_and_bad_arguments(void) {
    hc_image_options *opts = hc_image_options_new();
    int64_t v = -1;
    CHECK_CODE(hc_image_options_get(opts, HC_IMAGE_MODE, &v), HC_OK);
    CHECK(v == HC_IMAGE_MODE_RGBA);
    CHECK_CODE(hc_image_options_get(opts, HC_IMAGE_MAX_PIXELS, &v), HC_OK);
    CHECK(v == 100000000);
    CHECK_CODE(hc_image_options_get(opts, HC_IMAGE_APPLY_ORIENTATION, &v), HC_OK);
    CHECK(v == 0);
    CHECK_CODE(hc_image_options_get(opts, HC_IMAGE_KEEP_ENCODED, &v), HC_OK);
    CHECK(v == 0);
    CHECK_CODE(hc_image_options_set(opts, HC_IMAGE_MODE, 2), HC_EINVALID_ARG);
    CHECK_CODE(hc_image_options_set(opts, HC_IMAGE_MAX_PIXELS, 0), HC_EINVALID_ARG);
    CHECK_CODE(hc_image_options_set(opts, (hc_image_option)77, 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_image_options_set(NULL, HC_IMAGE_MODE, 4), HC_EINVALID_ARG);
    CHECK_CODE(hc_response_image_pixels(NULL, NULL, NULL), HC_EINVALID_ARG);
    hc_image_options_free(opts);
    hc_image_options_free(NULL);
    /* A bytes response is not a decoded image. */
    hc_response *r = NULL;
    CHECK_CODE(get("/bytes/10", NULL, &r), HC_OK);
    const uint8_t *px; size_t n;
    CHECK_CODE(hc_response_image_pixels(r, &px, &n), HC_EINVALID_ARG);
    hc_response_free(r);
}

/* PNG encoding round trip: encode 3x2 RGBA pixels, send them to /echo/raw, decode them back. */
static void test_png_encode_round_trips(void) {
    const uint8_t px[3 * 2 * 4] = {255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 255, 0,
                                   1, 2, 3, 4, 50, 60, 70, 80, 200, 210, 220, 230};
    uint8_t *png = NULL; size_t len = 0;
    CHECK_CODE(hc_image_encode_png(px, 3, 2, 4, 12, &png, &len), HC_OK);
    CHECK_CODE(hc_image_encode_png(px, 3, 2, 4, 11, &png, &len), HC_EINVALID_ARG);
    hc_request *req = hc_request_new("POST", hc_url("/echo/raw"));
    hc_request_set_body(req, png, len, "image/png");
    hc_handler *h = hc_handler_image_decode_new(NULL);
    hc_handler_accept_any_type(h);
    hc_request_set_handler(req, h);
    hc_response *r = NULL;
    CHECK_CODE(hc_client_send(client, req, &r), HC_OK);
    const uint8_t *back = NULL; size_t n = 0;
    CHECK_CODE(hc_response_image_pixels(r, &back, &n), HC_OK);
    CHECK(n == sizeof px && back && memcmp(back, px, n) == 0);
    hc_response_free(r);
    hc_handler_free(h);
    hc_request_free(req);
    hc_buffer_free(png);
}

int main(void) {
    hc_test_server_start();
    client = hc_client_new();
    test_pixels_match_pillow();
    test_bomb_is_refused_before_allocating();
    test_truncated_and_wrong_bodies_are_decode_errors();
    test_rows_callback_and_attributes();
    test_options_defaults_and_bad_arguments();
    test_png_encode_round_trips();
    hc_client_free(client);
    CHECK(hc_live_handles() == 0);
    return hc_test_finish();
}
