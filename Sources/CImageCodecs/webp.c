/* WebP through libwebp's incremental decoder (WebPIDecoder): rows are decoded straight into the
 * output buffer as bytes arrive. Only the first bytes are kept, until the header (and so the
 * size) is known. Animated WebP is refused.
 *
 * The decoder is fed nothing past the end of the image chunk the RIFF container declares: libwebp
 * compares the bytes it holds with that chunk size to tell "wait for more" from "corrupt", so a
 * chunk size that lies (a fuzzer's find: a VP8L chunk of size 0 followed by a valid stream) made
 * the outcome depend on where the network split the body. Bounded by the declared size, libwebp
 * sees the same bytes however they arrive, as its one-shot decoder does. */
#include "internal.h"
#include <webp/decode.h>

typedef struct webp_state {
    WebPIDecoder *idec;
    uint8_t *head;           /* bytes received before the header could be read */
    size_t head_len, head_cap;
    uint8_t *dest;
    uint8_t *rgb;            /* L output: the RGB image libwebp writes, converted row by row */
    int native;
    size_t fed, limit;       /* bytes given to libwebp; where the image chunk ends (SIZE_MAX: unknown) */
    uint32_t reported;       /* rows handed on so far */
    int complete;
} webp_state;

static int advance(hcimg_decoder *d, VP8StatusCode status) {
    webp_state *s = d->state;
    if (status != VP8_STATUS_OK && status != VP8_STATUS_SUSPENDED)
        return hcimg_fail(d, "WebP: corrupt or unsupported bitstream (libwebp status %d)", (int)status);
    int last_y = 0;
    if (!WebPIDecGetRGB(s->idec, &last_y, NULL, NULL, NULL)) last_y = 0;
    if (status == VP8_STATUS_OK) { s->complete = 1; last_y = (int)d->height; }
    if (last_y > (int)d->height) last_y = (int)d->height;
    uint32_t upto = last_y < 0 ? 0 : (uint32_t)last_y;
    if (upto <= s->reported) return HCIMG_OK;
    if (s->rgb) {
        size_t w = d->width;
        for (uint32_t y = s->reported; y < upto; y++)
            hcimg_convert_row(s->rgb + y * w * 3, 3, s->dest + y * w * d->channels, d->channels, d->width);
    }
    uint32_t first = s->reported;
    s->reported = upto;
    return hcimg_rows(d, first, upto - first);
}

/* Where the first VP8/VP8L chunk of a RIFF container ends: SIZE_MAX for a bare bitstream (no
 * container, no bound), 0 while that chunk's header is not yet in `head`. */
static size_t image_chunk_end(const uint8_t *head, size_t len) {
    if (len < 12 || memcmp(head, "RIFF", 4) != 0 || memcmp(head + 8, "WEBP", 4) != 0) return SIZE_MAX;
    size_t off = 12;
    while (off + 8 <= len) {
        size_t size = (size_t)head[off + 4] | (size_t)head[off + 5] << 8 | (size_t)head[off + 6] << 16
                    | (size_t)head[off + 7] << 24;
        if (memcmp(head + off, "VP8 ", 4) == 0 || memcmp(head + off, "VP8L", 4) == 0) return off + 8 + size;
        off += 8 + size + (size & 1);
    }
    return 0;
}

/* Hands libwebp the part of [data, data+len) that lies inside the image chunk. */
static VP8StatusCode append(webp_state *s, const uint8_t *data, size_t len) {
    size_t room = s->limit > s->fed ? s->limit - s->fed : 0;
    if (len > room) len = room;
    s->fed += len;
    return len ? WebPIAppend(s->idec, data, len) : VP8_STATUS_SUSPENDED;
}

static int webp_feed(hcimg_decoder *d, const uint8_t *data, size_t len) {
    webp_state *s = d->state;
    if (s->complete) return HCIMG_OK;
    if (s->idec) return advance(d, append(s, data, len));
    /* Before the header: collect the first bytes (a few dozen are enough). */
    if (s->head_len + len > s->head_cap) {
        size_t cap = s->head_cap ? s->head_cap : 4096;
        while (cap < s->head_len + len) cap *= 2;
        uint8_t *grown = realloc(s->head, cap);
        if (!grown) return hcimg_fail(d, "out of memory");
        s->head = grown;
        s->head_cap = cap;
    }
    memcpy(s->head + s->head_len, data, len);
    s->head_len += len;
    WebPBitstreamFeatures f;
    VP8StatusCode st = WebPGetFeatures(s->head, s->head_len, &f);
    if (st == VP8_STATUS_NOT_ENOUGH_DATA) {
        if (s->head_len > (1 << 20)) return hcimg_fail(d, "WebP: no image header in the first MiB");
        return HCIMG_OK;
    }
    if (st != VP8_STATUS_OK) return hcimg_fail(d, "WebP: bad header (libwebp status %d)", (int)st);
    /* libwebp reads the size from an extended header (VP8X) alone; wait for the image chunk's
     * header too, so the verdict on what follows does not depend on where the body was split. */
    s->limit = image_chunk_end(s->head, s->head_len);
    if (s->limit == 0) {
        if (s->head_len > (1 << 20)) return hcimg_fail(d, "WebP: no image chunk in the first MiB");
        return HCIMG_OK;
    }
    if (f.has_animation) return hcimg_fail(d, "WebP: animated images are not decoded");
    if (f.width <= 0 || f.height <= 0) return hcimg_fail(d, "WebP: empty image");
    d->has_alpha = f.has_alpha;
    int rc = HCIMG_OK;
    s->dest = hcimg_begin(d, (uint32_t)f.width, (uint32_t)f.height, &rc);
    if (!s->dest) return rc;
    size_t w = d->width, h = d->height;
    uint8_t *target = s->dest;
    WEBP_CSP_MODE mode = d->channels == 4 ? MODE_RGBA : MODE_RGB;
    int ch = d->channels == 4 ? 4 : 3;
    if (d->channels == 1) {
        s->rgb = malloc(w * h * 3);
        if (!s->rgb) return hcimg_fail(d, "out of memory");
        target = s->rgb;
    }
    s->idec = WebPINewRGB(mode, target, w * h * (size_t)ch, (int)(w * (size_t)ch));
    if (!s->idec) return hcimg_fail(d, "out of memory");
    st = append(s, s->head, s->head_len);
    free(s->head);
    s->head = NULL;
    s->head_len = s->head_cap = 0;
    return advance(d, st);
}

static int webp_finish(hcimg_decoder *d) {
    webp_state *s = d->state;
    if (!s->idec) return hcimg_fail(d, "WebP: truncated before the image header was complete");
    if (!s->complete)
        return hcimg_fail(d, "WebP: truncated: %u of %u rows decoded", s->reported, d->height);
    return hcimg_complete(d);
}

static void webp_free_state(hcimg_decoder *d) {
    webp_state *s = d->state;
    if (!s) return;
    if (s->idec) WebPIDelete(s->idec);
    free(s->head);
    free(s->rgb);
    free(s);
    d->state = NULL;
}

static const struct hcimg_codec webp_codec = { webp_feed, webp_finish, webp_free_state };

int hcimg_webp_init(hcimg_decoder *d) {
    webp_state *s = calloc(1, sizeof *s);
    if (!s) return HCIMG_ERROR;
    d->state = s;
    d->codec = &webp_codec;
    return HCIMG_OK;
}
