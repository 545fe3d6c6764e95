/* Record streams from C: lines, JSON records, Server-Sent Events with reconnection; options and
 * their defaults; errors with record index and offset; NULL safety. */
#include "testutil.h"
#include <httpcontent_binding.h>  /* hc_handler_json_lines_pymarshal_new: NULL safety */

static hc_client *client;

/* "/records/echo?chunk=N&ctype=T&b64=..." for `len` bytes of `body`. */
static const char *echo_path(const char *body, size_t len, int chunk, const char *ctype) {
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    static char buf[4096];
    size_t n = (size_t)snprintf(buf, sizeof buf, "/records/echo?chunk=%d&ctype=%s&b64=", chunk, ctype);
    const unsigned char *p = (const unsigned char *)body;
    for (size_t i = 0; i < len && n + 8 < sizeof buf; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < len ? p[i + 2] : 0);
        buf[n++] = tbl[v >> 18 & 63];
        buf[n++] = tbl[v >> 12 & 63];
        buf[n++] = i + 1 < len ? tbl[v >> 6 & 63] : '=';
        buf[n++] = i + 2 < len ? tbl[v & 63] : '=';
    }
    buf[n] = 0;
    return buf;
}

/* -- lines */

struct lines { char got[32][32]; int n; int stop_after; };

static int on_line(void *userdata, const char *line, size_t len) {
    struct lines *l = userdata;
    if (l->n < 32 && len < 32) { memcpy(l->got[l->n], line, len); l->got[l->n][len] = 0; }
    l->n++;
    return l->stop_after && l->n >= l->stop_after ? HC_RECORDS_STOP : 0;
}

static void test_lines(void) {
    const char body[] = "one\r\ntwo\rthree\n\ncaf\xc3\xa9\r\nlast";
    for (int chunk = 1; chunk <= (int)sizeof body - 1; chunk++) {
        struct lines l = {0};
        hc_handler *h = hc_handler_lines_new(on_line, &l, NULL);
        hc_response *resp = NULL;
        CHECK_CODE(hc_test_send(client, "GET", echo_path(body, sizeof body - 1, chunk, "text/plain"), h, &resp), HC_OK);
        size_t count = 0;
        CHECK_CODE(hc_response_records(resp, &count, NULL), HC_OK);
        CHECK(count == 6 && l.n == 6);
        CHECK(strcmp(l.got[0], "one") == 0 && strcmp(l.got[1], "two") == 0 && strcmp(l.got[2], "three") == 0);
        CHECK(strcmp(l.got[3], "") == 0 && strcmp(l.got[4], "caf\xc3\xa9") == 0 && strcmp(l.got[5], "last") == 0);
        hc_response_free(resp);
        hc_handler_free(h);
    }
    /* Stopping early is success; a long line is HC_ETOO_LARGE. */
    struct lines l = {.stop_after = 2};
    hc_handler *h = hc_handler_lines_new(on_line, &l, NULL);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/ndjson?n=100000", h, &resp), HC_OK);
    CHECK(l.n == 2);
    hc_response_free(resp);
    hc_handler_free(h);

    hc_records_options opts;
    CHECK_CODE(hc_records_options_init(&opts, HC_RECORDS_OPTIONS_VERSION), HC_OK);
    opts.max_line_size = 5;
    struct lines l2 = {0};
    h = hc_handler_lines_new(on_line, &l2, &opts);
    CHECK_CODE(hc_test_send(client, "GET", echo_path("abc\nabcdefgh\n", 13, 3, "text/plain"), h, &resp), HC_ETOO_LARGE);
    CHECK(l2.n == 1);
    hc_handler_free(h);
}

/* -- JSON records */

struct records { int n; int64_t ints[16]; size_t skipped_index[8]; int64_t skipped_offset[8]; int skipped; };

static int on_record(void *userdata, size_t index, const hc_json *value) {
    struct records *r = userdata;
    CHECK((size_t)r->n == index);
    int64_t v = -1;
    if (hc_json_type(value) == HC_JSON_OBJECT) hc_json_int64(hc_json_get(value, "i"), &v);
    else hc_json_int64(value, &v);
    if (r->n < 16) r->ints[r->n] = v;
    r->n++;
    return 0;
}

static int on_skip(void *userdata, size_t index, int64_t offset, const char *message) {
    struct records *r = userdata;
    CHECK(message != NULL && strstr(message, "record") != NULL);
    if (r->skipped < 8) { r->skipped_index[r->skipped] = index; r->skipped_offset[r->skipped] = offset; }
    r->skipped++;
    return 0;
}

