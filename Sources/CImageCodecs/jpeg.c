/* JPEG through libjpeg-turbo with a suspending source manager: each feed hands libjpeg the
 * bytes it has not consumed yet plus the new chunk; when it runs out it suspends (returns
 * JPEG_SUSPENDED / FALSE / 0 rows) and resumes at the next feed. Only the unconsumed tail is kept
 * (at most one marker segment or MCU row), never the whole body. Progressive JPEGs decode their
 * scans as they arrive; the rows come out once the last scan is in. */
#include "internal.h"
#include <jpeglib.h>
#include <setjmp.h>

#define MAX_SCANS 1000   /* a progressive "scan bomb" is refused past this many scans */

typedef struct jpeg_state {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr err;
    struct jpeg_source_mgr src;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    int created;
    int stage;               /* 0 header, 1 start, 2 rows, 3 finish, 4 done */
    uint8_t *buf;            /* unconsumed bytes */
    size_t cap;
    size_t skip;             /* bytes skip_input_data still has to drop from later data */
    uint8_t *dest;
    int native;              /* channels libjpeg delivers */
    int cmyk_inverted;       /* Adobe CMYK (as Photoshop and Pillow write it) */
    uint8_t *scratch;        /* rows to convert */
    int stop_rc;
} jpeg_state;

static void on_error_exit(j_common_ptr cinfo) {
    hcimg_decoder *d = cinfo->client_data;
    jpeg_state *s = d->state;
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    hcimg_fail(d, "JPEG: %s", text);
    longjmp(s->jump, 1);
}

static void on_message(j_common_ptr cinfo, int level) { (void)cinfo; (void)level; }

static void on_progress(j_common_ptr cinfo) {
    hcimg_decoder *d = cinfo->client_data;
    jpeg_state *s = d->state;
    if (s->cinfo.input_scan_number > MAX_SCANS) {
        s->stop_rc = hcimg_fail(d, "JPEG: more than %d scans", MAX_SCANS);
        longjmp(s->jump, 1);
    }
}

static void src_init(j_decompress_ptr cinfo) { (void)cinfo; }
static boolean src_fill(j_decompress_ptr cinfo) { (void)cinfo; return FALSE; }   /* suspend */
static void src_term(j_decompress_ptr cinfo) { (void)cinfo; }
static void src_skip(j_decompress_ptr cinfo, long n) {
    hcimg_decoder *d = cinfo->client_data;
    jpeg_state *s = d->state;
    if (n <= 0) return;
    if ((size_t)n <= s->src.bytes_in_buffer) {
        s->src.next_input_byte += n;
        s->src.bytes_in_buffer -= (size_t)n;
    } else {
        s->skip += (size_t)n - s->src.bytes_in_buffer;
        s->src.next_input_byte += s->src.bytes_in_buffer;
        s->src.bytes_in_buffer = 0;
    }
}

/* The EXIF orientation (tag 0x0112 of IFD0) from a saved APP1 "Exif" marker, or 1. */
static int exif_orientation(const uint8_t *p, size_t n) {
    if (n < 14 || memcmp(p, "Exif\0\0", 6) != 0) return 1;
    p += 6; n -= 6;
    int le;
    if (p[0] == 'I' && p[1] == 'I') le = 1; else if (p[0] == 'M' && p[1] == 'M') le = 0; else return 1;
#define U16(q) (le ? (uint32_t)(q)[0] | (uint32_t)(q)[1] << 8 : (uint32_t)(q)[0] << 8 | (uint32_t)(q)[1])
#define U32(q) (le ? U16(q) | U16((q) + 2) << 16 : U16(q) << 16 | U16((q) + 2))
    uint32_t ifd = U32(p + 4);
    if (ifd > n || n - ifd < 2) return 1;
    uint32_t count = U16(p + ifd);
    for (uint32_t i = 0; i < count; i++) {
        size_t e = ifd + 2 + (size_t)i * 12;
        if (e + 12 > n) break;
        if (U16(p + e) == 0x0112 && U16(p + e + 2) == 3) {
            uint32_t v = U16(p + e + 8);
            return v >= 1 && v <= 8 ? (int)v : 1;
        }
    }
    return 1;
#undef U16
#undef U32
}

