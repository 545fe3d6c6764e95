/* Shared by the test_promises_*.c files, the header-vs-code audit of include/httpcontent.h and
 * its family headers (issue 14): the checks of the NULL table (NULL_CODE, NULL_PTR, NULL_VALUE,
 * FREE_NULL, OPTIONAL_OK) and the run loop every file's main uses. docs/c-abi-contract.md maps
 * every promise of the headers to the test that pins it.
 *
 * Each file holds one concern: test_promises_null.c the conventions block function by function
 * (and the check that every row names a declared function and that the audited sections have a
 * row per function, read from every test_promises_*.c); _lifetimes.c borrowed lifetimes;
 * _ownership.c copies and handles given away; _codes.c codes and settings; _threads.c threads,
 * callbacks and lent memory; _images.c, _xml.c, _plist.c, _records.c and _schemas.c the promises
 * of those sections. */
#ifndef HC_PROMISES_H
#define HC_PROMISES_H

#include "testutil.h"

static hc_client *client;
static const char *promises_file;  /* the file running, for the messages */

/* ------------------------------------------------------------------------------------------ */
/* The NULL table's checks                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* A row for a function no NULL check fits (no pointer argument, or checked by hand): the scan
 * of test_promises_null.c reads the name, as it reads the NULL_* rows. */
static inline void cover(const char *name) { (void)name; }

static inline void report(int ok, const char *expr, int line, const char *why) {
    if (ok) { hc_checks_passed++; return; }
    hc_checks_failed++;
    fprintf(stderr, "%s:%d: %s: %s (last error: %s \"%s\")\n", promises_file, line, expr, why,
            hc_code_name(hc_error_code(hc_error_last())), hc_error_message(hc_error_last()));
}

/* The last error says HC_EINVALID_ARG with a message that is not empty. */
static inline int last_is_einval(void) {
    const hc_error *e = hc_error_last();
    return hc_error_code(e) == HC_EINVALID_ARG && hc_error_message(e)[0] != 0;
}

/* A code-returning call: HC_EINVALID_ARG, and hc_error_last() explains it. */
static inline void null_code(const char *expr, int line, hc_code got) {
    report(got == HC_EINVALID_ARG, expr, line, "did not return HC_EINVALID_ARG");
    report(last_is_einval(), expr, line, "hc_error_last() is not HC_EINVALID_ARG with a message");
}
#define NULL_CODE(call) null_code(#call, __LINE__, (hc_error_clear(), (call)))

/* A pointer-returning call: NULL, and hc_error_last() is HC_EINVALID_ARG. */
static inline void null_ptr(const char *expr, int line, const void *got) {
    report(got == NULL, expr, line, "did not return NULL");
    report(last_is_einval(), expr, line, "returned NULL without setting hc_error_last() to HC_EINVALID_ARG");
}
#define NULL_PTR(call) null_ptr(#call, __LINE__, (hc_error_clear(), (const void *)(call)))

/* A getter returning a value (a status, a count, a kind, a flag), not a code or a pointer: the
 * value its comment documents for NULL, and the thread's last error left as it was. */
static inline const hc_error *known_error(void);
static inline void null_value(const char *expr, int line, long long got, long long want, const hc_error *before) {
    char why[96];
    snprintf(why, sizeof why, "gave %lld, the header documents %lld", got, want);
    report(got == want, expr, line, why);
    report(hc_error_last() == before && hc_error_code(before) == HC_EINVALID_ARG
           && strstr(hc_error_message(before), "not a url") != NULL, expr, line, "changed the thread's last error");
}
#define NULL_VALUE(call, want) do { const hc_error *before_ = known_error(); \
    null_value(#call, __LINE__, (long long)(call), (long long)(want), before_); } while (0)

/* A call that must succeed with an optional pointer left NULL ("may be NULL"). */
static inline void ok_code(const char *expr, int line, hc_code got) {
    report(got == HC_OK, expr, line, "refused an argument the header says may be NULL");
}
#define OPTIONAL_OK(call) ok_code(#call, __LINE__, (call))

/* `*_free(NULL)` does nothing: no crash, and the thread's last error is the same, unchanged. */
static inline const hc_error *known_error(void) {
    CHECK(hc_request_new("GET", "not a url") == NULL);
    return hc_error_last();
}
static inline void free_noop(const char *expr, int line, const hc_error *before) {
    report(hc_error_last() == before && hc_error_code(before) == HC_EINVALID_ARG
           && strstr(hc_error_message(before), "not a url") != NULL,
           expr, line, "changed the thread's last error");
}
#define FREE_NULL(call) do { const hc_error *before_ = known_error(); call; free_noop(#call, __LINE__, before_); } while (0)

/* ------------------------------------------------------------------------------------------ */
/* Shared by the files                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* Work that must not disturb anything borrowed from an earlier response: sends that succeed and
 * fail on the same client, new errors, a cleared error. */
static inline void churn(void) {
    hc_response *r = NULL;
    CHECK_CODE(hc_test_send(client, "GET", "/status/500", NULL, &r), HC_EUNACCEPTABLE_STATUS);
    CHECK_CODE(hc_test_send(client, "GET", "/bytes/3000", NULL, &r), HC_OK);
    hc_response_free(r);
    hc_handler *text = hc_handler_text_new(HC_ENCODING_AUTO, 1);
    CHECK_CODE(hc_test_send(client, "GET", "/text?charset=utf-16le&text=other", text, &r), HC_OK);
    const char *t; size_t n;
    CHECK_CODE(hc_response_text(r, &t, &n), HC_OK);
    hc_response_free(r);
    hc_handler_free(text);
    CHECK(hc_request_new("GET", "::bad::") == NULL);
    hc_error_clear();
}

static inline char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static inline int same_text(const char *a, const char *saved) {
    return a && saved && strcmp(a, saved) == 0;
}

/* A done callback that counts, keeps the code and the body length, and frees the response. */
struct done_count { int calls; hc_code code; size_t len; };
static inline void count_done(void *userdata, hc_code code, hc_response *response) {
    struct done_count *d = userdata;
    d->calls++;
    d->code = code;
    const uint8_t *data; size_t n = 0;
    if (response && hc_response_bytes(response, &data, &n) == HC_OK) d->len = n;
    hc_response_free(response);
}

/* Runs `count` tests against the test server on the shared client: each must give back every
 * handle it took. */
static inline int promises_main(const char *file, void (*const *tests)(void), size_t count) {
    promises_file = file;
    hc_test_server_start();
    client = hc_client_new();
    CHECK(client != NULL);
    for (size_t i = 0; i < count; i++) {
        int64_t before = hc_live_handles();
        tests[i]();
        if (hc_live_handles() != before)
            fprintf(stderr, "test %zu: %lld handles left\n", i, (long long)(hc_live_handles() - before));
        CHECK(hc_live_handles() == before);
    }
    hc_error_clear();
    hc_client_free(client);
    return hc_test_finish();
}
#define PROMISES_MAIN(...) int main(void) { \
    static void (*const tests_[])(void) = { __VA_ARGS__ }; \
    return promises_main(__FILE__, tests_, sizeof tests_ / sizeof *tests_); }

#endif /* HC_PROMISES_H */