static void test_json_lines(void) {
    const char body[] = "{\"i\": 1}\r\n\n2\n{\"i\": oops}\n 3 \n4";
    size_t len = sizeof body - 1;
    for (int chunk = 1; chunk <= (int)len; chunk += 3) {
        struct records r = {0};
        hc_handler *h = hc_handler_json_lines_new(on_record, on_skip, &r, NULL);
        hc_response *resp = NULL;
        CHECK_CODE(hc_test_send(client, "GET", echo_path(body, len, chunk, "application/x-ndjson"), h, &resp), HC_EDECODE);
        CHECK(hc_error_record_index(hc_error_last()) == 2);
        CHECK(hc_error_offset(hc_error_last()) == 19);
        CHECK(r.n == 2 && r.ints[0] == 1 && r.ints[1] == 2);
        hc_handler_free(h);

        hc_records_options opts;
        hc_records_options_init(&opts, HC_RECORDS_OPTIONS_VERSION);
        opts.skip_bad_records = 1;
        struct records s = {0};
        h = hc_handler_json_lines_new(on_record, on_skip, &s, &opts);
        CHECK_CODE(hc_test_send(client, "GET", echo_path(body, len, chunk, "application/x-ndjson"), h, &resp), HC_OK);
        size_t count = 0, skipped = 0;
        CHECK_CODE(hc_response_records(resp, &count, &skipped), HC_OK);
        CHECK(count == 4 && skipped == 1 && s.n == 4 && s.ints[3] == 4);
        CHECK(s.skipped == 1 && s.skipped_index[0] == 2 && s.skipped_offset[0] == 19);
        hc_response_free(resp);
        hc_handler_free(h);
    }
    /* RFC 7464: "12" before an RS may have been cut short. */
    const char seq[] = "\x1e{\"i\":5}\n\x1e" "12\x1e" "7\n";
    hc_records_options opts;
    hc_records_options_init(&opts, HC_RECORDS_OPTIONS_VERSION);
    opts.framing = HC_JSON_SEQ;
    opts.skip_bad_records = 1;
    struct records s = {0};
    hc_handler *h = hc_handler_json_lines_new(on_record, on_skip, &s, &opts);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", echo_path(seq, sizeof seq - 1, 2, "application/json-seq"), h, &resp), HC_OK);
    CHECK(s.n == 2 && s.ints[0] == 5 && s.ints[1] == 7 && s.skipped == 1 && s.skipped_index[0] == 1);
    hc_response_free(resp);
    hc_handler_free(h);
    /* A type that is not JSON records. */
    struct records t = {0};
    h = hc_handler_json_lines_new(on_record, NULL, &t, NULL);
    CHECK_CODE(hc_test_send(client, "GET", echo_path("1\n", 2, 1, "text/html"), h, &resp), HC_EUNACCEPTABLE_CONTENT_TYPE);
    hc_handler_free(h);
}