/* One row from libjpeg's layout to the output's. */
static void convert(jpeg_state *s, hcimg_decoder *d, const uint8_t *row, uint8_t *out) {
    if (s->native != 4 || s->cinfo.out_color_space != JCS_CMYK) {
        hcimg_convert_row(row, s->native, out, d->channels, d->width);
        return;
    }
    /* CMYK to RGB as Pillow's cmyk2rgb: R = (255 - C) * (255 - K) / 255 with its rounding. */
    uint8_t rgb[3 * 256];
    for (uint32_t x0 = 0; x0 < d->width; x0 += 256) {
        uint32_t n = d->width - x0 < 256 ? d->width - x0 : 256;
        for (uint32_t x = 0; x < n; x++) {
            const uint8_t *p = row + (size_t)(x0 + x) * 4;
            int c = p[0], m = p[1], y = p[2], k = p[3];
            if (s->cmyk_inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
            int nk = 255 - k, t;
#define MULDIV255(a, b) (t = (a) * (b) + 128, ((t >> 8) + t) >> 8)
            int r = nk - MULDIV255(c, nk), g = nk - MULDIV255(m, nk), b = nk - MULDIV255(y, nk);
#undef MULDIV255
            rgb[x * 3] = (uint8_t)(r < 0 ? 0 : r);
            rgb[x * 3 + 1] = (uint8_t)(g < 0 ? 0 : g);
            rgb[x * 3 + 2] = (uint8_t)(b < 0 ? 0 : b);
        }
        hcimg_convert_row(rgb, 3, out + (size_t)x0 * d->channels, d->channels, n);
    }
}

static int run(hcimg_decoder *d) {
    jpeg_state *s = d->state;
    j_decompress_ptr c = &s->cinfo;
    if (s->stage == 0) {
        if (jpeg_read_header(c, TRUE) == JPEG_SUSPENDED) return HCIMG_OK;
        for (jpeg_saved_marker_ptr m = c->marker_list; m; m = m->next)
            if (m->marker == JPEG_APP0 + 1) { d->orientation = exif_orientation(m->data, m->data_length); break; }
        int gray = c->jpeg_color_space == JCS_GRAYSCALE;
        if (c->jpeg_color_space == JCS_CMYK || c->jpeg_color_space == JCS_YCCK) {
            c->out_color_space = JCS_CMYK;
            s->native = 4;
            s->cmyk_inverted = c->saw_Adobe_marker;
        } else if (d->channels == 1) {
            /* Pillow decodes colour to RGB and computes its own luma: do the same. */
            c->out_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
            s->native = gray ? 1 : 3;
        } else {
            c->out_color_space = d->channels == 4 ? JCS_EXT_RGBA : JCS_RGB;
            s->native = d->channels;
        }
        c->dct_method = JDCT_ISLOW;
        int rc = HCIMG_OK;
        s->dest = hcimg_begin(d, c->image_width, c->image_height, &rc);
        if (!s->dest) return rc;
        s->stage = 1;
    }
    if (s->stage == 1) {
        if (!jpeg_start_decompress(c)) return HCIMG_OK;
        if (c->output_width != d->width || c->output_height != d->height
            || c->output_components != s->native)
            return hcimg_fail(d, "JPEG: unexpected output layout");
        if (s->native != d->channels || c->out_color_space == JCS_CMYK) {
            s->scratch = malloc((size_t)d->width * s->native * (size_t)c->rec_outbuf_height);
            if (!s->scratch) return hcimg_fail(d, "out of memory");
        }
        s->stage = 2;
    }
    if (s->stage == 2) {
        size_t w = d->width;
        while (c->output_scanline < c->output_height) {
            JSAMPROW rows[16];
            uint32_t first = c->output_scanline;
            int n = c->rec_outbuf_height < 16 ? c->rec_outbuf_height : 16;
            if ((uint32_t)n > c->output_height - first) n = (int)(c->output_height - first);
            for (int i = 0; i < n; i++)
                rows[i] = s->scratch ? s->scratch + (size_t)i * w * s->native
                                     : s->dest + (first + (size_t)i) * w * d->channels;
            JDIMENSION got = jpeg_read_scanlines(c, rows, (JDIMENSION)n);
            if (got == 0) return HCIMG_OK;
            if (s->scratch)
                for (JDIMENSION i = 0; i < got; i++)
                    convert(s, d, rows[i], s->dest + (first + (size_t)i) * w * d->channels);
            int rc = hcimg_rows(d, first, got);
            if (rc != HCIMG_OK) return rc;
        }
        s->stage = 3;
    }
    if (s->stage == 3) {
        if (!jpeg_finish_decompress(c)) return HCIMG_OK;
        s->stage = 4;
    }
    return HCIMG_OK;
}

static int jpeg_feed(hcimg_decoder *d, const uint8_t *data, size_t len) {
    jpeg_state *s = d->state;
    if (s->stage == 4) return HCIMG_OK;   /* after EOI */
    if (s->skip) {
        size_t k = s->skip < len ? s->skip : len;
        s->skip -= k; data += k; len -= k;
        if (!len) return HCIMG_OK;
    }
    /* Keep the unconsumed tail, then the new bytes after it. */
    size_t keep = s->src.bytes_in_buffer;
    if (keep && s->src.next_input_byte != s->buf) memmove(s->buf, s->src.next_input_byte, keep);
    if (keep + len > s->cap) {
        size_t cap = s->cap ? s->cap : 65536;
        while (cap < keep + len) cap *= 2;
        uint8_t *grown = realloc(s->buf, cap);
        if (!grown) return hcimg_fail(d, "out of memory");
        s->buf = grown;
        s->cap = cap;
    }
    memcpy(s->buf + keep, data, len);
    s->src.next_input_byte = s->buf;
    s->src.bytes_in_buffer = keep + len;
    s->stop_rc = 0;
    if (setjmp(s->jump)) return s->stop_rc ? s->stop_rc : HCIMG_ERROR;
    return run(d);
}

static int jpeg_finish(hcimg_decoder *d) {
    jpeg_state *s = d->state;
    if (s->stage < 3) {
        if (s->stage == 0) return hcimg_fail(d, "JPEG: truncated before the image header was complete");
        return hcimg_fail(d, "JPEG: truncated: %u of %u rows decoded", s->cinfo.output_scanline, d->height);
    }
    /* Every row is out; a missing EOI after them is tolerated, as libjpeg and Pillow do. */
    return hcimg_complete(d);
}

static void jpeg_free_state(hcimg_decoder *d) {
    jpeg_state *s = d->state;
    if (!s) return;
    if (s->created) jpeg_destroy_decompress(&s->cinfo);
    free(s->buf);
    free(s->scratch);
    free(s);
    d->state = NULL;
}

static const struct hcimg_codec jpeg_codec = { jpeg_feed, jpeg_finish, jpeg_free_state };

int hcimg_jpeg_init(hcimg_decoder *d) {
    jpeg_state *s = calloc(1, sizeof *s);
    if (!s) return HCIMG_ERROR;
    d->state = s;
    d->codec = &jpeg_codec;
    s->cinfo.err = jpeg_std_error(&s->err);
    s->err.error_exit = on_error_exit;
    s->err.emit_message = on_message;
    s->cinfo.client_data = d;
    if (setjmp(s->jump)) return HCIMG_ERROR;
    jpeg_create_decompress(&s->cinfo);
    s->created = 1;
    s->src.init_source = src_init;
    s->src.fill_input_buffer = src_fill;
    s->src.skip_input_data = src_skip;
    s->src.resync_to_restart = jpeg_resync_to_restart;
    s->src.term_source = src_term;
    s->cinfo.src = &s->src;
    s->progress.progress_monitor = on_progress;
    s->cinfo.progress = &s->progress;
    jpeg_save_markers(&s->cinfo, JPEG_APP0 + 1, 0xFFFF);
    return HCIMG_OK;
}
