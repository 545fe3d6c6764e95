/* Record streams: NULL rows of the section and its documented codes.
 * (The audit of the headers' promises, issue 14: see promises.h.) */
#include "promises.h"
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------------------------ */
/* Record streams (audited after the section landed)                                           */
/* ------------------------------------------------------------------------------------------ */

struct record_log { int lines, events; };
static int rec_line(void *u, const char *line, size_t len) { (void)line; (void)len; ((struct record_log *)u)->lines++; return 0; }
static int rec_batch(void *u, const uint8_t *d, size_t len, size_t count) { (void)u; (void)d; (void)len; (void)count; return 0; }
static int rec_json(void *u, size_t i, const hc_json *v) { (void)u; (void)i; (void)v; return 0; }
static int rec_event(void *u, const char *e, size_t el, const char *d, size_t dl, const char *id, size_t il, int64_t r) {
    (void)e; (void)el; (void)d; (void)dl; (void)id; (void)il; (void)r;
    ((struct record_log *)u)->events++;
    return 0;
}

static void test_record_streams_keep_their_promises(void) {
    hc_records_options opts;
    CHECK_CODE(hc_records_options_init(&opts, HC_RECORDS_OPTIONS_VERSION), HC_OK);
    struct record_log log = {0, 0};
    int64_t delay = 0;
    size_t count = 0, skipped = 0;
    /* NULL handles and required pointers. */
    NULL_CODE(hc_records_options_init(NULL, HC_RECORDS_OPTIONS_VERSION));
    NULL_PTR(hc_handler_lines_new(NULL, NULL, &opts));
    NULL_PTR(hc_handler_lines_batches_new(NULL, NULL, &opts));
    NULL_PTR(hc_handler_json_lines_new(NULL, NULL, NULL, &opts));
    NULL_CODE(hc_handler_json_lines_set_path(NULL, "a", 0));
    NULL_PTR(hc_handler_sse_new(NULL, NULL, NULL, &opts));
    hc_request *req = hc_request_new("GET", hc_url("/records/sse-resume?total=2&per=2&mode=close"));
    NULL_CODE(hc_client_events(NULL, req, rec_event, NULL, &log, NULL, &count));
    NULL_CODE(hc_client_events(client, NULL, rec_event, NULL, &log, NULL, &count));
    NULL_CODE(hc_client_events(client, req, NULL, NULL, &log, NULL, &count));
    NULL_PTR(hc_event_source_new(NULL, NULL, NULL, &opts));
    FREE_NULL(hc_event_source_free(NULL));
    NULL_PTR(hc_event_source_handler(NULL));
    NULL_CODE(hc_event_source_next(NULL, HC_OK, &delay));
    hc_event_source *source = hc_event_source_new(rec_event, NULL, &log, NULL);   /* NULL opts: defaults */
    CHECK(source != NULL);
    NULL_CODE(hc_event_source_next(source, HC_OK, NULL));
    NULL_CODE(hc_response_records(NULL, &count, &skipped));
    NULL_VALUE(hc_error_record_index(NULL), -1);

    /* Optional pointers: NULL options are the defaults, a NULL comment or skip callback and a
     * NULL *events are allowed. */
    OPTIONAL_OK(hc_client_events(client, req, rec_event, NULL, &log, NULL, NULL));
    CHECK(log.events == 2);
    hc_handler *handlers[4] = {
        hc_handler_lines_new(rec_line, &log, NULL), hc_handler_lines_batches_new(rec_batch, NULL, NULL),
        hc_handler_json_lines_new(rec_json, NULL, NULL, NULL), hc_handler_sse_new(rec_event, NULL, &log, NULL),
    };
    OPTIONAL_OK(hc_handler_json_lines_set_path(handlers[2], NULL, 0));      /* NULL: whole records */
    for (int i = 0; i < 4; i++) {
        CHECK(handlers[i] != NULL);
        hc_handler_free(handlers[i]);
    }
    hc_event_source_free(source);

    /* "Copied by the function it is given to": the options changed after the call do not reach
     * the handler. A 4-byte line limit, then none: a 10-byte line is still too large. */
    opts.max_line_size = 4;
    hc_handler *lines = hc_handler_lines_new(rec_line, &log, &opts);
    opts.max_line_size = 0;
    opts.version = 0;   /* not even a valid struct any more */
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/records/echo?chunk=3&ctype=text/plain&b64=MDEyMzQ1Njc4OQo=", lines, &resp),
               HC_ETOO_LARGE);
    hc_handler_free(lines);
    /* hc_response_records: either pointer may be NULL; another handler's response is refused. */
    hc_handler *sse = hc_handler_sse_new(rec_event, NULL, &log, NULL);
    CHECK_CODE(hc_test_send(client, "GET", "/records/sse-resume?total=2&per=2&mode=close", sse, &resp), HC_OK);
    OPTIONAL_OK(hc_response_records(resp, NULL, NULL));
    CHECK_CODE(hc_response_records(resp, &count, &skipped), HC_OK);
    CHECK(count == 2 && skipped == 0);
    hc_response_free(resp);
    hc_handler_free(sse);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/3", NULL, &resp), HC_OK);
    CHECK_CODE(hc_response_records(resp, &count, NULL), HC_EINVALID_ARG);
    hc_response_free(resp);
    hc_request_free(req);
}

PROMISES_MAIN(test_record_streams_keep_their_promises)
