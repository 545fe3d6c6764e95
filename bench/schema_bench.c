/* schema_bench.c — the C contestants of bench/schema.sh (issue 18): what validating against a
 * JSON Schema costs on top of parsing, in memory and while streaming.
 *
 *   schema_bench MODE SOURCE SCHEMA_FILE COUNT EXPECTED_BYTES EXPECTED_ITEMS
 *
 * SOURCE is a file (in-memory modes: read once before timing) or a URL (network modes).
 * Modes (each "-schema" mode is its plain mode plus validation against SCHEMA_FILE):
 *   parse / parse-schema   hc_json_parse on the bytes in memory / then hc_schema_validate_json
 *   tree / tree-schema     hc_handler_json_new over loopback / with hc_handler_json_set_schema
 *                          (the whole document validated once its tree is complete)
 *   items / items-schema   hc_handler_json_items_new({"item"}) / each item validated before its
 *                          callback (SCHEMA_FILE's "items" subschema is the per-item schema)
 * Each pass is checked: EXPECTED_BYTES parsed and EXPECTED_ITEMS elements (all valid).
 * Prints one line: "MBPS <value> bytes=<total> seconds=<elapsed> cpu=<user+sys seconds>"
 * (MB = 10^6 bytes). Exit 1: a pass failed or gave the wrong size or count.
 */
#include <httpcontent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "benchclock.h"

static int hc_fail(const char *what) {
    const hc_error *e = hc_error_last();
    fprintf(stderr, "%s: %s (%s)\n", what, hc_error_message(e), hc_code_name(hc_error_code(e)));
    return 1;
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

static long long g_items;
static int on_item(void *ud, size_t prefix, const hc_json *value) {
    (void)ud; (void)prefix;
    if (hc_json_type(value) != HC_JSON_OBJECT) return 1;
    g_items++;
    return 0;
}

/* The per-item schema: the document schema's "items" member, serialized again. */
static hc_schema *item_schema(const unsigned char *text, size_t len) {
    hc_json *doc = NULL;
    if (hc_json_parse(text, len, NULL, &doc) != HC_OK) return NULL;
    uint8_t *out = NULL;
    size_t out_len = 0;
    hc_schema *s = NULL;
    if (hc_json_serialize(hc_json_get(doc, "items"), 0, &out, &out_len) == HC_OK)
        s = hc_schema_new_from_json(out, out_len, NULL);
    hc_buffer_free(out);
    hc_json_free(doc);
    return s;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s MODE SOURCE SCHEMA_FILE COUNT EXPECTED_BYTES EXPECTED_ITEMS\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *source = argv[2];
    long count = atol(argv[4]);
    unsigned long long expected = strtoull(argv[5], NULL, 10);
    long long expected_items = atoll(argv[6]);
    if (count < 1) { fprintf(stderr, "COUNT must be >= 1\n"); return 2; }
    enum { PARSE, TREE, ITEMS } m;
    size_t mode_len = strlen(mode);
    int with_schema = mode_len > 7 && strcmp(mode + mode_len - 7, "-schema") == 0;
    if (!strncmp(mode, "parse", 5)) m = PARSE;
    else if (!strncmp(mode, "tree", 4)) m = TREE;
    else if (!strncmp(mode, "items", 5)) m = ITEMS;
    else { fprintf(stderr, "unknown mode %s\n", mode); return 2; }

    size_t schema_len = 0;
    unsigned char *schema_text = read_file(argv[3], &schema_len);
    if (!schema_text) return 1;
    hc_schema *schema = m == ITEMS ? item_schema(schema_text, schema_len)
                                   : hc_schema_new_from_json(schema_text, schema_len, NULL);
    if (!schema) return hc_fail("schema");
    free(schema_text);

    unsigned char *data = NULL;
    size_t len = 0;
    hc_client *client = NULL;
    hc_request *req = NULL;
    if (m == PARSE) {
        data = read_file(source, &len);
        if (!data) return 1;
        if (len != expected) { fprintf(stderr, "%s: %zu bytes, expected %llu\n", source, len, expected); return 1; }
    } else {
        client = hc_client_new();
        req = hc_request_new("GET", source);
        if (!client || !req) return hc_fail("client or request");
        const char *prefixes[] = {"item"};
        hc_handler *h = m == TREE ? hc_handler_json_new(NULL) : hc_handler_json_items_new(prefixes, 1, NULL, on_item, NULL);
        if (!h) return hc_fail("handler");
        if (with_schema && hc_handler_json_set_schema(h, schema, 0) != HC_OK) return hc_fail("hc_handler_json_set_schema");
        if (hc_request_set_handler(req, h) != HC_OK) return hc_fail("hc_request_set_handler");
        hc_handler_free(h);
    }

    double cpu_start = cpu_seconds();
    double start = now();
    unsigned long long total = 0;
    for (long i = 0; i < count; i++) {
        long long items = -1;
        unsigned long long got = 0;
        if (m == PARSE) {
            hc_json *root = NULL;
            if (hc_json_parse(data, len, NULL, &root) != HC_OK) return hc_fail("hc_json_parse");
            if (with_schema && hc_schema_validate_json(schema, root, 0) != HC_OK) return hc_fail("hc_schema_validate_json");
            items = (long long)hc_json_array_length(root);
            hc_json_free(root);
            got = len;
        } else {
            g_items = 0;
            hc_response *resp = NULL;
            if (hc_client_send(client, req, &resp) != HC_OK) return hc_fail("hc_client_send");
            int64_t decoded = 0;
            if (hc_response_metrics(resp, NULL, &decoded, NULL) != HC_OK) return hc_fail("hc_response_metrics");
            got = (unsigned long long)decoded;
            if (m == TREE) {
                const hc_json *root = hc_response_json(resp);
                if (!root) return hc_fail("hc_response_json");
                items = (long long)hc_json_array_length(root);
            } else {
                items = g_items;
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
    printf("MBPS %.1f bytes=%llu seconds=%.3f cpu=%.3f\n", (double)total / elapsed / 1e6, total, elapsed, cpu);
    hc_schema_free(schema);
    if (req) hc_request_free(req);
    if (client) hc_client_free(client);
    free(data);
    return 0;
}
