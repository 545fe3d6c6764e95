/* GIF through giflib. giflib has no push API (it pulls through a read function), so the body is
 * buffered and decoded when it is complete; the logical screen size is checked against the pixel
 * cap (and the pixel memory taken) as soon as its 13-byte header arrives. The first frame is
 * decoded; the others are skipped without decoding and counted. */
#include "internal.h"
#include <gif_lib.h>

typedef struct gif_state {
    uint8_t *buf;
    size_t len, cap, pos;
    uint8_t *dest;
} gif_state;

static int gif_feed(hcimg_decoder *d, const uint8_t *data, size_t len) {
    gif_state *s = d->state;
    if (s->len + len > s->cap) {
        size_t cap = s->cap ? s->cap : 65536;
        while (cap < s->len + len) cap *= 2;
        uint8_t *grown = realloc(s->buf, cap);
        if (!grown) return hcimg_fail(d, "out of memory");
        s->buf = grown;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    if (!s->dest && s->len >= 13) {
        if (memcmp(s->buf, "GIF87a", 6) != 0 && memcmp(s->buf, "GIF89a", 6) != 0)
            return hcimg_fail(d, "GIF: bad signature");
        uint32_t w = s->buf[6] | (uint32_t)s->buf[7] << 8, h = s->buf[8] | (uint32_t)s->buf[9] << 8;
        if (w == 0 || h == 0) return hcimg_fail(d, "GIF: empty logical screen (%ux%u)", w, h);
        int rc = HCIMG_OK;
        s->dest = hcimg_begin(d, w, h, &rc);
        if (!s->dest) return rc;
    }
    return HCIMG_OK;
}

static int read_fn(GifFileType *gif, GifByteType *out, int n) {
    gif_state *s = gif->UserData;
    size_t k = n < 0 ? 0 : (size_t)n;
    if (k > s->len - s->pos) k = s->len - s->pos;
    memcpy(out, s->buf + s->pos, k);
    s->pos += k;
    return (int)k;
}

static int gif_error(hcimg_decoder *d, GifFileType *gif, const char *what) {
    const char *why = GifErrorString(gif ? gif->Error : D_GIF_ERR_READ_FAILED);
    return hcimg_fail(d, "GIF: %s: %s", what, why ? why : "unknown error");
}

static int gif_finish(hcimg_decoder *d) {
    gif_state *s = d->state;
    if (!s->dest) return hcimg_fail(d, "GIF: truncated before the screen descriptor");
    int err = 0, rc = HCIMG_OK, frames = 0, transparent = -1, pending_transparent = -1;
    GifFileType *gif = DGifOpen(s, read_fn, &err);
    if (!gif) return hcimg_fail(d, "GIF: %s", GifErrorString(err) ? GifErrorString(err) : "open failed");
    const uint32_t W = d->width, H = d->height;
    const size_t ch = (size_t)d->channels;
    GifPixelType *line = NULL;
    uint8_t *rgba = NULL;
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) { rc = gif_error(d, gif, "truncated or corrupt"); break; }
        if (type == TERMINATE_RECORD_TYPE) break;
        if (type == EXTENSION_RECORD_TYPE) {
            int code;
            GifByteType *ext;
            if (DGifGetExtension(gif, &code, &ext) == GIF_ERROR) { rc = gif_error(d, gif, "bad extension"); break; }
            if (code == GRAPHICS_EXT_FUNC_CODE && ext && ext[0] >= 4 && frames == 0)
                pending_transparent = (ext[1] & 1) ? ext[4] : -1;
            while (ext) {
                if (DGifGetExtensionNext(gif, &ext) == GIF_ERROR) { rc = gif_error(d, gif, "bad extension"); goto done; }
            }
            continue;
        }
        if (type != IMAGE_DESC_RECORD_TYPE) continue;
        if (DGifGetImageDesc(gif) == GIF_ERROR) { rc = gif_error(d, gif, "bad image descriptor"); break; }
        frames++;
        if (frames > 1) {   /* counted, not decoded */
            int size;
            GifByteType *block;
            if (DGifGetCode(gif, &size, &block) == GIF_ERROR) { rc = gif_error(d, gif, "truncated frame"); break; }
            while (block) {
                if (DGifGetCodeNext(gif, &block) == GIF_ERROR) { rc = gif_error(d, gif, "truncated frame"); goto done; }
            }
            continue;
        }
        transparent = pending_transparent;
        const GifImageDesc *desc = &gif->Image;
        const ColorMapObject *map = desc->ColorMap ? desc->ColorMap : gif->SColorMap;
        if (!map) { rc = hcimg_fail(d, "GIF: the first frame has no colour table"); break; }
        uint32_t fw = (uint32_t)desc->Width, fh = (uint32_t)desc->Height;
        int fx = desc->Left, fy = desc->Top;
        if (fw == 0 || fh == 0) { rc = hcimg_fail(d, "GIF: empty first frame"); break; }
        line = malloc(fw);
        rgba = malloc((size_t)(fw > W ? fw : W) * 4);
        if (!line || !rgba) { rc = hcimg_fail(d, "out of memory"); break; }
        /* Outside the frame: transparent, else the background colour (as a viewer shows it). */
        uint8_t fill[4] = { 0, 0, 0, 0 };
        if (transparent < 0 && gif->SColorMap && gif->SBackGroundColor < gif->SColorMap->ColorCount) {
            const GifColorType *c = &gif->SColorMap->Colors[gif->SBackGroundColor];
            fill[0] = c->Red; fill[1] = c->Green; fill[2] = c->Blue; fill[3] = 255;
        }
        if (fx != 0 || fy != 0 || fw != W || fh != H) {
            for (uint32_t x = 0; x < W; x++) memcpy(rgba + x * 4, fill, 4);
            for (uint32_t y = 0; y < H; y++) hcimg_convert_row(rgba, 4, s->dest + y * W * ch, d->channels, W);
        }
        static const int start[] = { 0, 4, 2, 1 }, step[] = { 8, 8, 4, 2 };
        int passes = desc->Interlace ? 4 : 1;
        for (int p = 0; p < passes && rc == HCIMG_OK; p++) {
            for (uint32_t y = desc->Interlace ? (uint32_t)start[p] : 0; y < fh; y += desc->Interlace ? (uint32_t)step[p] : 1) {
                if (DGifGetLine(gif, line, (int)fw) == GIF_ERROR) { rc = gif_error(d, gif, "truncated or corrupt frame"); break; }
                uint32_t oy = (uint32_t)fy + y;
                if (oy >= H) continue;
                uint32_t n = 0;
                for (uint32_t x = 0; x < fw && (uint32_t)fx + x < W; x++, n++) {
                    int i = line[x];
                    uint8_t *o = rgba + (size_t)x * 4;
                    if (i < map->ColorCount) {
                        o[0] = map->Colors[i].Red; o[1] = map->Colors[i].Green; o[2] = map->Colors[i].Blue;
                    } else {
                        o[0] = o[1] = o[2] = 0;
                    }
                    o[3] = i == transparent ? 0 : 255;
                }
                hcimg_convert_row(rgba, 4, s->dest + ((size_t)oy * W + (uint32_t)fx) * ch, d->channels, n);
                if (!desc->Interlace) { rc = hcimg_rows(d, oy, 1); if (rc) break; }
            }
        }
        if (rc != HCIMG_OK) break;
        if (desc->Interlace || fx != 0 || fy != 0 || fw != W || fh != H) { rc = hcimg_rows(d, 0, H); if (rc) break; }
    }
done:
    d->frame_count = frames;
    d->has_alpha = transparent >= 0;
    if (rc == HCIMG_OK && frames == 0) rc = hcimg_fail(d, "GIF: no image in the file");
    free(line);
    free(rgba);
    DGifCloseFile(gif, &err);
    /* The encoded bytes are no longer needed. */
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
    if (rc != HCIMG_OK) return rc;
    return hcimg_complete(d);
}

static void gif_free_state(hcimg_decoder *d) {
    gif_state *s = d->state;
    if (!s) return;
    free(s->buf);
    free(s);
    d->state = NULL;
}

static const struct hcimg_codec gif_codec = { gif_feed, gif_finish, gif_free_state };

int hcimg_gif_init(hcimg_decoder *d) {
    gif_state *s = calloc(1, sizeof *s);
    if (!s) return HCIMG_ERROR;
    d->state = s;
    d->codec = &gif_codec;
    return HCIMG_OK;
}
