/* PNG through libpng's progressive reader (png_process_data): rows are decoded as bytes arrive.
 * libpng's own transforms give 8 bits per channel (16-bit channels keep the high byte:
 * png_set_strip_16), expand palettes, low bit depths and tRNS; the rest is hcimg_convert_row. */
#include "internal.h"
#include <png.h>
#include <setjmp.h>

typedef struct png_state {
    png_structp png;
    png_infop info;
    uint8_t *dest;           /* where rows go (stored size, d->channels) */
    int native;              /* channels libpng delivers after its transforms */
    int interlaced;
    uint8_t *full;           /* interlaced and converted: the whole image in `native` channels */
    uint32_t rows_done;      /* not interlaced: rows delivered */
    int last_pass;           /* interlaced: the last Adam7 pass holding pixels, */
    uint32_t last_row;       /* its last image row, */
    int all_passes;          /* and whether that row has arrived */
    int ended;
    int stop_rc;             /* set by a callback before it longjmps out */
} png_state;

static void on_error(png_structp png, png_const_charp msg) {
    hcimg_decoder *d = png_get_error_ptr(png);
    hcimg_fail(d, "PNG: %s", msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) { (void)png; (void)msg; }

/* The last Adam7 pass holding pixels of a width x height image, and its last image row. */
static void adam7_last(uint32_t w, uint32_t h, int *pass, uint32_t *row) {
    static const uint32_t x0[] = { 0, 4, 0, 2, 0, 1, 0 }, y0[] = { 0, 0, 4, 0, 2, 0, 1 };
    static const uint32_t dy[] = { 8, 8, 8, 4, 4, 2, 2 };
    for (int p = 6; p >= 0; p--)
        if (w > x0[p] && h > y0[p]) { *pass = p; *row = y0[p] + (h - 1 - y0[p]) / dy[p] * dy[p]; return; }
    *pass = 0;
    *row = 0;
}

static void on_info(png_structp png, png_infop info) {
    hcimg_decoder *d = png_get_progressive_ptr(png);
    png_state *s = d->state;
    png_uint_32 w, h;
    int depth, ctype, interlace;
    png_get_IHDR(png, info, &w, &h, &depth, &ctype, &interlace, NULL, NULL);
    int trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    d->has_alpha = (ctype & PNG_COLOR_MASK_ALPHA) != 0 || trns;
    int gray = (ctype & PNG_COLOR_MASK_COLOR) == 0;
    if (d->channels == 4) {
        png_set_expand(png);                     /* palette, low depths and tRNS to RGBA/GA */
        if (gray) png_set_gray_to_rgb(png);
        if (!d->has_alpha) png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
        s->native = 4;
    } else {
        png_set_palette_to_rgb(png);
        png_set_expand_gray_1_2_4_to_8(png);
        if (d->has_alpha) png_set_strip_alpha(png);   /* also what palette_to_rgb makes of tRNS */
        if (gray && d->channels == 3) png_set_gray_to_rgb(png);
        s->native = (gray && d->channels == 1) ? 1 : 3;
    }
    png_set_strip_16(png);
    s->interlaced = interlace != PNG_INTERLACE_NONE;
    if (s->interlaced) {
        png_set_interlace_handling(png);
        adam7_last(w, h, &s->last_pass, &s->last_row);
    }
    int rc = HCIMG_OK;
    s->dest = hcimg_begin(d, w, h, &rc);
    if (!s->dest) { s->stop_rc = rc == HCIMG_OK ? HCIMG_STOPPED : rc; png_longjmp(png, 1); }
    if (s->interlaced && s->native != d->channels) {
        s->full = malloc((size_t)w * h * (size_t)s->native);
        if (!s->full) { s->stop_rc = hcimg_fail(d, "out of memory"); png_longjmp(png, 1); }
    }
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)w * s->native) {
        s->stop_rc = hcimg_fail(d, "PNG: unexpected row layout");
        png_longjmp(png, 1);
    }
    if (s->interlaced && s->native == d->channels) memset(s->dest, 0, (size_t)w * h * s->native);
    else if (s->full) memset(s->full, 0, (size_t)w * h * s->native);
}

static void on_row(png_structp png, png_bytep row, png_uint_32 y, int pass) {
    hcimg_decoder *d = png_get_progressive_ptr(png);
    png_state *s = d->state;
    if (!row || y >= d->height) return;
    size_t w = d->width;
    if (s->interlaced) {
        if (pass == s->last_pass && y == s->last_row) s->all_passes = 1;
        if (s->full) { png_progressive_combine_row(png, s->full + y * w * s->native, row); return; }
        png_progressive_combine_row(png, s->dest + y * w * s->native, row);
    } else {
        hcimg_convert_row(row, s->native, s->dest + y * w * d->channels, d->channels, d->width);
        s->rows_done = y + 1;
    }
    int rc = hcimg_rows(d, y, 1);
    if (rc != HCIMG_OK) { s->stop_rc = rc; png_longjmp(png, 1); }
}

