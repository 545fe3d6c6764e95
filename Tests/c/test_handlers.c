/* The content handlers from C: text, image, stream, file, compound, custom, empty bodies. */
#include "testutil.h"
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

static hc_client *client;

static hc_code get(const char *path, hc_handler *handler, hc_response **out) {
    return hc_test_send(client, "GET", path, handler, out);
}

static void test_text_decodes_by_charset_bom_and_reports_offsets(void) {
    hc_handler *h = hc_handler_text_new(HC_ENCODING_AUTO, 1);
    hc_response *r = NULL;
    const char *text; size_t len;
    CHECK_CODE(get("/text?charset=iso-8859-1&text=caf%C3%A9", h, &r), HC_OK);
    CHECK_CODE(hc_response_text(r, &text, &len), HC_OK);
    CHECK(len == 5 && strcmp(text, "caf\xc3\xa9") == 0);
    hc_response_free(r);
    /* UTF-16LE with a BOM and no charset: "hi" */
    CHECK_CODE(get("/text?nocharset=1&raw_hex=fffe68006900", h, &r), HC_OK);
    hc_response_text(r, &text, &len);
    CHECK(len == 2 && strcmp(text, "hi") == 0);
    hc_response_free(r);
    /* Windows-1252's euro sign */
    CHECK_CODE(get("/text?charset=windows-1252&raw_hex=80", h, &r), HC_OK);
    hc_response_text(r, &text, &len);
    CHECK(len == 3 && memcmp(text, "\xe2\x82\xac", 3) == 0);
    hc_response_free(r);
    /* Invalid UTF-8 at byte 3 in strict mode */
    CHECK_CODE(get("/text?charset=utf-8&raw_hex=616263ff6465", h, &r), HC_EDECODE);
    CHECK(hc_error_offset(hc_error_last()) == 3);
    CHECK_CODE(get("/text?charset=klingon&raw_hex=6162", h, &r), HC_EDECODE);
    hc_handler_free(h);

    h = hc_handler_text_new(HC_ENCODING_AUTO, 0);
    CHECK_CODE(get("/text?charset=utf-8&raw_hex=616263ff6465", h, &r), HC_OK);
    hc_response_text(r, &text, &len);
    CHECK(len == 8 && memcmp(text, "abc\xef\xbf\xbd" "de", 8) == 0);
    hc_response_free(r);
    hc_handler_free(h);
    CHECK(hc_handler_text_new((hc_encoding)42, 1) == NULL);
}

/* Text may contain NUL: every one of the `len` bytes lent is the text, and a NUL follows them
 * (the copy stopped at the first NUL, so the bytes after it were read past its end). */
static void test_text_with_nul_is_lent_whole(void) {
    hc_handler *h = hc_handler_text_new(HC_ENCODING_AUTO, 1);
    hc_response *r = NULL;
    const char *text = NULL; size_t len = 0;
    CHECK_CODE(get("/text?charset=utf-8&raw_hex=00616263006465666768", h, &r), HC_OK);
    CHECK_CODE(hc_response_text(r, &text, &len), HC_OK);
    CHECK(len == 10 && memcmp(text, "\0abc\0defgh", 11) == 0);
    hc_response_free(r);
    hc_handler_free(h);
}

static void test_image_sniffs_format_and_size(void) {
    static const char *formats[] = {"png", "jpeg", "gif", "webp", "bmp"};
    hc_handler *h = hc_handler_image_new();
    for (int i = 0; i < 5; i++) {
        char path[64];
        snprintf(path, sizeof path, "/image/%s", formats[i]);
        hc_response *r = NULL;
        CHECK_CODE(get(path, h, &r), HC_OK);
        hc_image_format format = HC_IMAGE_NONE;
        int64_t w = 0, hgt = 0;
        CHECK_CODE(hc_response_image(r, &format, &w, &hgt), HC_OK);
        CHECK((int)format == i + 1 && w == 3 && hgt == 2);
        const uint8_t *data; size_t len;
        CHECK_CODE(hc_response_bytes(r, &data, &len), HC_OK);
        CHECK(len > 10);
        hc_response_free(r);
    }
    hc_response *r = NULL;
    CHECK_CODE(get("/image/jpeg?ctype=image/png", h, &r), HC_EDECODE);
    CHECK_CODE(get("/image/lying-png", h, &r), HC_EDECODE);
    CHECK_CODE(get("/text", h, &r), HC_EUNACCEPTABLE_CONTENT_TYPE);
    hc_handler_free(h);
}

