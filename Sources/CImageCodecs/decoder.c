/* The codec-independent part: creation, dispatch, row conversion and EXIF orientation. */
#include "internal.h"

int hcimg_fail(hcimg_decoder *d, const char *fmt, ...) {
    if (!d->failed) {   /* the first reason is the one that counts */
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->message, sizeof d->message, fmt, ap);
        va_end(ap);
    }
    d->failed = 1;
    return HCIMG_ERROR;
}

hcimg_decoder *hcimg_decoder_new(hcimg_format format, int channels, int apply_orientation,
                                 const hcimg_sink *sink) {
    if (!sink || !sink->begin || (channels != 1 && channels != 3 && channels != 4)) return NULL;
    hcimg_decoder *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->format = format;
    d->sink = *sink;
    d->channels = channels;
    d->apply_orientation = apply_orientation;
    d->orientation = 1;
    d->frame_count = 1;
    int rc;
    switch (format) {
    case HCIMG_PNG: rc = hcimg_png_init(d); break;
    case HCIMG_JPEG: rc = hcimg_jpeg_init(d); break;
    case HCIMG_GIF: rc = hcimg_gif_init(d); break;
    case HCIMG_WEBP: rc = hcimg_webp_init(d); break;
    default: rc = HCIMG_ERROR;
    }
    if (rc != HCIMG_OK) {
        if (d->codec) d->codec->free(d);
        free(d);
        return NULL;
    }
    return d;
}

void hcimg_decoder_free(hcimg_decoder *d) {
    if (!d) return;
    if (d->codec) d->codec->free(d);
    free(d->oriented_src);
    free(d);
}

int hcimg_decoder_feed(hcimg_decoder *d, const uint8_t *data, size_t len) {
    if (d->stopped) return HCIMG_STOPPED;
    if (d->failed) return HCIMG_ERROR;
    if (len == 0) return HCIMG_OK;
    int rc = d->codec->feed(d, data, len);
    if (rc == HCIMG_STOPPED) d->stopped = 1;
    else if (rc != HCIMG_OK) d->failed = 1;
    return rc;
}

int hcimg_decoder_finish(hcimg_decoder *d) {
    if (d->stopped) return HCIMG_STOPPED;
    if (d->failed) return HCIMG_ERROR;
    int rc = d->codec->finish(d);
    if (rc == HCIMG_STOPPED) d->stopped = 1;
    else if (rc != HCIMG_OK) d->failed = 1;
    return rc;
}

const char *hcimg_decoder_message(const hcimg_decoder *d) { return d->message; }
int hcimg_decoder_has_alpha(const hcimg_decoder *d) { return d->has_alpha; }
int hcimg_decoder_orientation(const hcimg_decoder *d) { return d->orientation; }
int hcimg_decoder_frame_count(const hcimg_decoder *d) { return d->frame_count; }
uint32_t hcimg_decoder_width(const hcimg_decoder *d) { return d->width; }
uint32_t hcimg_decoder_height(const hcimg_decoder *d) { return d->height; }

static int swaps_axes(int orientation) { return orientation >= 5 && orientation <= 8; }
static int orienting(const hcimg_decoder *d) {
    return d->apply_orientation && d->orientation >= 2 && d->orientation <= 8;
}

uint8_t *hcimg_begin(hcimg_decoder *d, uint32_t width, uint32_t height, int *rc) {
    d->width = width;
    d->height = height;
    int swap = orienting(d) && swaps_axes(d->orientation);
    uint8_t *out = d->sink.begin(d->sink.ctx, swap ? height : width, swap ? width : height, d->channels);
    if (!out) { *rc = HCIMG_STOPPED; d->stopped = 1; return NULL; }
    d->out = out;
    if (!orienting(d)) return out;
    /* The size was just accepted by the sink's pixel cap. */
    d->oriented_src = malloc((size_t)width * height * (size_t)d->channels);
    if (!d->oriented_src) { *rc = hcimg_fail(d, "out of memory for %ux%u pixels", width, height); return NULL; }
    return d->oriented_src;
}

int hcimg_rows(hcimg_decoder *d, uint32_t first, uint32_t count) {
    if (d->oriented_src || !d->sink.rows || count == 0) return HCIMG_OK;
    return d->sink.rows(d->sink.ctx, first, count) == 0 ? HCIMG_OK : HCIMG_STOPPED;
}

int hcimg_complete(hcimg_decoder *d) {
    if (!d->oriented_src) return HCIMG_OK;
    const uint32_t w = d->width, h = d->height;
    const size_t ch = (size_t)d->channels;
    const int o = d->orientation;
    const uint32_t ow = swaps_axes(o) ? h : w, oh = swaps_axes(o) ? w : h;
    const uint8_t *src = d->oriented_src;
    for (uint32_t y = 0; y < oh; y++) {
        uint8_t *dst = d->out + (size_t)y * ow * ch;
        for (uint32_t x = 0; x < ow; x++) {
            uint32_t sx, sy;   /* EXIF orientation: where output (x, y) comes from */
            switch (o) {
            case 2: sx = w - 1 - x; sy = y; break;
            case 3: sx = w - 1 - x; sy = h - 1 - y; break;
            case 4: sx = x; sy = h - 1 - y; break;
            case 5: sx = y; sy = x; break;
            case 6: sx = y; sy = h - 1 - x; break;
            case 7: sx = w - 1 - y; sy = h - 1 - x; break;
            default: sx = w - 1 - y; sy = x; break;   /* 8 */
            }
            memcpy(dst + x * ch, src + ((size_t)sy * w + sx) * ch, ch);
        }
    }
    free(d->oriented_src);
    d->oriented_src = NULL;
    return hcimg_rows(d, 0, oh);
}

/* Pillow's L24: Rec.601 luma in 16.16 fixed point, rounded. */
static inline uint8_t luma(const uint8_t *p) {
    return (uint8_t)((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
}

void hcimg_convert_row(const uint8_t *src, int sc, uint8_t *dst, int dc, uint32_t width) {
    if (sc == dc) { if (src != dst) memcpy(dst, src, (size_t)width * sc); return; }
    for (uint32_t x = 0; x < width; x++, src += sc, dst += dc) {
        switch (dc) {
        case 1: dst[0] = sc <= 2 ? src[0] : luma(src); break;
        case 3:
            if (sc <= 2) { dst[0] = dst[1] = dst[2] = src[0]; }
            else { dst[0] = src[0]; dst[1] = src[1]; dst[2] = src[2]; }
            break;
        default:
            if (sc <= 2) { dst[0] = dst[1] = dst[2] = src[0]; dst[3] = sc == 2 ? src[1] : 255; }
            else { dst[0] = src[0]; dst[1] = src[1]; dst[2] = src[2]; dst[3] = sc == 4 ? src[3] : 255; }
        }
    }
}