static void on_end(png_structp png, png_infop info) {
    (void)info;
    hcimg_decoder *d = png_get_progressive_ptr(png);
    ((png_state *)d->state)->ended = 1;
}

static int png_feed(hcimg_decoder *d, const uint8_t *data, size_t len) {
    png_state *s = d->state;
    if (s->ended) return HCIMG_OK;   /* bytes after IEND are ignored, as libpng does */
    if (setjmp(png_jmpbuf(s->png))) return s->stop_rc ? s->stop_rc : HCIMG_ERROR;
    png_process_data(s->png, s->info, (png_bytep)data, len);
    return HCIMG_OK;
}

static int png_finish(hcimg_decoder *d) {
    png_state *s = d->state;
    if (!s->dest) return hcimg_fail(d, "PNG: truncated before the image header was complete");
    /* libpng only warns when the image data ends early ("Truncated compressed data"). */
    if (!s->interlaced && s->rows_done < d->height)
        return hcimg_fail(d, "PNG: truncated: %u of %u rows", s->rows_done, d->height);
    if (s->interlaced && !s->all_passes)
        return hcimg_fail(d, "PNG: truncated: the interlaced image's last pass is incomplete");
    if (s->full) {
        for (uint32_t y = 0; y < d->height; y++) {
            size_t w = d->width;
            hcimg_convert_row(s->full + y * w * s->native, s->native, s->dest + y * w * d->channels,
                              d->channels, d->width);
        }
    }
    if (s->interlaced) { int rc = hcimg_rows(d, 0, d->height); if (rc) return rc; }
    return hcimg_complete(d);
}

static void png_free_state(hcimg_decoder *d) {
    png_state *s = d->state;
    if (!s) return;
    png_destroy_read_struct(&s->png, &s->info, NULL);
    free(s->full);
    free(s);
    d->state = NULL;
}

static const struct hcimg_codec png_codec = { png_feed, png_finish, png_free_state };

int hcimg_png_init(hcimg_decoder *d) {
    png_state *s = calloc(1, sizeof *s);
    if (!s) return HCIMG_ERROR;
    d->state = s;
    d->codec = &png_codec;
    s->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, on_error, on_warning);
    if (!s->png) return HCIMG_ERROR;
    s->info = png_create_info_struct(s->png);
    if (!s->info) return HCIMG_ERROR;
    /* The pixel cap is the owner's; libpng's own limit (1M x 1M) must not refuse first. */
    png_set_user_limits(s->png, 0x7fffffff, 0x7fffffff);
    png_set_progressive_read_fn(s->png, d, on_info, on_row, on_end);
    return HCIMG_OK;
}

/* ---- encoding ---- */

typedef struct png_out { uint8_t *buf; size_t len, cap; int oom; } png_out;

static void write_data(png_structp png, png_bytep data, size_t len) {
    png_out *o = png_get_io_ptr(png);
    if (o->len + len > o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 65536;
        while (cap < o->len + len) cap *= 2;
        uint8_t *grown = realloc(o->buf, cap);
        if (!grown) { o->oom = 1; png_error(png, "out of memory"); }
        o->buf = grown;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, data, len);
    o->len += len;
}

static void flush_data(png_structp png) { (void)png; }

static void encode_error(png_structp png, png_const_charp msg) {
    char *m = png_get_error_ptr(png);
    snprintf(m, 200, "PNG encode: %s", msg);
    png_longjmp(png, 1);
}

int hcimg_png_encode(const uint8_t *pixels, uint32_t width, uint32_t height, int channels, size_t stride,
                     uint8_t **out, size_t *len, char *msg, size_t msg_cap) {
    static const int types[] = { 0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                 PNG_COLOR_TYPE_RGB_ALPHA };
    char m[200] = "";
    if (!pixels || !out || !len || channels < 1 || channels > 4 || width == 0 || height == 0
        || stride < (size_t)width * channels) {
        snprintf(msg, msg_cap, "PNG encode: invalid arguments");
        return HCIMG_ERROR;
    }
    png_out o = { 0 };
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, m, encode_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        snprintf(msg, msg_cap, "PNG encode: out of memory");
        return HCIMG_ERROR;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(o.buf);
        snprintf(msg, msg_cap, "%s", m[0] ? m : "PNG encode failed");
        return HCIMG_ERROR;
    }
    png_set_write_fn(png, &o, write_data, flush_data);
    png_set_IHDR(png, info, width, height, 8, types[channels], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (uint32_t y = 0; y < height; y++) png_write_row(png, (png_const_bytep)(pixels + (size_t)y * stride));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    *out = o.buf;
    *len = o.len;
    return HCIMG_OK;
}