/* A schema per record, and the value at a path inside each record. */
static void test_json_lines_schema_and_path(void) {
    /* Records 0..4; record 2 has a string "i", record 3 has no "i" at all. */
    const char body[] = "{\"d\":{\"i\":1}}\n{\"d\":{\"i\":2}}\n{\"d\":{\"i\":\"x\"}}\n{\"e\":0}\n{\"d\":{\"i\":5}}\n";
    size_t len = sizeof body - 1;
    const char text[] = "{\"type\": \"object\", \"required\": [\"i\"], \"properties\": {\"i\": {\"type\": \"integer\"}}}";
    hc_schema *schema = hc_schema_new_from_json((const uint8_t *)text, sizeof text - 1, NULL);
    CHECK(schema != NULL);
    for (int chunk = 1; chunk <= (int)len; chunk += 7) {
        /* The path alone: record 2's value is there (a string: -1 here), record 3 fails. */
        struct records r = {0};
        hc_handler *h = hc_handler_json_lines_new(on_record, on_skip, &r, NULL);
        CHECK_CODE(hc_handler_json_lines_set_path(h, "d", 0), HC_OK);
        hc_response *resp = NULL;
        CHECK_CODE(hc_test_send(client, "GET", echo_path(body, len, chunk, "application/x-ndjson"), h, &resp), HC_EDECODE);
        CHECK(hc_error_record_index(hc_error_last()) == 3 && hc_error_offset(hc_error_last()) == 44);
        CHECK(strstr(hc_error_message(hc_error_last()), "\"d\"") != NULL);
        CHECK(r.n == 3 && r.ints[0] == 1 && r.ints[1] == 2 && r.ints[2] == -1);
        /* With the schema: record 2 fails first, as a schema error with its index. */
        CHECK_CODE(hc_handler_json_set_schema(h, schema, 0), HC_OK);
        struct records v = {0};
        hc_handler_free(h);
        h = hc_handler_json_lines_new(on_record, on_skip, &v, NULL);
        CHECK_CODE(hc_handler_json_lines_set_path(h, "d", 0), HC_OK);
        CHECK_CODE(hc_handler_json_set_schema(h, schema, 0), HC_OK);
        CHECK_CODE(hc_test_send(client, "GET", echo_path(body, len, chunk, "application/x-ndjson"), h, &resp), HC_EDECODE);
        CHECK(hc_error_record_index(hc_error_last()) == 2 && hc_error_offset(hc_error_last()) == 28);
        CHECK(strcmp(hc_error_sub_kind(hc_error_last()), "schema") == 0 && hc_error_schema_count(hc_error_last()) == 1);
        CHECK(v.n == 2);
        /* Skipped and reported: records 2 and 3 go to the skip callback, the others through. */
        CHECK_CODE(hc_handler_json_set_schema(h, schema, HC_SCHEMA_SKIP_INVALID), HC_OK);
        struct records k = {0};
        hc_handler_free(h);
        h = hc_handler_json_lines_new(on_record, on_skip, &k, NULL);
        CHECK_CODE(hc_handler_json_lines_set_path(h, "d", 0), HC_OK);
        CHECK_CODE(hc_handler_json_set_schema(h, schema, HC_SCHEMA_SKIP_INVALID), HC_OK);
        CHECK_CODE(hc_test_send(client, "GET", echo_path(body, len, chunk, "application/x-ndjson"), h, &resp), HC_OK);
        size_t count = 0, skipped = 0;
        CHECK_CODE(hc_response_records(resp, &count, &skipped), HC_OK);
        CHECK(count == 3 && skipped == 2 && k.n == 3 && k.ints[2] == 5);
        CHECK(k.skipped == 2 && k.skipped_index[0] == 2 && k.skipped_index[1] == 3);
        CHECK(k.skipped_offset[0] == 28 && k.skipped_offset[1] == 44);
        hc_response_free(resp);
        /* NULL path: whole records again (the schema then fails record 0, which has no "i"). */
        CHECK_CODE(hc_handler_json_lines_set_path(h, NULL, 0), HC_OK);
        CHECK_CODE(hc_handler_json_set_schema(h, schema, 0), HC_OK);
        CHECK_CODE(hc_test_send(client, "GET", echo_path(body, len, chunk, "application/x-ndjson"), h, &resp), HC_EDECODE);
        CHECK(hc_error_record_index(hc_error_last()) == 0);
        /* The path alone, skipping: only record 3 (no "d") goes to the skip callback. */
        CHECK_CODE(hc_handler_json_set_schema(h, NULL, 0), HC_OK);
        hc_handler_free(h);
        struct records p = {0};
        h = hc_handler_json_lines_new(on_record, on_skip, &p, NULL);
        CHECK_CODE(hc_handler_json_lines_set_path(h, "d.i", 1), HC_OK);
        CHECK_CODE(hc_test_send(client, "GET", echo_path(body, len, chunk, "application/x-ndjson"), h, &resp), HC_OK);
        hc_response_free(resp);
        CHECK(p.n == 4 && p.ints[0] == 1 && p.ints[1] == 2 && p.ints[3] == 5 && p.skipped == 1 && p.skipped_index[0] == 3);
        hc_handler_free(h);
    }
    /* Only JSON lines handlers take a path. */
    hc_handler *lines = hc_handler_lines_new(on_line, NULL, NULL);
    CHECK_CODE(hc_handler_json_lines_set_path(lines, "a", 0), HC_EINVALID_ARG);
    CHECK_CODE(hc_handler_json_lines_set_path(NULL, "a", 0), HC_EINVALID_ARG);
    hc_handler_free(lines);
    hc_schema_free(schema);
}

/* -- Server-Sent Events */

struct events { int n; char ids[16][8]; char data[16][32]; int64_t retry[16]; int comments; };

static int on_event(void *userdata, const char *event, size_t event_len, const char *data, size_t data_len,
                    const char *id, size_t id_len, int64_t retry) {
    struct events *e = userdata;
    CHECK(event != NULL && strlen(event) == event_len && data != NULL && id != NULL);
    if (e->n < 16 && id_len < 8 && data_len < 32) {
        memcpy(e->ids[e->n], id, id_len + 1);
        memcpy(e->data[e->n], data, data_len + 1);
        e->retry[e->n] = retry;
    }
    e->n++;
    return 0;
}

