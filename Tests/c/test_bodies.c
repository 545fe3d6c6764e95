/* Request bodies from C: the form encoder and its options, query strings, text, JSON, files,
 * descriptors, read callbacks and multipart, checked byte for byte against the echo server. */
#include "testutil.h"
#include <fcntl.h>
#include <stdint.h>

static hc_client *client;

/* Sends `req` and returns the response (the caller frees it), or NULL after checking `expect`. */
static hc_response *send_expect(hc_request *req, hc_code expect) {
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), expect);
    return resp;
}

static int body_is(const hc_response *resp, const void *want, size_t want_len) {
    const uint8_t *data = NULL;
    size_t len = 0;
    if (!resp || hc_response_bytes(resp, &data, &len) != HC_OK) return 0;
    return len == want_len && (len == 0 || memcmp(data, want, len) == 0);
}

static int body_has(const hc_response *resp, const char *needle) {
    const uint8_t *data = NULL;
    size_t len = 0;
    if (!resp || hc_response_bytes(resp, &data, &len) != HC_OK) return 0;
    return memmem(data, len, needle, strlen(needle)) != NULL;
}

static int encodes_to(const hc_form *form, const char *want) {
    uint8_t *buf = NULL;
    size_t len = 0;
    if (hc_form_encode(form, &buf, &len) != HC_OK) return 0;
    int same = len == strlen(want) && memcmp(buf, want, len) == 0 && buf[len] == 0;
    if (!same) fprintf(stderr, "  encoded: %.*s\n  wanted:  %s\n", (int)len, buf, want);
    hc_buffer_free(buf);
    return same;
}

static void test_form_escapes_keys_and_values_with_percent_20(void) {
    hc_form *form = hc_form_new();
    CHECK_CODE(hc_form_add(form, "name", "Lucas Drance"), HC_OK);
    CHECK_CODE(hc_form_add(form, "age", "1.5"), HC_OK);
    CHECK_CODE(hc_form_add(form, "first name", "a+b&c=d/é~"), HC_OK);
    CHECK_CODE(hc_form_add(form, "name", "again"), HC_OK);
    const uint8_t key[] = {'k', 0, 0xFF};
    const uint8_t value[] = {0, 0x80, ' ', '-', '.', '_'};
    CHECK_CODE(hc_form_add_bytes(form, key, sizeof key, value, sizeof value), HC_OK);
    CHECK(encodes_to(form, "name=Lucas%20Drance&age=1.5&first%20name=a%2Bb%26c%3Dd%2F%C3%A9~"
                           "&name=again&k%00%FF=%00%80%20-._"));
    CHECK_CODE(hc_form_set_space_encoding(form, HC_FORM_SPACE_PLUS), HC_OK);
    CHECK(encodes_to(form, "name=Lucas+Drance&age=1.5&first+name=a%2Bb%26c%3Dd%2F%C3%A9~"
                           "&name=again&k%00%FF=%00%80+-._"));
    CHECK_CODE(hc_form_set_sort(form, 1), HC_OK);
    CHECK(encodes_to(form, "age=1.5&first+name=a%2Bb%26c%3Dd%2F%C3%A9~&k%00%FF=%00%80+-._"
                           "&name=Lucas+Drance&name=again"));
    CHECK_CODE(hc_form_set_space_encoding(form, (hc_form_space)7), HC_EINVALID_ARG);
    hc_form_free(form);

    form = hc_form_new();
    CHECK(encodes_to(form, ""));
    hc_form_free(form);
}

