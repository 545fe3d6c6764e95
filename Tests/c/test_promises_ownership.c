/* Strings passed in are copied, and handles given to another handle are kept by the
 * receiver ("takes its own reference", "keeps its own references").
 * (The audit of the headers' promises, issue 14: see promises.h.) */
#include "promises.h"
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------------------------------ */
/* "Strings passed in are copied"; handles the library keeps its own reference to              */
/* ------------------------------------------------------------------------------------------ */

/* The /echo document of the test server, sent through `req` (which the caller still owns). */
static char *echo(hc_client *c, hc_request *req) {
    hc_response *resp = NULL;
    char *out = NULL;
    if (hc_client_send(c, req, &resp) == HC_OK) {
        const uint8_t *d; size_t n;
        if (hc_response_bytes(resp, &d, &n) == HC_OK && (out = malloc(n + 1))) { memcpy(out, d, n); out[n] = 0; }
        hc_response_free(resp);
    }
    return out ? out : strdup("");
}

static int count_items(void *userdata, size_t prefix_index, const hc_json *value) {
    (void)prefix_index; (void)value;
    (*(int *)userdata)++;
    return 0;
}

static void scribble(char *s) { memset(s, 'Z', strlen(s)); }

static void test_strings_passed_in_are_copied(void) {
    char method[] = "PATCH", url[1024], name[] = "X-Copied", value[] = "yes indeed", body[] = "the body";
    char ctype[] = "text/x-copied", agent[] = "agent/1.0", cname[] = "X-Client", cvalue[] = "from client";
    char proxy[] = "";
    snprintf(url, sizeof url, "%s", hc_url("/echo?q=1"));
    hc_client *c = hc_client_new();
    CHECK_CODE(hc_client_set_user_agent(c, agent), HC_OK);
    CHECK_CODE(hc_client_add_header(c, cname, cvalue), HC_OK);
    CHECK_CODE(hc_client_set_proxy(c, proxy), HC_OK);
    hc_request *req = hc_request_new(method, url);
    CHECK_CODE(hc_request_add_header(req, name, value), HC_OK);
    CHECK_CODE(hc_request_set_body(req, (const uint8_t *)body, strlen(body), ctype), HC_OK);
    scribble(method); scribble(url); scribble(name); scribble(value); scribble(body); scribble(ctype);
    scribble(agent); scribble(cname); scribble(cvalue);
    char *e = echo(c, req);
    CHECK(strstr(e, "\"method\": \"PATCH\"") && strstr(e, "\"path\": \"/echo\""));
    CHECK(strstr(e, "X-Copied") && strstr(e, "yes indeed") && strstr(e, "text/x-copied"));
    CHECK(strstr(e, "agent/1.0") && strstr(e, "from client"));
    CHECK(strstr(e, "74686520626f6479") != NULL);          /* "the body", in the echo's hex */
    free(e);
    hc_request_free(req);

    /* Text, JSON, form, query and multipart bodies: the sources are changed or freed before sending. */
    char text[] = "caf\xc3\xa9", charset[] = "iso-8859-1";
    req = hc_request_new("POST", hc_url("/echo"));
    CHECK_CODE(hc_request_set_text_body(req, text, charset), HC_OK);
    scribble(text); scribble(charset);
    e = echo(c, req);
    CHECK(strstr(e, "636166e9") != NULL && strstr(e, "charset=iso-8859-1") != NULL);
    free(e);
    hc_form *form = hc_form_new();
    char key[] = "key", val[] = "val";
    hc_form_add(form, key, val);
    CHECK_CODE(hc_request_add_query(req, form), HC_OK);
    CHECK_CODE(hc_request_set_form_body(req, form), HC_OK);
    scribble(key); scribble(val);
    hc_form_add(form, "later", "1");                        /* changed after: not sent */
    hc_form_free(form);
    e = echo(c, req);
    CHECK(strstr(e, "key=val") != NULL && strstr(e, "later") == NULL);
    CHECK(strstr(e, "6b65793d76616c") != NULL);             /* body "key=val" in hex */
    free(e);
    hc_multipart *mp = hc_multipart_new();
    char field[] = "field", fvalue[] = "fvalue";
    CHECK_CODE(hc_multipart_add_field(mp, field, fvalue), HC_OK);
    CHECK_CODE(hc_request_set_multipart(req, mp), HC_OK);
    scribble(field); scribble(fvalue);
    hc_multipart_free(mp);
    e = echo(c, req);
    CHECK(strstr(e, "multipart/form-data") != NULL && strstr(e, "666f726d2d646174613b206e616d653d226669656c6422") != NULL);
    free(e);
    hc_request_free(req);

    /* A file handler's path, an accepted media range, empty methods, JSON prefixes. */
    char dir[] = "/tmp/hc-promises-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], original[256];
    snprintf(path, sizeof path, "%s/copied.bin", dir);
    snprintf(original, sizeof original, "%s", path);
    hc_handler *file = hc_handler_file_new(path, 0);
    scribble(path + strlen(dir) + 1);
    char range[] = "application/octet-stream";
    CHECK_CODE(hc_handler_accept_type(file, range), HC_OK);
    scribble(range);
    hc_response *resp = NULL;
    CHECK_CODE(hc_test_send(c, "GET", "/bytes/64", file, &resp), HC_OK);
    const char *written = NULL;
    CHECK_CODE(hc_response_file(resp, &written, NULL, NULL, NULL), HC_OK);
    CHECK(same_text(written, original));
    hc_response_free(resp);
    struct stat st;
    CHECK(stat(original, &st) == 0 && st.st_size == 64);
    unlink(original);
    rmdir(dir);
    hc_handler_free(file);

    hc_handler *bytes = hc_handler_bytes_new(0);
    char m[] = "POST";
    char *methods[] = {m};
    int statuses[] = {299};
    CHECK_CODE(hc_handler_empty_methods(bytes, (const char *const *)methods, 1), HC_OK);
    CHECK_CODE(hc_handler_empty_statuses(bytes, statuses, 1), HC_OK);
    scribble(m); methods[0] = NULL; statuses[0] = 200;
    hc_handler_free(bytes);   /* nothing left to check but valgrind: the copies are the handler's */

    char prefix[] = "items.item";
    const char *prefixes[] = {prefix};
    int seen = 0;
    hc_json_options *opts = hc_json_options_new();
    hc_json_options_set(opts, HC_JSON_MAX_DEPTH, 2);
    hc_handler *items = hc_handler_json_items_new(prefixes, 1, opts, count_items, &seen);
    hc_json_options_free(opts);                             /* "handlers made from them keep their own copy" */
    scribble(prefix);
    prefixes[0] = "nothing";
    CHECK_CODE(hc_test_send(c, "GET", "/json?doc=%7B%22items%22%3A%5B1%2C2%2C3%5D%7D", items, &resp), HC_OK);
    CHECK(seen == 3);
    hc_response_free(resp);
    /* The options were copied with their depth limit of 2: a depth of 3 is refused. */
    CHECK_CODE(hc_test_send(c, "GET", "/json?doc=%7B%22items%22%3A%5B%5B1%5D%5D%7D", items, &resp), HC_EDECODE);
    hc_handler_free(items);

    char fetch_method[] = "GET", fetch_url[1024];
    snprintf(fetch_url, sizeof fetch_url, "%s", hc_url("/bytes/7"));
    hc_fetch_result r;
    /* copied: scribbling happens after the call, so only valgrind and the result can tell */
    CHECK_CODE(hc_client_fetch(c, fetch_method, fetch_url, NULL, 0, -1, &r), HC_OK);
    scribble(fetch_method); scribble(fetch_url);
    CHECK(r.bytes_len == 7 && same_text(hc_response_url(r.response), hc_url("/bytes/7")));
    hc_response_free(r.response);
    hc_client_free(c);
}

