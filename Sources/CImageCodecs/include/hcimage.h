/* Push decoders for PNG (libpng's progressive reader), JPEG (libjpeg-turbo with a suspending
 * source manager), WebP (libwebp's incremental decoder) and GIF (giflib; buffered: giflib has no
 * push API), plus a PNG encoder. Internal to httpcontent: the Swift core (Sources/HTTPContent/
 * Image) drives them; nothing here is exported from libhttpcontent.so (the names are not hc_*).
 * libpng and libjpeg report errors by longjmp, which Swift cannot do: every setjmp lives here. */
#ifndef HCIMAGE_H
#define HCIMAGE_H

#include <stddef.h>
#include <stdint.h>

typedef enum hcimg_format { HCIMG_PNG = 1, HCIMG_JPEG = 2, HCIMG_GIF = 3, HCIMG_WEBP = 4 } hcimg_format;

/* Results of feed and finish. */
enum { HCIMG_OK = 0, HCIMG_ERROR = -1, HCIMG_STOPPED = -2 };

/* What the decoder calls back. `begin` runs once the header is read, before any large allocation:
 * it gets the output size (after orientation, when applied) and returns memory for
 * width * height * channels bytes, or NULL to stop (the owner keeps its reason; feed then returns
 * HCIMG_STOPPED). `rows` reports output rows [first, first + count) final; non-zero stops. */
typedef struct hcimg_sink {
    void *ctx;
    uint8_t *(*begin)(void *ctx, uint32_t width, uint32_t height, int channels);
    int (*rows)(void *ctx, uint32_t first, uint32_t count);
} hcimg_sink;

typedef struct hcimg_decoder hcimg_decoder;

/* channels: 4 (RGBA), 3 (RGB) or 1 (L, Rec.601 luma as Pillow computes it). NULL when out of
 * memory or an argument is invalid. The sink is copied. */
hcimg_decoder *hcimg_decoder_new(hcimg_format format, int channels, int apply_orientation,
                                 const hcimg_sink *sink);
void hcimg_decoder_free(hcimg_decoder *d);
int hcimg_decoder_feed(hcimg_decoder *d, const uint8_t *data, size_t len);
/* The body is complete: HCIMG_OK once every row is decoded, else HCIMG_ERROR (truncated). */
int hcimg_decoder_finish(hcimg_decoder *d);
/* Why the last call failed (never NULL). */
const char *hcimg_decoder_message(const hcimg_decoder *d);
/* Facts known after the header (has_alpha after finish for GIF). */
int hcimg_decoder_has_alpha(const hcimg_decoder *d);
int hcimg_decoder_orientation(const hcimg_decoder *d);   /* EXIF, 1 when absent */
int hcimg_decoder_frame_count(const hcimg_decoder *d);   /* GIF: all frames; others 1 */
/* The stored (unoriented) size, 0 before the header. */
uint32_t hcimg_decoder_width(const hcimg_decoder *d);
uint32_t hcimg_decoder_height(const hcimg_decoder *d);

/* Encodes 8-bit pixels (channels 1 L, 2 LA, 3 RGB, 4 RGBA; rows `stride` bytes apart) as PNG.
 * On success *out (malloc'd: the caller frees it) and *len are set and HCIMG_OK returned; else
 * HCIMG_ERROR with the reason in msg (msg_cap bytes). */
int hcimg_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, int channels, size_t stride,
                     uint8_t **out, size_t *len, char *msg, size_t msg_cap);

#endif