static int collect(void *userdata, const uint8_t *buf, size_t len) {
    size_t *total = userdata;
    for (size_t i = 0; i < len; i++) if (buf[i] != (*total + i) % 251) return HC_EDECODE;
    *total += len;
    return 0;
}

static int refuse(void *userdata, const uint8_t *buf, size_t len) {
    (void)userdata; (void)buf; (void)len;
    return 1000; /* not an hc_code: becomes HC_ECALLBACK */
}

static void test_stream_passes_chunks_on(void) {
    size_t total = 0;
    hc_handler *h = hc_handler_stream_cb_new(collect, &total);
    hc_response *r = NULL;
    CHECK_CODE(get("/bytes/300000?chunked=1&chunk=7000", h, &r), HC_OK);
    CHECK(total == 300000 && hc_response_streamed(r) == 300000);
    hc_response_free(r);
    hc_handler_free(h);

    h = hc_handler_stream_cb_new(refuse, NULL);
    CHECK_CODE(get("/bytes/1000", h, &r), HC_ECALLBACK);
    hc_handler_free(h);

    FILE *f = tmpfile();
    h = hc_handler_stream_file_new(f);
    CHECK_CODE(get("/bytes/5000", h, &r), HC_OK);
    CHECK(ftell(f) == 5000);
    hc_response_free(r);
    hc_handler_free(h);
    h = hc_handler_stream_fd_new(fileno(f));
    CHECK_CODE(get("/bytes/100", h, &r), HC_OK);
    CHECK(lseek(fileno(f), 0, SEEK_END) == 5100);
    hc_response_free(r);
    hc_handler_free(h);
    fclose(f);
    CHECK(hc_handler_stream_fd_new(-1) == NULL);
    CHECK(hc_handler_stream_cb_new(NULL, NULL) == NULL);
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) if (e->d_name[0] != '.' || strlen(e->d_name) > 2) n++;
    if (d) closedir(d);
    return n - (d ? 0 : 0);
}

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void test_file_download_is_atomic(void) {
    char dir[] = "/tmp/hc-test-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char target[256], nested[256];
    snprintf(target, sizeof target, "%s/out.bin", dir);
    snprintf(nested, sizeof nested, "%s/a/b/out.bin", dir);

    hc_handler *h = hc_handler_file_new(target, 0);
    hc_response *r = NULL;
    CHECK_CODE(get("/bytes/200000", h, &r), HC_OK);
    const char *path; int64_t written, size; int resumed;
    CHECK_CODE(hc_response_file(r, &path, &written, &size, &resumed), HC_OK);
    CHECK(strcmp(path, target) == 0 && written == 200000 && size == 200000 && !resumed);
    hc_response_free(r);
    CHECK(file_size(target) == 200000);

    /* A failed download (connection reset mid-body) leaves the old file and no temp file. */
    CHECK_CODE(get("/reset?bytes=50000", h, &r), HC_ETRANSPORT);
    CHECK(file_size(target) == 200000);
    CHECK_CODE(get("/truncated?bytes=100", h, &r), HC_ETRANSPORT);
    CHECK_CODE(get("/status/404", h, &r), HC_EUNACCEPTABLE_STATUS);
    CHECK(file_size(target) == 200000);
    CHECK(count_entries(dir) == 1);
    hc_handler_free(h);

    h = hc_handler_file_new(target, HC_FILE_NO_OVERWRITE);
    CHECK_CODE(get("/bytes/10", h, &r), HC_ELOCAL_IO);
    hc_handler_free(h);

    h = hc_handler_file_new(nested, 0);
    CHECK_CODE(get("/bytes/10", h, &r), HC_ELOCAL_IO); /* missing directory, refused before sending */
    hc_handler_free(h);
    h = hc_handler_file_new(nested, HC_FILE_MAKE_DIRS);
    CHECK_CODE(get("/bytes/10", h, &r), HC_OK);
    hc_response_free(r);
    CHECK(file_size(nested) == 10);
    hc_handler_free(h);

    /* The size limit removes the partial file too. */
    h = hc_handler_file_new(target, 0);
    hc_handler_set_max_size(h, 1000);
    CHECK_CODE(get("/bytes/5000", h, &r), HC_ETOO_LARGE);
    CHECK(file_size(target) == 200000 && count_entries(dir) == 2);
    hc_handler_free(h);

    /* Resume: a reset leaves out.bin.part, the next request continues it with a Range. */
    char part[300];
    snprintf(part, sizeof part, "%s.part", target);
    unlink(target);
    h = hc_handler_file_new(target, HC_FILE_RESUME);
    CHECK_CODE(get("/range/100000?reset_after=40000", h, &r), HC_ETRANSPORT);
    CHECK(file_size(part) > 0 && file_size(target) == -1);
    CHECK_CODE(get("/range/100000", h, &r), HC_OK);
    CHECK_CODE(hc_response_file(r, NULL, &written, &size, &resumed), HC_OK);
    CHECK(resumed == 1 && size == 100000 && written < 100000);
    hc_response_free(r);
    CHECK(file_size(target) == 100000 && file_size(part) == -1);
    FILE *f = fopen(target, "rb");
    int ok = 1, c, i = 0;
    while (f && (c = fgetc(f)) != EOF) { if (c != i % 251) ok = 0; i++; }
    if (f) fclose(f);
    CHECK(ok && i == 100000);
    hc_handler_free(h);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

static void test_compound_takes_the_first_that_accepts(void) {
    hc_handler *img = hc_handler_image_new();
    hc_handler *text = hc_handler_text_new(HC_ENCODING_AUTO, 1);
    hc_handler *both[] = {img, text};
    hc_handler *h = hc_handler_compound_new(both, 2);
    hc_handler_free(img);
    hc_handler_free(text);
    hc_response *r = NULL;
    CHECK_CODE(get("/image/gif", h, &r), HC_OK);
    CHECK(hc_response_handler_index(r) == 0);
    int64_t w = 0;
    CHECK_CODE(hc_response_image(r, NULL, &w, NULL), HC_OK);
    CHECK(w == 3);
    hc_response_free(r);
    CHECK_CODE(get("/text?text=hey", h, &r), HC_OK);
    CHECK(hc_response_handler_index(r) == 1);
    const char *t; size_t len;
    CHECK_CODE(hc_response_text(r, &t, &len), HC_OK);
    CHECK(strcmp(t, "hey") == 0);
    hc_response_free(r);
    hc_handler_free(h);
    CHECK(hc_handler_compound_new(NULL, 0) == NULL);
}

struct trace { char log[256]; size_t bytes; int status; int reject; };

static int t_accept(void *u, const hc_response *head) {
    struct trace *t = u;
    strcat(t->log, "accept ");
    t->status = hc_response_status(head);
    return t->reject ? HC_EUNACCEPTABLE_STATUS : 0;
}
static int t_consume(void *u, const uint8_t *buf, size_t len) {
    struct trace *t = u;
    (void)buf;
    if (t->bytes == 0) strcat(t->log, "consume ");
    t->bytes += len;
    return 0;
}
static int t_finish(void *u) { strcat(((struct trace *)u)->log, "finish "); return 0; }
static void t_cleanup(void *u, int failed) {
    strcat(((struct trace *)u)->log, failed ? "cleanup(failed)" : "cleanup");
}

static void test_custom_handler_is_driven_in_order(void) {
    struct trace t = {0};
    hc_handler_vtable vt = {HC_HANDLER_VTABLE_VERSION, t_accept, t_consume, t_finish, t_cleanup};
    hc_handler *h = hc_handler_custom_new(&vt, &t);
    hc_response *r = NULL;
    CHECK_CODE(get("/bytes/12345", h, &r), HC_OK);
    CHECK(strcmp(t.log, "accept consume finish cleanup") == 0);
    CHECK(t.bytes == 12345 && t.status == 200);
    hc_response_free(r);

    memset(&t, 0, sizeof t);
    t.reject = 1;
    CHECK_CODE(get("/bytes/10", h, &r), HC_EUNACCEPTABLE_STATUS);
    CHECK(strcmp(t.log, "accept cleanup(failed)") == 0 && t.bytes == 0);

    memset(&t, 0, sizeof t);
    CHECK_CODE(get("/status/500", h, &r), HC_EUNACCEPTABLE_STATUS); /* acceptance first */
    CHECK(strcmp(t.log, "cleanup(failed)") == 0);
    hc_handler_free(h);

    vt.version = 99;
    CHECK(hc_handler_custom_new(&vt, &t) == NULL);
    CHECK(hc_handler_custom_new(NULL, NULL) == NULL);
}

static void test_empty_bodies_and_defaults(void) {
    hc_handler *img = hc_handler_image_new();
    hc_response *r = NULL;
    CHECK_CODE(get("/status/204", img, &r), HC_OK);
    hc_image_format f = HC_IMAGE_PNG;
    CHECK_CODE(hc_response_image(r, &f, NULL, NULL), HC_OK);
    CHECK(f == HC_IMAGE_NONE);
    hc_response_free(r);
    hc_request *head = hc_request_new("HEAD", hc_url("/image/png"));
    hc_request_set_handler(head, img);
    CHECK_CODE(hc_client_send(client, head, &r), HC_OK);
    hc_response_free(r);
    hc_request_free(head);
    hc_handler_free(img);

    int pairs[] = {200, 299, 404, 404};
    CHECK_CODE(hc_defaults_accept_status(pairs, 2), HC_OK);
    hc_handler *h = hc_handler_bytes_new(0);
    hc_defaults_reset();
    CHECK_CODE(get("/status/404", h, &r), HC_OK);
    hc_response_free(r);
    hc_handler_free(h);
    h = hc_handler_bytes_new(0);
    CHECK_CODE(get("/status/404", h, &r), HC_EUNACCEPTABLE_STATUS);
    hc_handler_free(h);
    int bad[] = {300, 200};
    CHECK_CODE(hc_defaults_accept_status(bad, 1), HC_EINVALID_ARG);
}

static void test_defaults_and_limits_are_configurable(void) {
    const char *types[] = {"text/*"};
    CHECK_CODE(hc_defaults_accept_types(types, 1), HC_OK);
    hc_handler *texts_only = hc_handler_bytes_new(0);
    const char *paths[] = {"error.message"};
    CHECK_CODE(hc_defaults_server_message_paths(paths, 1), HC_OK);
    hc_defaults_reset();
    hc_response *r = NULL;
    CHECK_CODE(get("/bytes/10", texts_only, &r), HC_EUNACCEPTABLE_CONTENT_TYPE);
    hc_handler_free(texts_only);
    const char *bad[] = {"nonsense"};
    CHECK_CODE(hc_defaults_accept_types(bad, 1), HC_EINVALID_ARG);

    hc_handler *img = hc_handler_image_new();
    CHECK_CODE(hc_handler_empty_statuses(img, NULL, 0), HC_OK);
    CHECK_CODE(get("/status/204", img, &r), HC_EDECODE);
    const char *methods[] = {"HEAD"};
    CHECK_CODE(hc_handler_empty_methods(img, methods, 1), HC_OK);
    hc_handler_free(img);

    hc_client *small = hc_client_new();
    CHECK_CODE(hc_client_set_rejected_body_limit(small, 5), HC_OK);
    hc_request *req = hc_request_new("GET", hc_url("/status/500"));
    CHECK_CODE(hc_client_send(small, req, &r), HC_EUNACCEPTABLE_STATUS);
    const uint8_t *body; size_t len;
    hc_error_body(hc_error_last(), &body, &len);
    CHECK(len == 5 && memcmp(body, "statu", 5) == 0);
    hc_request_free(req);
    hc_client_free(small);
}

/* A HEAD or a 204 says nothing of a download's content: the file stays as it was. */
static void test_download_answered_with_no_body_keeps_the_file(void) {
    char dir[] = "/tmp/hc-test-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char target[256];
    snprintf(target, sizeof target, "%s/out.bin", dir);
    hc_handler *file = hc_handler_file_new(target, 0);
    hc_response *r = NULL;
    CHECK_CODE(get("/bytes/1000", file, &r), HC_OK);
    hc_response_free(r);
    const char *methods[] = {"HEAD", "GET"}, *paths[] = {"/bytes/500", "/status/204"};
    for (int i = 0; i < 2; i++) {
        CHECK_CODE(hc_test_send(client, methods[i], paths[i], file, &r), HC_OK);
        const char *path; int64_t written = -1, size = -1; int resumed = -1;
        CHECK_CODE(hc_response_file(r, &path, &written, &size, &resumed), HC_OK);
        CHECK(written == 0 && size == 1000 && resumed == 0);
        hc_response_free(r);
    }
    struct stat st;
    CHECK(stat(target, &st) == 0 && st.st_size == 1000);
    hc_handler_free(file);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* A bytes handler's allocator: memory lent for bodies of at least the threshold, released when
 * the response is freed, even after the handler is. */
struct lending { int allocated, released; void *memory; size_t size; };

static void *lend(void *userdata, size_t size) {
    struct lending *l = userdata;
    l->allocated++;
    l->size = size;
    return l->memory = malloc(size);
}

static void take_back(void *userdata, void *memory) {
    struct lending *l = userdata;
    if (memory == l->memory) { l->released++; free(memory); }
}

static void test_bytes_fill_lent_memory_released_with_the_response(void) {
    struct lending l = {0};
    hc_handler *h = hc_handler_bytes_new(0);
    CHECK_CODE(hc_handler_bytes_set_allocator(h, 65536, lend, take_back, &l), HC_OK);
    hc_response *small = NULL, *big = NULL;
    CHECK_CODE(get("/bytes/1000", h, &small), HC_OK);
    CHECK(l.allocated == 0);  /* below the threshold: the library's own memory */
    CHECK_CODE(get("/bytes/100000", h, &big), HC_OK);
    const uint8_t *data; size_t len;
    CHECK_CODE(hc_response_bytes(big, &data, &len), HC_OK);
    CHECK(l.allocated == 1 && l.size == 100000 && len == 100000 && data == l.memory);
    CHECK(data[0] == 0 && data[99999] == (uint8_t)(99999 % 251));
    hc_handler_free(h);  /* the response outlives its handler */
    CHECK(l.released == 0);
    hc_response_free(big);
    CHECK(l.released == 1);
    hc_response_free(small);
    CHECK(l.released == 1);
}

int main(void) {
    hc_test_server_start();
    client = hc_client_new();
    test_text_decodes_by_charset_bom_and_reports_offsets();
    test_text_with_nul_is_lent_whole();
    test_image_sniffs_format_and_size();
    test_stream_passes_chunks_on();
    test_file_download_is_atomic();
    test_compound_takes_the_first_that_accepts();
    test_custom_handler_is_driven_in_order();
    test_empty_bodies_and_defaults();
    test_defaults_and_limits_are_configurable();
    test_bytes_fill_lent_memory_released_with_the_response();
    test_download_answered_with_no_body_keeps_the_file();
    hc_client_free(client);
    return hc_test_finish();
}