static void test_form_nested_values_follow_the_options(void) {
    hc_form *form = hc_form_new();
    CHECK_CODE(hc_form_open_array(form, "a"), HC_OK);
    CHECK_CODE(hc_form_add(form, NULL, "1"), HC_OK);
    CHECK_CODE(hc_form_add_bool(form, NULL, 1), HC_OK);
    CHECK_CODE(hc_form_add(form, "no", "keys in arrays"), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_close(form), HC_OK);
    CHECK_CODE(hc_form_open_dict(form, "d"), HC_OK);
    CHECK_CODE(hc_form_add(form, "b", "c"), HC_OK);
    CHECK_CODE(hc_form_add_null(form, "n"), HC_OK);
    CHECK_CODE(hc_form_add(form, NULL, "needs a key"), HC_EINVALID_ARG);
    uint8_t *buf = NULL;
    size_t len = 0;
    CHECK_CODE(hc_form_encode(form, &buf, &len), HC_EINVALID_ARG); /* d is still open */
    CHECK(buf == NULL && len == 0);
    CHECK_CODE(hc_form_close(form), HC_OK);
    CHECK_CODE(hc_form_close(form), HC_EINVALID_ARG);               /* nothing open */
    CHECK_CODE(hc_form_add_bool(form, "f", 0), HC_OK);

    CHECK(encodes_to(form, "a%5B%5D=1&a%5B%5D=1&d%5Bb%5D=c&f=0"));
    CHECK_CODE(hc_form_set_array_encoding(form, HC_FORM_ARRAYS_REPEAT), HC_OK);
    CHECK_CODE(hc_form_set_bool_encoding(form, HC_FORM_BOOLS_LITERAL), HC_OK);
    CHECK_CODE(hc_form_set_null_encoding(form, HC_FORM_NULLS_EMPTY), HC_OK);
    CHECK(encodes_to(form, "a=1&a=true&d%5Bb%5D=c&d%5Bn%5D=&f=false"));
    CHECK_CODE(hc_form_set_array_encoding(form, HC_FORM_ARRAYS_INDEXED), HC_OK);
    CHECK(encodes_to(form, "a%5B0%5D=1&a%5B1%5D=true&d%5Bb%5D=c&d%5Bn%5D=&f=false"));
    CHECK_CODE(hc_form_set_array_encoding(form, (hc_form_arrays)-1), HC_EINVALID_ARG);
    hc_form_free(form);
}

static void test_form_body_and_query_string(void) {
    hc_form *form = hc_form_new();
    hc_form_add(form, "q", "a b+c");
    hc_form_add(form, "lang", "fr");
    hc_request *req = hc_request_new("POST", hc_url("/echo/raw"));
    CHECK_CODE(hc_request_set_form_body(req, form), HC_OK);
    hc_form_add(form, "later", "not in the body"); /* the body was encoded when set */
    hc_response *resp = send_expect(req, HC_OK);
    CHECK(body_is(resp, "q=a%20b%2Bc&lang=fr", 19));
    CHECK(resp && strcmp(hc_response_header(resp, "x-request-content-type"),
                         "application/x-www-form-urlencoded") == 0);
    hc_response_free(resp);
    hc_request_free(req);

    /* The caller's Content-Type wins. */
    req = hc_request_new("PUT", hc_url("/echo/raw"));
    CHECK_CODE(hc_request_add_header(req, "Content-Type", "application/x-custom"), HC_OK);
    CHECK_CODE(hc_request_set_form_body(req, form), HC_OK);
    resp = send_expect(req, HC_OK);
    CHECK(resp && strcmp(hc_response_header(resp, "x-request-content-type"), "application/x-custom") == 0);
    hc_response_free(resp);
    hc_request_free(req);

    req = hc_request_new("GET", hc_url("/echo?x=1#frag"));
    CHECK_CODE(hc_request_add_query(req, form), HC_OK);
    resp = send_expect(req, HC_OK);
    CHECK(body_has(resp, "\"query\": \"x=1&q=a%20b%2Bc&lang=fr&later=not%20in%20the%20body\""));
    CHECK(body_has(resp, "\"method\": \"GET\""));
    hc_response_free(resp);
    hc_request_free(req);
    hc_form_free(form);
}