static int on_comment(void *userdata, const char *text, size_t len) {
    (void)text; (void)len;
    ((struct events *)userdata)->comments++;
    return 0;
}

static void test_sse_handler(void) {
    const char body[] = "\xef\xbb\xbf: ping\r\nretry: 50\r\ndata: a\r\ndata: b\r\n\r\nid: 9\ndata\n\ndata: unfinished\n";
    for (int chunk = 1; chunk <= 7; chunk++) {
        struct events e = {0};
        hc_handler *h = hc_handler_sse_new(on_event, on_comment, &e, NULL);
        hc_response *resp = NULL;
        CHECK_CODE(hc_test_send(client, "GET", echo_path(body, sizeof body - 1, chunk, "text/event-stream"), h, &resp), HC_OK);
        CHECK(e.n == 2 && e.comments == 1);
        CHECK(strcmp(e.data[0], "a\nb") == 0 && e.retry[0] == 50 && strcmp(e.ids[0], "") == 0);
        CHECK(strcmp(e.data[1], "") == 0 && e.retry[1] == -1 && strcmp(e.ids[1], "9") == 0);
        size_t count = 0;
        CHECK_CODE(hc_response_records(resp, &count, NULL), HC_OK);
        CHECK(count == 2);
        hc_response_free(resp);
        hc_handler_free(h);
    }
    struct events e = {0};
    hc_handler *h = hc_handler_sse_new(on_event, NULL, &e, NULL);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/records/sse-status?status=500&ctype=text/event-stream", h, &resp),
               HC_EUNACCEPTABLE_STATUS);
    hc_handler_free(h);
}

static void test_client_events_reconnects(void) {
    hc_records_options opts;
    CHECK_CODE(hc_records_options_init(&opts, HC_RECORDS_OPTIONS_VERSION), HC_OK);
    opts.reconnect = 1;
    struct events e = {0};
    hc_request *req = hc_request_new("GET", hc_url("/records/sse-resume?total=8&per=3&retry=10&mode=break"));
    size_t count = 0;
    CHECK_CODE(hc_client_events(client, req, on_event, on_comment, &e, &opts, &count), HC_OK);
    CHECK(count == 8 && e.n == 8 && e.comments == 3);
    for (int i = 0; i < 8 && i < e.n; i++) {
        char want[8];
        snprintf(want, sizeof want, "%d", i + 1);
        CHECK(strcmp(e.ids[i], want) == 0);
    }
    /* Without reconnection the break is a transport error after three events. */
    struct events once = {0};
    CHECK_CODE(hc_client_events(client, req, on_event, NULL, &once, NULL, &count), HC_ETRANSPORT);
    CHECK(once.n == 3 && count == 3);
    /* A bounded number of reconnections. */
    hc_request *many = hc_request_new("GET", hc_url("/records/sse-resume?total=100&per=1&retry=1&mode=close"));
    opts.max_reconnects = 2;
    struct events few = {0};
    CHECK_CODE(hc_client_events(client, many, on_event, NULL, &few, &opts, &count), HC_OK);
    CHECK(few.n == 3);
    hc_request_free(many);
    hc_request_free(req);
}

