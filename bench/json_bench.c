/* json_bench.c — the C contestants of bench/json.sh (issue 4): raw yajl and libcurl + yajl as
 * baselines, and libhttpcontent's JSON handlers and in-memory parse.
 *
 *   json_bench MODE SOURCE COUNT EXPECTED_BYTES EXPECTED_ITEMS [SCHEMA_FILE]
 *
 * SOURCE is a file (in-memory modes: read once before timing) or a URL (network modes).
 * Modes:
 *   yajl-raw          yajl_parse on the bytes in memory, no-op callbacks incl. integer/double
 *                     (yajl converts every number: the "raw yajl with no-op callbacks")
 *   yajl-raw-number   same with the number callback instead (no conversion: what the library uses)
 *   hc-parse          hc_json_parse on the same bytes (the library's tree, no network)
 *   curl-yajl         libcurl over loopback, the write callback feeding yajl_parse (no-op
 *                     integer/double callbacks), one easy handle reused
 *   hc-c-tree         hc_handler_json_new: the tree while downloading, read with hc_response_json
 *   hc-c-items        hc_handler_json_items_new({"item"}): path streaming, one value per callback
 *   hc-c-batches      hc_handler_json_batches_new({"item"}): path streaming in JSON-text batches
 * With SCHEMA_FILE (bench/schema.sh, issue 18), the hc modes also validate against that JSON
 * Schema: hc-parse then hc_schema_validate_json; hc-c-tree with hc_handler_json_set_schema (the
 * whole document validated once its tree is complete); hc-c-items with each
 * item validated before its callback (SCHEMA_FILE's "items" subschema is the per-item schema).
 * Each pass is checked: EXPECTED_BYTES parsed/downloaded and EXPECTED_ITEMS top-level elements.
 * Prints one line: "MBPS <value> bytes=<total> seconds=<elapsed> cpu=<user+sys seconds>
 * rss=<peak RSS growth in bytes>" (MB = 10^6 bytes). The RSS growth is the peak resident set
 * (VmHWM, reset through /proc/self/clear_refs after setup) minus the resident set after setup.
 * Exit 1: a pass failed or gave the wrong size or count.
 */
#include <httpcontent.h>
#include <curl/curl.h>
#include <yajl/yajl_parse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "benchclock.h"

/* A field of /proc/self/status in bytes ("VmRSS:", "VmHWM:"). */
static long long status_bytes(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long long kb = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, n) == 0) { kb = atoll(line + n); break; }
    }
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* Resets the peak RSS to the current RSS; returns the current RSS. */
static long long rss_baseline(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) { fputs("5", f); fclose(f); }
    return status_bytes("VmRSS:");
}

static int hc_fail(const char *what) {
    const hc_error *e = hc_error_last();
    fprintf(stderr, "%s: %s (%s)\n", what, hc_error_message(e), hc_code_name(hc_error_code(e)));
    return 1;
}

/* --- raw yajl: no-op callbacks; start_map at depth 1 counts the items (one object per element;
 * the rich document nests more objects inside each) ------------------------------------------ */
static long long g_maps;
static int g_depth;
static int cb_null(void *c) { (void)c; return 1; }
static int cb_bool(void *c, int b) { (void)c; (void)b; return 1; }
static int cb_int(void *c, long long i) { (void)c; (void)i; return 1; }
static int cb_double(void *c, double d) { (void)c; (void)d; return 1; }
static int cb_number(void *c, const char *s, size_t n) { (void)c; (void)s; (void)n; return 1; }
static int cb_string(void *c, const unsigned char *s, size_t n) { (void)c; (void)s; (void)n; return 1; }
static int cb_start_map(void *c) { (void)c; if (g_depth++ == 1) g_maps++; return 1; }
static int cb_start_array(void *c) { (void)c; g_depth++; return 1; }
static int cb_key(void *c, const unsigned char *s, size_t n) { (void)c; (void)s; (void)n; return 1; }
static int cb_end(void *c) { (void)c; g_depth--; return 1; }

static const yajl_callbacks convert_cbs = {cb_null, cb_bool, cb_int, cb_double, NULL, cb_string,
                                           cb_start_map, cb_key, cb_end, cb_start_array, cb_end};
static const yajl_callbacks number_cbs = {cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
                                          cb_start_map, cb_key, cb_end, cb_start_array, cb_end};