static void test_text_json_and_untyped_bodies(void) {
    hc_request *req = hc_request_new("POST", hc_url("/echo/raw"));
    CHECK_CODE(hc_request_set_text_body(req, "h\xC3\xA9llo", "ISO-8859-1"), HC_OK);
    hc_response *resp = send_expect(req, HC_OK);
    CHECK(body_is(resp, "h\xE9llo", 5));
    CHECK(resp && strcmp(hc_response_header(resp, "x-request-content-type"), "text/plain; charset=iso-8859-1") == 0);
    hc_response_free(resp);

    CHECK_CODE(hc_request_set_text_body(req, "h\xC3\xA9llo", NULL), HC_OK);
    resp = send_expect(req, HC_OK);
    CHECK(body_is(resp, "h\xC3\xA9llo", 6));
    CHECK(resp && strcmp(hc_response_header(resp, "x-request-content-type"), "text/plain; charset=utf-8") == 0);
    hc_response_free(resp);
    CHECK_CODE(hc_request_set_text_body(req, "\xE2\x82\xAC 5", "latin1"), HC_EINVALID_ARG); /* the euro sign */
    CHECK_CODE(hc_request_set_text_body(req, "x", "klingon"), HC_EINVALID_ARG);

    const char *json = "{\"a\":[1,2.5,null]}";
    CHECK_CODE(hc_request_set_json_body(req, (const uint8_t *)json, strlen(json)), HC_OK);
    resp = send_expect(req, HC_OK);
    CHECK(body_is(resp, json, strlen(json)));
    CHECK(resp && strcmp(hc_response_header(resp, "x-request-content-type"), "application/json") == 0);
    hc_response_free(resp);

    /* A body without a type is not labelled as a form by libcurl. */
    CHECK_CODE(hc_request_set_body(req, (const uint8_t *)"raw", 3, NULL), HC_OK);
    resp = send_expect(req, HC_OK);
    CHECK(body_is(resp, "raw", 3));
    CHECK(resp && hc_response_header(resp, "x-request-content-type") == NULL);
    hc_response_free(resp);
    hc_request_free(req);
}

static char tmp_dir[] = "/tmp/hc_test_bodies_XXXXXX";

static const char *write_file(const char *name, size_t n) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; i < n; i++) fputc((int)(i % 251), f);
    fclose(f);
    return path;
}

static int pattern_body(const hc_response *resp, size_t n, size_t offset) {
    const uint8_t *data = NULL;
    size_t len = 0;
    if (!resp || hc_response_bytes(resp, &data, &len) != HC_OK || len != n) return 0;
    for (size_t i = 0; i < n; i++) if (data[i] != (i + offset) % 251) return 0;
    return 1;
}

static void test_file_and_descriptor_bodies(void) {
    const char *path = write_file("upload.bin", 300000);
    hc_request *req = hc_request_new("POST", hc_url("/echo/raw"));
    CHECK_CODE(hc_request_set_file_body(req, path, "application/octet-stream"), HC_OK);
    hc_response *resp = send_expect(req, HC_OK);
    CHECK(pattern_body(resp, 300000, 0));
    hc_response_free(resp);
    resp = send_expect(req, HC_OK); /* the file is reopened at each send */
    CHECK(pattern_body(resp, 300000, 0));
    hc_response_free(resp);

    char missing[300];
    snprintf(missing, sizeof missing, "%s/missing.bin", tmp_dir);
    CHECK_CODE(hc_request_set_file_body(req, missing, NULL), HC_OK);
    send_expect(req, HC_ELOCAL_IO);
    CHECK_CODE(hc_request_set_file_body(req, tmp_dir, NULL), HC_OK); /* a directory */
    send_expect(req, HC_ELOCAL_IO);

    /* A descriptor is read from its offset, which is left where it was. */
    int fd = open(path, O_RDONLY);
    CHECK(lseek(fd, 1000, SEEK_SET) == 1000);
    CHECK_CODE(hc_request_set_fd_body(req, fd, -1, NULL), HC_OK);
    resp = send_expect(req, HC_OK);
    CHECK(pattern_body(resp, 299000, 1000));
    hc_response_free(resp);
    CHECK(lseek(fd, 0, SEEK_CUR) == 1000);
    CHECK_CODE(hc_request_set_fd_body(req, fd, 10, NULL), HC_OK);
    resp = send_expect(req, HC_OK);
    CHECK(pattern_body(resp, 10, 1000));
    hc_response_free(resp);
    close(fd);
    CHECK_CODE(hc_request_set_fd_body(req, -1, -1, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_fd_body(req, 0, -5, NULL), HC_EINVALID_ARG);
    hc_request_free(req);

    /* A pipe has no size: it is sent chunked. */
    int fds[2];
    CHECK(pipe(fds) == 0);
    CHECK(write(fds[1], "through a pipe", 14) == 14);
    close(fds[1]);
    req = hc_request_new("POST", hc_url("/echo"));
    CHECK_CODE(hc_request_set_fd_body(req, fds[0], -1, "text/plain"), HC_OK);
    resp = send_expect(req, HC_OK);
    CHECK(body_has(resp, "[\"Transfer-Encoding\", \"chunked\"]"));
    CHECK(body_has(resp, "\"body_len\": 14"));
    hc_response_free(resp);
    close(fds[0]);
    hc_request_free(req);
}

struct source { size_t total, sent, fail_at; int calls; };

static int produce(void *userdata, uint8_t *buf, size_t cap, size_t *written) {
    struct source *src = userdata;
    src->calls++;
    if (src->fail_at && src->sent >= src->fail_at) return 42;
    size_t n = src->total - src->sent;
    if (n > cap) n = cap;
    if (n > 7777) n = 7777; /* odd pieces */
    for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)((src->sent + i) % 251);
    src->sent += n;
    *written = n;
    return 0;
}

