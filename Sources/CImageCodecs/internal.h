/* Shared by the codec files: the decoder state and the row conversions. */
#ifndef HCIMAGE_INTERNAL_H
#define HCIMAGE_INTERNAL_H

#include "hcimage.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hcimg_codec {
    int (*feed)(hcimg_decoder *d, const uint8_t *data, size_t len);
    int (*finish)(hcimg_decoder *d);
    void (*free)(hcimg_decoder *d);
};

struct hcimg_decoder {
    hcimg_format format;
    const struct hcimg_codec *codec;
    void *state;                 /* the codec's own */
    hcimg_sink sink;
    int channels;                /* output channels: 1, 3, 4 */
    int apply_orientation;
    int has_alpha, orientation, frame_count;
    uint32_t width, height;      /* stored size */
    uint8_t *out;                /* the sink's buffer (output size) */
    uint8_t *oriented_src;       /* decoding target when an orientation is applied (stored size) */
    int failed;                  /* a feed failed: later calls fail the same way */
    int stopped;
    char message[256];
};

/* Records a decode error; returns HCIMG_ERROR. */
int hcimg_fail(hcimg_decoder *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Calls the sink's begin with the output size for a stored width x height: sets d->out and, when
 * an orientation will be applied, d->oriented_src. Returns the buffer decoding writes to (stored
 * layout, d->channels per pixel), or NULL (HCIMG_STOPPED or an error recorded). */
uint8_t *hcimg_begin(hcimg_decoder *d, uint32_t width, uint32_t height, int *rc);

/* Rows [first, first+count) of the stored image are written: reports them (when no orientation
 * is pending). Returns HCIMG_OK or HCIMG_STOPPED. */
int hcimg_rows(hcimg_decoder *d, uint32_t first, uint32_t count);

/* All rows are decoded: applies the orientation if pending and reports every row. */
int hcimg_complete(hcimg_decoder *d);

/* Converts one row of `width` pixels from `src_channels` (1 L, 2 LA, 3 RGB, 4 RGBA) to
 * `dst_channels` (1, 3, 4) as Pillow's convert does (alpha dropped, L = Rec.601 luma rounded,
 * alpha 255 added). src and dst may be the same only when the channels are equal. */
void hcimg_convert_row(const uint8_t *src, int src_channels, uint8_t *dst, int dst_channels, uint32_t width);

int hcimg_png_init(hcimg_decoder *d);
int hcimg_jpeg_init(hcimg_decoder *d);
int hcimg_gif_init(hcimg_decoder *d);
int hcimg_webp_init(hcimg_decoder *d);

#endif
