/* The JSON-Schema-Test-Suite from C: finding a copy, loading its remotes, running a folder of
 * test files through the C ABI (test_schema.c: the required tests; test_schema_optional.c: the
 * optional ones). */
#ifndef HC_SCHEMASUITE_H
#define HC_SCHEMASUITE_H

#include "testutil.h"
#include <dirent.h>
#include <ftw.h>

static hc_schema_options *suite_opts;
static char remotes_root[4096];

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    fclose(f);
    if (buf) { buf[n] = 0; *len = (size_t)n; }
    return buf;
}

static int add_remote(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st; (void)ftw;
    size_t n = strlen(path);
    if (type != FTW_F || n < 5 || strcmp(path + n - 5, ".json") != 0) return 0;
    size_t len = 0;
    char *text = read_file(path, &len);
    if (!text) return 0;
    char uri[8192];
    snprintf(uri, sizeof uri, "http://localhost:1234/%s", path + strlen(remotes_root) + 1);
    CHECK_CODE(hc_schema_options_add_remote(suite_opts, uri, (const uint8_t *)text, len), HC_OK);
    free(text);
    return 0;
}

/* The suite folder holding `probe_dir` (e.g. "tests/draft2020-12"): ../shared/conformance beside
 * the checkout, $HC_CONFORMANCE, /work/shared/conformance, in that order unless `env_first`.
 * Returns 0 when absent. */
static int find_suite(char *out, size_t size, const char *probe_dir, int env_first) {
    if (size < 3072) return 0;
    char src[512];
    snprintf(src, sizeof src, "%s", HC_TEST_SERVER);
    char *cut = strstr(src, "/Tests/server/");
    if (cut) *cut = 0;
    const char *env = getenv("HC_CONFORMANCE");
    char candidates[3][900];
    snprintf(candidates[env_first ? 1 : 0], sizeof candidates[0], "%s/../shared/conformance", src);
    snprintf(candidates[env_first ? 0 : 1], sizeof candidates[1], "%s", env ? env : "");
    snprintf(candidates[2], sizeof candidates[2], "/work/shared/conformance");
    for (int i = 0; i < 3; i++) {
        if (!candidates[i][0]) continue;
        char probe[1024];
        if (snprintf(probe, sizeof probe, "%s/JSON-Schema-Test-Suite/%s", candidates[i], probe_dir) >= (int)sizeof probe) continue;
        DIR *d = opendir(probe);
        if (d) {
            closedir(d);
            if (snprintf(out, size, "%s/JSON-Schema-Test-Suite", candidates[i]) >= (int)size) return 0;
            return 1;
        }
    }
    return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Loads the suite's remotes into `suite_opts` (made here, with `assert_format`). */
static void suite_begin(const char *suite, int assert_format) {
    suite_opts = hc_schema_options_new();
    hc_schema_options_set_assert_format(suite_opts, assert_format);
    snprintf(remotes_root, sizeof remotes_root, "%s/remotes", suite);
    nftw(remotes_root, add_remote, 16, FTW_PHYS);
}

/* Runs every test file of `dir` (only the one named `only` unless NULL) with `suite_opts`: adds
 * to *total and *passed; with `per_file`, prints each file's count (under `label`); with `quiet`,
 * not each failure. Returns how many files had a failure. */
static int run_folder(const char *dir, const char *only, const char *label, int per_file, int quiet, int *total,
                      int *passed) {
    DIR *d = opendir(dir);
    char *names[256];
    int count = 0, files_failed = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && count < 256) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".json") == 0 && (!only || strcmp(e->d_name, only) == 0))
            names[count++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    qsort(names, (size_t)count, sizeof names[0], cmp_names);

    for (int f = 0; f < count; f++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        size_t len = 0;
        char *text = read_file(path, &len);
        hc_json *groups = NULL;
        if (!text || hc_json_parse((const uint8_t *)text, len, NULL, &groups) != HC_OK) {
            fprintf(stderr, "cannot read %s\n", path);
            hc_checks_failed++;
            free(text);
            continue;
        }
        int file_total = 0, file_passed = 0;
        for (size_t g = 0; g < hc_json_array_length(groups); g++) {
            const hc_json *group = hc_json_array_at(groups, g);
            uint8_t *schema_text = NULL;
            size_t schema_len = 0;
            hc_json_serialize(hc_json_get(group, "schema"), 0, &schema_text, &schema_len);
            hc_schema *schema = hc_schema_new_from_json(schema_text, schema_len, suite_opts);
            const hc_json *tests = hc_json_get(group, "tests");
            for (size_t t = 0; t < hc_json_array_length(tests); t++) {
                const hc_json *test = hc_json_array_at(tests, t);
                const char *keys[] = {"data"};
                uint8_t *data = NULL;
                size_t data_len = 0;
                hc_json_serialize(hc_json_get_path(test, keys, 1), 0, &data, &data_len);
                int valid = 0;
                hc_json_bool(hc_json_get(test, "valid"), &valid);
                hc_code rc = schema ? hc_schema_validate(schema, data, data_len, HC_SCHEMA_ALL_ERRORS) : HC_EINVALID_ARG;
                int ok = valid ? rc == HC_OK
                               : (rc == HC_EDECODE && hc_error_schema_count(hc_error_last()) > 0);
                file_total++;
                if (ok) file_passed++;
                else if (!quiet) {
                    const char *desc = NULL;
                    size_t dl = 0;
                    hc_json_string(hc_json_get(test, "description"), &desc, &dl);
                    fprintf(stderr, "suite: %s group %zu: %.*s: got %s\n", names[f], g, (int)dl, desc, hc_code_name(rc));
                }
                hc_buffer_free(data);
            }
            hc_schema_free(schema);
            hc_buffer_free(schema_text);
        }
        if (per_file) printf("  %s%s: %d of %d\n", label, names[f], file_passed, file_total);
        if (file_passed < file_total) files_failed++;
        *total += file_total;
        *passed += file_passed;
        hc_json_free(groups);
        free(text);
        free(names[f]);
    }
    return files_failed;
}

#endif