/* Handles given to another handle: "takes its own reference", "keeps its own references",
 * "borrowed: its settings are taken during the call", "copied" (a vtable). */
struct custom_log { int accepts, chunks, finishes, cleanups; size_t bytes; };
static int c_accept(void *u, const hc_response *head) { ((struct custom_log *)u)->accepts++; return hc_response_status(head) == 200 ? 0 : HC_EUNACCEPTABLE_STATUS; }
static int c_consume(void *u, const uint8_t *b, size_t n) { (void)b; ((struct custom_log *)u)->chunks++; ((struct custom_log *)u)->bytes += n; return 0; }
static int c_finish(void *u) { ((struct custom_log *)u)->finishes++; return 0; }
static void c_cleanup(void *u, int failed) { (void)failed; ((struct custom_log *)u)->cleanups++; }


static void test_handles_given_away_are_kept_by_the_receiver(void) {
    int64_t live = hc_live_handles();
    /* hc_request_set_handler: freed right after, still used by every send of the request. */
    hc_request *req = hc_request_new("GET", hc_url("/bytes/300"));
    hc_handler *limited = hc_handler_bytes_new(200);
    CHECK_CODE(hc_request_set_handler(req, limited), HC_OK);
    hc_handler_free(limited);
    hc_response *resp = NULL;
    CHECK_CODE(hc_client_send(client, req, &resp), HC_ETOO_LARGE);   /* the freed handler's limit */
    CHECK(resp == NULL);
    /* "The request is only borrowed and may be sent again." */
    CHECK_CODE(hc_client_send(client, req, &resp), HC_ETOO_LARGE);

    /* hc_handler_compound_new: its handlers freed right after. */
    hc_handler *json = hc_handler_json_new(NULL);
    hc_handler *any = hc_handler_bytes_new(0);
    hc_handler *parts[] = {json, any};
    hc_handler *compound = hc_handler_compound_new(parts, 2);
    hc_handler_free(json);
    hc_handler_free(any);
    parts[0] = parts[1] = NULL;
    CHECK_CODE(hc_request_set_handler(req, compound), HC_OK);
    hc_handler_free(compound);
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    CHECK(hc_response_handler_index(resp) == 1);
    const uint8_t *d; size_t n;
    CHECK_CODE(hc_response_bytes(resp, &d, &n), HC_OK);
    CHECK(n == 300);
    hc_response_free(resp);

    /* hc_cancel_free: "Requests holding the token keep it alive until freed". */
    hc_cancel *token = hc_cancel_new();
    CHECK_CODE(hc_request_set_cancel(req, token), HC_OK);
    CHECK_CODE(hc_cancel_cancel(token), HC_OK);
    CHECK(hc_cancel_is_cancelled(token) == 1);
    hc_cancel_free(token);
    CHECK_CODE(hc_client_send(client, req, &resp), HC_ECANCELLED);   /* the token lives on in the request */
    CHECK_CODE(hc_request_set_cancel(req, NULL), HC_OK);             /* detached */
    CHECK_CODE(hc_client_send(client, req, &resp), HC_OK);
    hc_response_free(resp);
    hc_request_free(req);

    /* hc_handler_custom_new: the vtable is copied (the caller's is wiped after). */
    struct custom_log log = {0};
    hc_handler_vtable vt = {HC_HANDLER_VTABLE_VERSION, c_accept, c_consume, c_finish, c_cleanup};
    hc_handler *custom = hc_handler_custom_new(&vt, &log);
    memset(&vt, 0, sizeof vt);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/5000", custom, &resp), HC_OK);
    CHECK(log.accepts == 1 && log.chunks >= 1 && log.bytes == 5000 && log.finishes == 1 && log.cleanups == 1);
    hc_response_free(resp);
    hc_handler_free(custom);
    /* "Every pointer may be NULL": a vtable of no callbacks takes the body and succeeds; a
     * vtable of another version is refused. */
    hc_handler_vtable empty = {HC_HANDLER_VTABLE_VERSION, NULL, NULL, NULL, NULL};
    hc_handler *nothing = hc_handler_custom_new(&empty, NULL);
    CHECK(nothing != NULL);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/100", nothing, &resp), HC_OK);
    CHECK(hc_response_status(resp) == 200);
    hc_response_free(resp);
    CHECK_CODE(hc_test_send(client, "GET", "/status/404", nothing, &resp), HC_EUNACCEPTABLE_STATUS);   /* acceptance first */
    hc_handler_free(nothing);
    hc_handler_vtable future = {HC_HANDLER_VTABLE_VERSION + 1, c_accept, c_consume, c_finish, c_cleanup};
    CHECK(hc_handler_custom_new(&future, &log) == NULL);
    CHECK_CODE(hc_error_code(hc_error_last()), HC_EINVALID_ARG);

    /* hc_batch_add: the request is freed right after the call, then the batch runs it. */
    hc_batch *batch = hc_batch_new(client);
    struct done_count done = {0, HC_ELOCAL_IO, 0};
    req = hc_request_new("GET", hc_url("/bytes/123"));
    CHECK_CODE(hc_batch_add(batch, req, count_done, &done), HC_OK);
    hc_request_free(req);
    CHECK(hc_batch_pending(batch) == 1);
    CHECK_CODE(hc_batch_run(batch), HC_OK);
    CHECK(done.calls == 1 && done.code == HC_OK && done.len == 123);
    /* hc_batch_new: "keeps its own reference to the client's settings". */
    hc_client *own = hc_client_new();
    hc_client_set_user_agent(own, "batch-agent/2");
    hc_batch *b2 = hc_batch_new(own);
    hc_client_free(own);
    req = hc_request_new("GET", hc_url("/user-agent"));
    struct done_count ua = {0, HC_ELOCAL_IO, 0};
    CHECK_CODE(hc_batch_add(b2, req, count_done, &ua), HC_OK);
    hc_request_free(req);
    CHECK_CODE(hc_batch_run(b2), HC_OK);
    CHECK(ua.calls == 1 && ua.code == HC_OK && ua.len == strlen("batch-agent/2"));
    hc_batch_free(b2);
    /* hc_batch_free: "requests still pending complete with HC_ECANCELLED first". */
    struct done_count pending = {0, HC_OK, 0};
    req = hc_request_new("GET", hc_url("/slow?bytes=10&delay=5"));
    CHECK_CODE(hc_batch_add(batch, req, count_done, &pending), HC_OK);
    hc_request_free(req);
    hc_batch_free(batch);
    CHECK(pending.calls == 1 && pending.code == HC_ECANCELLED);
    CHECK(hc_live_handles() == live);
}

PROMISES_MAIN(test_strings_passed_in_are_copied,
              test_handles_given_away_are_kept_by_the_receiver)