static void test_read_callback_bodies(void) {
    struct source src = {200000, 0, 0, 0};
    hc_request *req = hc_request_new("POST", hc_url("/echo/raw"));
    CHECK_CODE(hc_request_set_read_body(req, produce, &src, -1, NULL), HC_OK);
    hc_response *resp = send_expect(req, HC_OK);
    CHECK(pattern_body(resp, 200000, 0));
    CHECK(src.calls > 1);
    hc_response_free(resp);

    src = (struct source){200000, 0, 0, 0};
    CHECK_CODE(hc_request_set_read_body(req, produce, &src, 200000, "application/x-gen"), HC_OK);
    resp = send_expect(req, HC_OK);
    CHECK(pattern_body(resp, 200000, 0));
    CHECK(resp && strcmp(hc_response_header(resp, "x-request-content-type"), "application/x-gen") == 0);
    hc_response_free(resp);

    /* Non-zero from the callback aborts the transfer. */
    src = (struct source){200000, 0, 50000, 0};
    CHECK_CODE(hc_request_set_read_body(req, produce, &src, -1, NULL), HC_OK);
    send_expect(req, HC_ECALLBACK);
    CHECK(strstr(hc_error_message(hc_error_last()), "42") != NULL);

    /* Fewer bytes than announced is the callback's failure too. */
    src = (struct source){100, 0, 0, 0};
    CHECK_CODE(hc_request_set_read_body(req, produce, &src, 1000, NULL), HC_OK);
    send_expect(req, HC_ECALLBACK);
    CHECK_CODE(hc_request_set_read_body(req, NULL, NULL, -1, NULL), HC_EINVALID_ARG);
    hc_request_free(req);
}

static void test_multipart_bodies(void) {
    const char *path = write_file("part.txt", 0);
    FILE *f = fopen(path, "w");
    fputs("file contents\n", f);
    fclose(f);
    char kept[300];
    snprintf(kept, sizeof kept, "%s", path);

    hc_multipart *mp = hc_multipart_new();
    CHECK_CODE(hc_multipart_add_field(mp, "title", "a b"), HC_OK);
    CHECK_CODE(hc_multipart_add_file(mp, "doc", kept, "report.txt", "text/plain"), HC_OK);
    const uint8_t raw[] = {0, 1, 2, 255};
    CHECK_CODE(hc_multipart_add_bytes(mp, "blob", raw, sizeof raw, "b.bin", "application/x-blob"), HC_OK);
    CHECK_CODE(hc_multipart_add_field(mp, "bad\r\nname", "x"), HC_EINVALID_ARG);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/nope.txt", tmp_dir);
    CHECK_CODE(hc_multipart_add_file(mp, "gone", missing, NULL, NULL), HC_ELOCAL_IO);

    hc_request *req = hc_request_new("POST", hc_url("/echo/raw"));
    CHECK_CODE(hc_request_set_multipart(req, mp), HC_OK);
    hc_multipart_free(mp); /* the request keeps its copy */
    hc_response *resp = send_expect(req, HC_OK);
    const char *ctype = resp ? hc_response_header(resp, "x-request-content-type") : NULL;
    CHECK(ctype && strncmp(ctype, "multipart/form-data; boundary=", 30) == 0);
    CHECK(body_has(resp, "Content-Disposition: form-data; name=\"title\"\r\n\r\na b\r\n"));
    CHECK(body_has(resp, "Content-Disposition: form-data; name=\"doc\"; filename=\"report.txt\"\r\n"
                         "Content-Type: text/plain\r\n\r\nfile contents\n\r\n"));
    CHECK(body_has(resp, "name=\"blob\"; filename=\"b.bin\"\r\nContent-Type: application/x-blob\r\n\r\n"));
    const uint8_t *data; size_t len;
    hc_response_bytes(resp, &data, &len);
    CHECK(memmem(data, len, raw, sizeof raw) != NULL);
    hc_response_free(resp);

    /* The file vanishes between building and sending: HC_ELOCAL_IO, nothing sent. */
    CHECK(unlink(kept) == 0);
    send_expect(req, HC_ELOCAL_IO);
    hc_request_free(req);
}