static void test_options_and_null_safety(void) {
    hc_records_options opts;
    CHECK_CODE(hc_records_options_init(&opts, HC_RECORDS_OPTIONS_VERSION), HC_OK);
    CHECK(opts.version == HC_RECORDS_OPTIONS_VERSION);
    CHECK(opts.max_line_size == 1048576 && opts.max_record_size == 16777216);
    CHECK(opts.framing == HC_JSON_AUTO && opts.skip_bad_records == 0 && opts.strict == 1);
    CHECK(opts.reconnect == 0 && opts.max_reconnects == 10 && opts.retry_ms == 3000 && opts.max_retry_ms == 30000);
    CHECK(opts.batch_bytes == 65536);
    CHECK_CODE(hc_records_options_init(&opts, 99), HC_EINVALID_ARG);
    CHECK_CODE(hc_records_options_init(NULL, HC_RECORDS_OPTIONS_VERSION), HC_EINVALID_ARG);
    hc_records_options_init(&opts, HC_RECORDS_OPTIONS_VERSION);
    opts.framing = 7;
    CHECK(hc_handler_json_lines_new(on_record, NULL, NULL, &opts) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    opts.version = 0;
    CHECK(hc_handler_lines_new(on_line, NULL, &opts) == NULL);
    CHECK(hc_handler_lines_new(NULL, NULL, NULL) == NULL);
    CHECK(hc_handler_sse_new(NULL, NULL, NULL, NULL) == NULL);
    CHECK(hc_handler_json_lines_new(NULL, NULL, NULL, NULL) == NULL);
    CHECK(hc_handler_json_lines_pymarshal_new(NULL, NULL, NULL, NULL) == NULL);
    CHECK(hc_handler_lines_batches_new(NULL, NULL, NULL) == NULL);
    CHECK(hc_handler_lines_pymarshal_new(NULL, NULL, NULL) == NULL);
    CHECK_CODE(hc_client_events(NULL, NULL, on_event, NULL, NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK(hc_event_source_new(NULL, NULL, NULL, NULL) == NULL);
    CHECK(hc_event_source_handler(NULL) == NULL);
    int64_t delay = 0;
    CHECK_CODE(hc_event_source_next(NULL, HC_OK, &delay), HC_EINVALID_ARG);
    CHECK(delay == -1);
    hc_event_source_free(NULL);
    CHECK_CODE(hc_response_records(NULL, NULL, NULL), HC_EINVALID_ARG);
    CHECK(hc_error_record_index(NULL) == -1);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/3", NULL, &resp), HC_OK);
    CHECK_CODE(hc_response_records(resp, NULL, NULL), HC_EINVALID_ARG);
    hc_response_free(resp);
}

/* An event source driven by the caller: each connection sent with its handler, then
 * hc_event_source_next says when to reconnect (as hc_client_events decides on its own). */
static void test_event_source_driven_by_the_caller(void) {
    hc_records_options opts;
    CHECK_CODE(hc_records_options_init(&opts, HC_RECORDS_OPTIONS_VERSION), HC_OK);
    opts.reconnect = 1;
    struct events e = {0};
    hc_event_source *source = hc_event_source_new(on_event, on_comment, &e, &opts);
    CHECK(source != NULL);
    hc_handler *h = hc_event_source_handler(source);
    CHECK(h != NULL);
    hc_event_source_free(source);   /* the handler keeps what it needs */
    hc_response *first = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/records/sse-resume?total=8&per=3&retry=10&mode=close", h, &first), HC_OK);
    hc_response_free(first);
    hc_handler_free(h);
    CHECK(e.n == 3 && e.comments == 1);

    /* The whole loop, with the source kept. */
    struct events all = {0};
    int connections;
    int64_t delay = 0;
    source = hc_event_source_new(on_event, on_comment, &all, &opts);
    h = hc_event_source_handler(source);
    for (connections = 0; connections < 10; ) {
        hc_response *resp = NULL;
        hc_code rc = hc_test_send(client, "GET", "/records/sse-resume?total=8&per=3&retry=10&mode=break", h, &resp);
        hc_response_free(resp);
        connections++;
        CHECK_CODE(hc_event_source_next(source, rc, &delay), HC_OK);
        if (delay < 0) break;
        CHECK(delay >= 10 && delay <= 11);   /* the server's retry: 10 ms, plus up to 10% */
    }
    CHECK(connections == 4 && all.n == 8 && all.comments == 3);   /* 3 + 3 + 2 events, then a 204 */
    for (int i = 0; i < 8 && i < all.n; i++) {
        char want[8];
        snprintf(want, sizeof want, "%d", i + 1);
        CHECK(strcmp(all.ids[i], want) == 0);
    }
    /* Not a transport error: the connection's own code comes back, and the stream is over. */
    CHECK_CODE(hc_event_source_next(source, HC_EUNACCEPTABLE_STATUS, &delay), HC_EUNACCEPTABLE_STATUS);
    CHECK(delay == -1);
    CHECK_CODE(hc_event_source_next(source, 4242, &delay), HC_EINVALID_ARG);
    hc_handler_free(h);
    hc_event_source_free(source);

    /* Without reconnection a break is the outcome. */
    struct events once = {0};
    source = hc_event_source_new(on_event, NULL, &once, NULL);
    CHECK_CODE(hc_event_source_next(source, HC_ETRANSPORT, &delay), HC_ETRANSPORT);
    CHECK_CODE(hc_event_source_next(source, HC_OK, &delay), HC_OK);
    CHECK(delay == -1);
    hc_event_source_free(source);
    opts.version = 0;
    CHECK(hc_event_source_new(on_event, NULL, NULL, &opts) == NULL);
    CHECK(hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
}

int main(void) {
    hc_test_server_start();
    client = hc_client_new();
    CHECK(client != NULL);
    test_lines();
    test_json_lines();
    test_json_lines_schema_and_path();
    test_sse_handler();
    test_client_events_reconnects();
    test_event_source_driven_by_the_caller();
    test_options_and_null_safety();
    hc_client_free(client);
    return hc_test_finish();
}
