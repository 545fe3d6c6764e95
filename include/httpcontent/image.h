/*
 * httpcontent/image.h — decoded images (PNG, JPEG, GIF, WebP) as pixels.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_IMAGE_H
#define HTTPCONTENT_IMAGE_H

#include "httpcontent/core.h"

HC_BEGIN_DECL

/* ------------------------------------------------------------------------------------------ */
/* Decoded images                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* hc_handler_image_decode_new decodes PNG (libpng's progressive reader), JPEG (libjpeg-turbo,
 * suspending source), WebP (libwebp's incremental decoder) and GIF (giflib, first frame; GIF is
 * buffered, giflib has no push API) while the body arrives: the pixels are ready when the last
 * byte is. The format is sniffed from the bytes; a declared image type that disagrees is
 * HC_EDECODE. Pixels are 8 bits per channel, row-major, tightly packed (stride = width x
 * channels); 16-bit channels keep their high byte; gray from colour is Rec.601 luma as Pillow
 * computes it. A header claiming more pixels than the cap fails with HC_ETOO_LARGE before any
 * pixel memory is taken; truncated, corrupt or lying images fail with HC_EDECODE. The encoded
 * body is not kept unless HC_IMAGE_KEEP_ENCODED asks. BMP is recognised but not decoded
 * (HC_EDECODE). */

/** Decode options, copied into each handler made from them. */
typedef struct hc_image_options hc_image_options;

/** The pixel layouts (the value is the channel count). */
typedef enum hc_image_mode {
    HC_IMAGE_MODE_L = 1,                /**< Gray (Rec.601 luma of colour images). */
    HC_IMAGE_MODE_RGB = 3,              /**< Red, green, blue; alpha dropped, not composited. */
    HC_IMAGE_MODE_RGBA = 4              /**< Red, green, blue, alpha (default); 255 when opaque. */
} hc_image_mode;

/** The options of hc_image_options_set / _get. */
typedef enum hc_image_option {
    HC_IMAGE_MODE = 1,                  /**< An hc_image_mode. Default HC_IMAGE_MODE_RGBA. */
    HC_IMAGE_MAX_PIXELS = 2,            /**< Largest width x height decoded (>= 1). Default 100000000. */
    HC_IMAGE_APPLY_ORIENTATION = 3,     /**< Non-zero: rotate/flip JPEGs by their EXIF orientation
                                             (width and height swap for 5-8). Default 0. */
    HC_IMAGE_KEEP_ENCODED = 4           /**< Non-zero: keep the encoded body too
                                             (hc_response_image_encoded). Default 0. */
} hc_image_option;

/** Options with every default. The caller owns the result and frees it with hc_image_options_free. */
HC_EXTERN hc_image_options *hc_image_options_new(void);

/** Frees the options. Handlers made from them keep their own copy. NULL is a no-op. */
HC_EXTERN void hc_image_options_free(hc_image_options *opts);

/** Sets one option; an unknown option or a value out of range is HC_EINVALID_ARG. */
HC_EXTERN hc_code hc_image_options_set(hc_image_options *opts, hc_image_option option, int64_t value);

/** Reads one option into *value. */
HC_EXTERN hc_code hc_image_options_get(const hc_image_options *opts, hc_image_option option, int64_t *value);

/** Called with output rows [first_row, first_row + row_count) once they are decoded, at most
 *  once per chunk received plus once at the end (interlaced PNG: as passes update rows, then
 *  every row; progressive JPEG: once the last scan is in; an applied orientation: every row at
 *  the end). Runs on the transfer's thread. Return 0 to continue, or an hc_code to stop the
 *  transfer (HC_ECALLBACK when in doubt). */
typedef int (*hc_image_rows_cb)(void *userdata, uint32_t first_row, uint32_t row_count);

/** Sets (or with NULL clears) the rows callback. Borrowed: `userdata` must stay valid while
 *  requests with handlers made from these options run. */
HC_EXTERN hc_code hc_image_options_set_rows_cb(hc_image_options *opts, hc_image_rows_cb cb, void *userdata);

/** Asks `allocate` for the pixel memory (width x height x channels bytes) once the header is
 *  read, so hc_response_image_pixels returns that very memory; NULL from `allocate` means the
 *  library's own. `release` (may be NULL) is called when the response no longer uses it (on
 *  hc_response_free, or when the transfer fails). `release` and `userdata` must stay valid until
 *  every response filled this way is freed. NULL `allocate` restores the default. */
HC_EXTERN hc_code hc_image_options_set_allocator(hc_image_options *opts, hc_alloc_cb allocate,
                                                 hc_release_cb release, void *userdata);

/** A handler decoding images to pixels with `opts` (NULL: the defaults), read with
 *  hc_response_image_attr and hc_response_image_pixels. hc_handler_set_max_size limits the
 *  encoded body (HC_ETOO_LARGE). Accepts 200-299, image/ types; an allowed empty response
 *  (204, HEAD) has no image. The caller owns the result and frees it with hc_handler_free. */
HC_EXTERN hc_handler *hc_handler_image_decode_new(const hc_image_options *opts);

/** The attributes of hc_response_image_attr. */
typedef enum hc_image_attr {
    HC_IMAGE_ATTR_FORMAT = 1,           /**< An hc_image_format value; HC_IMAGE_NONE for an empty response. */
    HC_IMAGE_ATTR_WIDTH = 2,            /**< Pixels per row (after an applied orientation). */
    HC_IMAGE_ATTR_HEIGHT = 3,           /**< Rows. */
    HC_IMAGE_ATTR_CHANNELS = 4,         /**< 4, 3 or 1, as the hc_image_mode. */
    HC_IMAGE_ATTR_STRIDE = 5,           /**< Bytes per row: width x channels. */
    HC_IMAGE_ATTR_HAS_ALPHA = 6,        /**< 1 if the source had alpha or a transparent colour. */
    HC_IMAGE_ATTR_ORIENTATION = 7,      /**< The JPEG's EXIF orientation 1-8 (1 when absent). */
    HC_IMAGE_ATTR_FRAME_COUNT = 8       /**< Frames in the file (GIF); 1 for other formats. */
} hc_image_attr;

/** Reads one attribute of a decoded image into *value (0 for every attribute of an allowed
 *  empty response). HC_EINVALID_ARG for other handlers or an unknown attribute. */
HC_EXTERN hc_code hc_response_image_attr(const hc_response *response, hc_image_attr attr, int64_t *value);

/** The pixels: sets *data and *len (width x height x channels bytes; NULL and 0 for an empty
 *  response). Borrowed: valid until the response is freed. Not NUL-terminated. */
HC_EXTERN hc_code hc_response_image_pixels(const hc_response *response, const uint8_t **data, size_t *len);

/** The encoded body, when HC_IMAGE_KEEP_ENCODED was set (else HC_EINVALID_ARG). Borrowed: valid
 *  until the response is freed. */
HC_EXTERN hc_code hc_response_image_encoded(const hc_response *response, const uint8_t **data, size_t *len);

/** Encodes 8-bit pixels as PNG with libpng: `channels` 1 (gray), 2 (gray + alpha), 3 (RGB) or 4
 *  (RGBA), rows `stride` bytes apart (e.g. a decoded image's pixels, to save a copy). An invalid
 *  layout is HC_EINVALID_ARG. The caller owns *out and frees it with hc_buffer_free. */
HC_EXTERN hc_code hc_image_encode_png(const uint8_t *pixels, uint32_t width, uint32_t height, int channels,
                                      size_t stride, uint8_t **out, size_t *len);

HC_END_DECL

#endif /* HTTPCONTENT_IMAGE_H */