/* --- curl + yajl --------------------------------------------------------------------------- */
struct curl_yajl { yajl_handle y; unsigned long long bytes; int failed; };
static size_t curl_write(char *p, size_t size, size_t n, void *ud) {
    struct curl_yajl *cy = ud;
    size_t len = size * n;
    cy->bytes += len;
    if (yajl_parse(cy->y, (const unsigned char *)p, len) != yajl_status_ok) { cy->failed = 1; return 0; }
    return len;
}

/* --- library callbacks --------------------------------------------------------------------- */
static long long g_items;
static int on_item(void *ud, size_t prefix, const hc_json *value) {
    (void)ud; (void)prefix;
    if (hc_json_type(value) != HC_JSON_OBJECT) return 1;
    g_items++;
    return 0;
}
static int on_batch(void *ud, size_t prefix, const uint8_t *json, size_t len, size_t count) {
    (void)ud; (void)prefix; (void)json; (void)len;
    g_items += (long long)count;
    return 0;
}

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return NULL; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)n + 1);
    if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) { fclose(f); free(data); return NULL; }
    fclose(f);
    *len = (size_t)n;
    return data;
}

/* The schema of SCHEMA_FILE, or (per_item) its "items" member, serialized again. */
static hc_schema *load_schema(const char *path, int per_item) {
    size_t len = 0;
    unsigned char *text = read_file(path, &len);
    if (!text) return NULL;
    hc_schema *s = NULL;
    if (!per_item) {
        s = hc_schema_new_from_json(text, len, NULL);
    } else {
        hc_json *doc = NULL;
        uint8_t *out = NULL;
        size_t out_len = 0;
        if (hc_json_parse(text, len, NULL, &doc) == HC_OK
            && hc_json_serialize(hc_json_get(doc, "items"), 0, &out, &out_len) == HC_OK)
            s = hc_schema_new_from_json(out, out_len, NULL);
        hc_buffer_free(out);
        hc_json_free(doc);
    }
    free(text);
    return s;
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: %s MODE SOURCE COUNT EXPECTED_BYTES EXPECTED_ITEMS [SCHEMA_FILE]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *source = argv[2];
    long count = atol(argv[3]);
    unsigned long long expected = strtoull(argv[4], NULL, 10);
    long long expected_items = atoll(argv[5]);
    if (count < 1) { fprintf(stderr, "COUNT must be >= 1\n"); return 2; }

    enum { RAW, RAW_NUMBER, HC_PARSE, CURL_YAJL, HC_TREE, HC_ITEMS, HC_BATCHES } m;
    if (!strcmp(mode, "yajl-raw")) m = RAW;
    else if (!strcmp(mode, "yajl-raw-number")) m = RAW_NUMBER;
    else if (!strcmp(mode, "hc-parse")) m = HC_PARSE;
    else if (!strcmp(mode, "curl-yajl")) m = CURL_YAJL;
    else if (!strcmp(mode, "hc-c-tree")) m = HC_TREE;
    else if (!strcmp(mode, "hc-c-items")) m = HC_ITEMS;
    else if (!strcmp(mode, "hc-c-batches")) m = HC_BATCHES;
    else { fprintf(stderr, "unknown mode %s\n", mode); return 2; }

    hc_schema *schema = NULL;
    if (argc == 7) {
        if (m != HC_PARSE && m != HC_TREE && m != HC_ITEMS) {
            fprintf(stderr, "a schema applies to hc-parse, hc-c-tree and hc-c-items only\n");
            return 2;
        }
        schema = load_schema(argv[6], m == HC_ITEMS);
        if (!schema) return hc_fail("schema");
    }

    unsigned char *data = NULL;
    size_t len = 0;
    CURL *curl = NULL;
    struct curl_yajl cy = {0};
    hc_client *client = NULL;
    hc_request *req = NULL;
    if (m == RAW || m == RAW_NUMBER || m == HC_PARSE) {
        data = read_file(source, &len);
        if (!data) return 1;
        if (len != expected) { fprintf(stderr, "%s: %zu bytes, expected %llu\n", source, len, expected); return 1; }
    } else if (m == CURL_YAJL) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        curl = curl_easy_init();
        curl_easy_setopt(curl, CURLOPT_URL, source);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, curl_write);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &cy);
    } else {
        client = hc_client_new();
        if (!client) return hc_fail("hc_client_new");
        req = hc_request_new("GET", source);
        if (!req) return hc_fail("hc_request_new");
        const char *prefixes[] = {"item"};
        hc_handler *h = m == HC_TREE ? hc_handler_json_new(NULL)
                      : m == HC_ITEMS ? hc_handler_json_items_new(prefixes, 1, NULL, on_item, NULL)
                      : hc_handler_json_batches_new(prefixes, 1, NULL, on_batch, NULL);
        if (!h) return hc_fail("handler");
        if (schema && hc_handler_json_set_schema(h, schema, 0) != HC_OK) return hc_fail("hc_handler_json_set_schema");
        if (hc_request_set_handler(req, h) != HC_OK) return hc_fail("hc_request_set_handler");
        hc_handler_free(h);
    }

    long long base_rss = rss_baseline();
    double cpu_start = cpu_seconds();
    double start = now();
    unsigned long long total = 0;
    for (long i = 0; i < count; i++) {
        long long items = -1;
        unsigned long long got = 0;
        if (m == RAW || m == RAW_NUMBER) {
            g_maps = 0;
            g_depth = 0;
            yajl_handle y = yajl_alloc(m == RAW ? &convert_cbs : &number_cbs, NULL, NULL);
            if (yajl_parse(y, data, len) != yajl_status_ok || yajl_complete_parse(y) != yajl_status_ok) {
                fprintf(stderr, "yajl failed\n");
                return 1;
            }
            yajl_free(y);
            items = g_maps;
            got = len;
        } else if (m == HC_PARSE) {
            hc_json *root = NULL;
            if (hc_json_parse(data, len, NULL, &root) != HC_OK) return hc_fail("hc_json_parse");
            if (schema && hc_schema_validate_json(schema, root, 0) != HC_OK) return hc_fail("hc_schema_validate_json");
            items = (long long)hc_json_array_length(root);
            hc_json_free(root);
            got = len;
        } else if (m == CURL_YAJL) {
            g_maps = 0;
            g_depth = 0;
            cy.bytes = 0;
            cy.failed = 0;
            cy.y = yajl_alloc(&convert_cbs, NULL, NULL);
            CURLcode rc = curl_easy_perform(curl);
            if (rc != CURLE_OK || cy.failed || yajl_complete_parse(cy.y) != yajl_status_ok) {
                fprintf(stderr, "curl-yajl: %s%s\n", curl_easy_strerror(rc), cy.failed ? " (yajl)" : "");
                return 1;
            }
            yajl_free(cy.y);
            items = g_maps;
            got = cy.bytes;
        } else {
            g_items = 0;
            hc_response *resp = NULL;
            if (hc_client_send(client, req, &resp) != HC_OK) return hc_fail("hc_client_send");
            if (hc_response_status(resp) != 200) { fprintf(stderr, "status %d\n", hc_response_status(resp)); return 1; }
            int64_t decoded = 0;
            if (hc_response_metrics(resp, NULL, &decoded, NULL) != HC_OK) return hc_fail("hc_response_metrics");
            got = (unsigned long long)decoded;
            if (m == HC_TREE) {
                const hc_json *root = hc_response_json(resp);
                if (!root) return hc_fail("hc_response_json");
                items = (long long)hc_json_array_length(root);
            } else {
                size_t n = 0;
                if (hc_response_json_items(resp, &n, NULL) != HC_OK) return hc_fail("hc_response_json_items");
                items = g_items;
                if ((long long)n != items) { fprintf(stderr, "summary %zu, callbacks %lld\n", n, items); return 1; }
            }
            hc_response_free(resp);
        }
        if (got != expected || items != expected_items) {
            fprintf(stderr, "pass %ld: %llu bytes (expected %llu), %lld items (expected %lld)\n", i, got,
                    expected, items, expected_items);
            return 1;
        }
        total += got;
    }
    double elapsed = now() - start;
    double cpu = cpu_seconds() - cpu_start;
    long long peak = status_bytes("VmHWM:");
    printf("MBPS %.1f bytes=%llu seconds=%.3f cpu=%.3f rss=%lld\n", (double)total / elapsed / 1e6, total,
           elapsed, cpu, peak >= 0 && base_rss >= 0 ? peak - base_rss : -1);
    if (curl) curl_easy_cleanup(curl);
    hc_schema_free(schema);
    if (req) hc_request_free(req);
    if (client) hc_client_free(client);
    free(data);
    return 0;
}