static void test_null_arguments_are_errors(void) {
    uint8_t *buf = (uint8_t *)1;
    size_t len = 1;
    hc_form *form = hc_form_new();
    CHECK_CODE(hc_form_add(NULL, "a", "b"), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_add(form, "a", NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_add_bytes(form, NULL, 3, (const uint8_t *)"x", 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_add_bytes(form, (const uint8_t *)"k", 1, NULL, 2), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_add_bytes(form, (const uint8_t *)"k", 1, NULL, 0), HC_OK); /* empty value */
    CHECK(encodes_to(form, "k="));
    CHECK_CODE(hc_form_add_bool(NULL, "a", 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_add_null(NULL, "a"), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_open_array(NULL, "a"), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_open_dict(NULL, "a"), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_close(NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_set_space_encoding(NULL, HC_FORM_SPACE_PLUS), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_set_array_encoding(NULL, HC_FORM_ARRAYS_REPEAT), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_set_bool_encoding(NULL, HC_FORM_BOOLS_LITERAL), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_set_null_encoding(NULL, HC_FORM_NULLS_EMPTY), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_set_sort(NULL, 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_encode(NULL, &buf, &len), HC_EINVALID_ARG);
    CHECK(buf == NULL && len == 0);
    CHECK_CODE(hc_form_encode(form, NULL, &len), HC_EINVALID_ARG);
    hc_request *req = hc_request_new("POST", hc_url("/echo"));
    CHECK_CODE(hc_request_set_form_body(NULL, form), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_form_body(req, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_add_query(NULL, form), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_add_query(req, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_text_body(NULL, "x", NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_text_body(req, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_json_body(NULL, (const uint8_t *)"1", 1), HC_EINVALID_ARG);
    /* A length above SIZE_MAX/2 (a caller's bug, such as -1) is refused, not a crash. */
    CHECK_CODE(hc_request_set_body(req, (const uint8_t *)"x", (size_t)-1, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_body(req, NULL, 1, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_json_body(req, NULL, 5), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_json_body(req, (const uint8_t *)"1", SIZE_MAX), HC_EINVALID_ARG);
    CHECK_CODE(hc_form_add_bytes(form, (const uint8_t *)"k", SIZE_MAX, (const uint8_t *)"v", 1), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_file_body(NULL, "/x", NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_file_body(req, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_fd_body(NULL, 0, -1, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_read_body(NULL, produce, NULL, -1, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_multipart(NULL, NULL), HC_EINVALID_ARG);
    hc_multipart *mp = hc_multipart_new();
    CHECK_CODE(hc_request_set_multipart(NULL, mp), HC_EINVALID_ARG);
    CHECK_CODE(hc_request_set_multipart(req, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_multipart_add_field(NULL, "a", "b"), HC_EINVALID_ARG);
    CHECK_CODE(hc_multipart_add_field(mp, NULL, "b"), HC_EINVALID_ARG);
    CHECK_CODE(hc_multipart_add_file(NULL, "a", "/etc/hostname", NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_multipart_add_file(mp, "a", NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_multipart_add_bytes(NULL, "a", NULL, 0, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_multipart_add_bytes(mp, "a", NULL, 4, NULL, NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_multipart_add_bytes(mp, "empty", NULL, 0, NULL, NULL), HC_OK);
    hc_multipart_free(mp);
    hc_request_free(req);
    hc_form_free(form);
    hc_form_free(NULL);
    hc_multipart_free(NULL);
    hc_buffer_free(NULL);
}

int main(void) {
    if (!mkdtemp(tmp_dir)) { perror("mkdtemp"); return 2; }
    hc_test_server_start();
    client = hc_client_new();
    CHECK(client != NULL);
    test_form_escapes_keys_and_values_with_percent_20();
    test_form_nested_values_follow_the_options();
    test_form_body_and_query_string();
    test_text_json_and_untyped_bodies();
    test_file_and_descriptor_bodies();
    test_read_callback_bodies();
    test_multipart_bodies();
    test_null_arguments_are_errors();
    hc_client_free(client);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_dir);
    return hc_test_finish();
}
