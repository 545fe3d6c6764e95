/* Issue 31 on the C front (include/httpcontent/transport.h), against a real nginx with TLS
 * (Tests/server/h2server.py): TLS 1.2 sessions resumed by ticket on new connections, DNS
 * overrides, CA and client certificate from memory, the Unix socket, pinning, minimum TLS
 * version, and the per-phase timings. Skipped, saying why, where nginx or openssl is missing. */
/* This test starts its own server (h2server.py), not testutil's: its helpers go unused. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "testutil.h"
#include <sys/wait.h>

struct h2 { pid_t pid; int in; int port; char dir[64], ca[512], log[512]; };

/* Starts h2server.py (ALPN http/1.1) in a new folder with up to two options ("--fresh", "--tls12");
 * 0 when it runs, -1 (a line printed) when it skipped. */
static int h2_start(struct h2 *s, const char *flag1, const char *flag2) {
    char script[512], line[1024] = {0};
    snprintf(script, sizeof script, "%s", HC_TEST_SERVER);
    char *slash = strrchr(script, '/');
    snprintf(slash + 1, sizeof script - (size_t)(slash + 1 - script), "h2server.py");
    snprintf(s->dir, sizeof s->dir, "/tmp/hc-tls-XXXXXX");
    if (!mkdtemp(s->dir)) { perror("mkdtemp"); exit(2); }
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) { perror("pipe"); exit(2); }
    s->pid = fork();
    if (s->pid == 0) { /* the server stops when our end of its stdin closes */
        dup2(in[0], 0); dup2(out[1], 1);
        close(in[1]); close(out[0]);
        execlp("python3", "python3", script, s->dir, "--http1", flag1, flag2, (char *)NULL);
        _exit(127);
    }
    close(in[0]); close(out[1]);
    s->in = in[1];
    FILE *f = fdopen(out[0], "r");
    if (!f || !fgets(line, sizeof line, f)) line[0] = 0;
    if (f) fclose(f);
    if (sscanf(line, "READY %d %511s %511s", &s->port, s->ca, s->log) == 3) return 0;
    printf("skipped the TLS tests: %s", strncmp(line, "SKIP ", 5) == 0 ? line + 5 : "h2server.py did not start\n");
    CHECK(strncmp(line, "SKIP ", 5) == 0);
    close(s->in);
    waitpid(s->pid, NULL, 0);
    return -1;
}

static void h2_stop(struct h2 *s) {
    close(s->in);
    waitpid(s->pid, NULL, 0);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    static char buf[65536];
    *len = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    return buf;
}

static hc_code get(hc_client *c, const char *url, hc_response **out) {
    hc_request *req = hc_request_new("GET", url);
    hc_handler *h = hc_handler_bytes_new(0);
    hc_request_set_handler(req, h);
    hc_code code = hc_client_send(c, req, out);
    hc_handler_free(h);
    hc_request_free(req);
    return code;
}

/* The resumption field ("r" or ".") of each request nginx logged, once `want` are there: nginx
 * writes a request's line after sending its response (waits at most 10 s). Returns the count. */
static int resumed(const char *log, int want, char *seen, size_t size) {
    char conn[32], proto[32], uri[128], reused[8];
    int n = 0;
    for (int tries = 0; tries < 200 && n < want; tries++) {
        if (tries) usleep(50000);
        FILE *lf = fopen(log, "r");
        n = 0;
        while (lf && (size_t)n + 1 < size && fscanf(lf, "%31s %31s %127s %7s", conn, proto, uri, reused) == 4) seen[n++] = reused[0];
        seen[n] = 0;
        if (lf) fclose(lf);
    }
    return n;
}

static void test_tls12_sessions_resume_by_ticket(void) {
    struct h2 s;
    if (h2_start(&s, "--fresh", "--tls12") != 0) return;
    hc_client *c = hc_client_new();
    CHECK_CODE(hc_client_set_ca_file(c, s.ca), HC_OK);
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/f1.bin", s.port);
    for (int i = 0; i < 3; i++) {
        hc_response *r = NULL;
        CHECK_CODE(get(c, url, &r), HC_OK);
        hc_response_free(r);
    }
    /* "<connection> <protocol> <uri> <r or .>" per request: a full handshake, then resumed */
    char seen[8] = {0};
    CHECK(resumed(s.log, 3, seen, sizeof seen) == 3 && strcmp(seen, ".rr") == 0);
    hc_client_free(c);
    h2_stop(&s);
}

static void test_clients_given_one_share_resume_each_others_sessions(void) {
    struct h2 s;
    if (h2_start(&s, "--fresh", "--tls12") != 0) return;
    hc_connection_share *share = hc_connection_share_new();
    CHECK(share != NULL);
    hc_client *first = hc_client_new(), *second = hc_client_new(), *with_cookies = hc_client_new();
    /* a client with cookies shares its cookie jar's: another share is refused, saying why */
    CHECK_CODE(hc_client_set_connection_share(with_cookies, share), HC_EINVALID_ARG);
    CHECK(strstr(hc_error_message(hc_error_last()), "cookie jar") != NULL);
    CHECK_CODE(hc_client_set_connection_share(NULL, share), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_connection_share(first, NULL), HC_EINVALID_ARG);
    hc_client *clients[] = {first, second};
    for (int i = 0; i < 2; i++) {
        CHECK_CODE(hc_client_set_cookies(clients[i], 0, NULL), HC_OK);
        CHECK_CODE(hc_client_set_connection_share(clients[i], share), HC_OK);
        CHECK_CODE(hc_client_set_ca_file(clients[i], s.ca), HC_OK);  /* a later setting keeps the share */
    }
    hc_connection_share_free(share);  /* the clients hold their own references */
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/f1.bin", s.port);
    for (int i = 0; i < 2; i++) {
        hc_response *r = NULL;
        CHECK_CODE(get(clients[i], url, &r), HC_OK);
        hc_response_free(r);
    }
    char seen[8] = {0};
    CHECK(resumed(s.log, 2, seen, sizeof seen) == 2 && strcmp(seen, ".r") == 0);
    hc_client_free(first);
    hc_client_free(second);
    hc_client_free(with_cookies);
    h2_stop(&s);
}

static void test_options_against_nginx(void) {
    struct h2 s;
    if (h2_start(&s, NULL, NULL) != 0) return;
    char url[256], path[600];
    size_t len;

    /* resolve + CA from memory: hc.test is only known through the override */
    hc_client *c = hc_client_new();
    char entry[64];
    snprintf(entry, sizeof entry, "hc.test:%d:127.0.0.1", s.port);
    const char *entries[] = {entry};
    CHECK_CODE(hc_client_set_resolve(c, entries, 1), HC_OK);
    const char *ca = read_file(s.ca, &len);
    CHECK(len > 0);
    CHECK_CODE(hc_client_set_ca_pem(c, (const uint8_t *)ca, len), HC_OK);
    snprintf(url, sizeof url, "https://hc.test:%d/f2.bin", s.port);
    hc_response *r = NULL;
    CHECK_CODE(get(c, url, &r), HC_OK);
    const uint8_t *data; size_t n;
    CHECK_CODE(hc_response_bytes(r, &data, &n), HC_OK);
    CHECK(n == 1002 && data[0] == 2);
    /* timings: each phase ends after the one before it; a handshake happened */
    double dns = hc_response_timing(r, HC_TIMING_DNS), conn = hc_response_timing(r, HC_TIMING_CONNECT);
    double tls = hc_response_timing(r, HC_TIMING_TLS), ttfb = hc_response_timing(r, HC_TIMING_FIRST_BYTE);
    double total = hc_response_timing(r, HC_TIMING_TOTAL);
    CHECK(0 <= dns && dns <= conn && conn < tls && tls <= ttfb && ttfb <= total);
    CHECK(hc_response_timing(r, (hc_timing)99) == -1 && hc_error_code(hc_error_last()) == HC_EINVALID_ARG);
    CHECK(hc_response_timing(NULL, HC_TIMING_TOTAL) == -1);
    hc_response_free(r);
    CHECK_CODE(hc_client_set_resolve(c, NULL, 0), HC_OK);
    CHECK_CODE(hc_client_set_resolve(c, (const char *[]){"hc.test"}, 1), HC_EINVALID_ARG);
    hc_client_free(c);

    /* Unix socket + client certificate from memory (PEM): port 1 is closed, the socket answers */
    c = hc_client_new();
    CHECK_CODE(hc_client_set_ca_file(c, s.ca), HC_OK);
    snprintf(path, sizeof path, "%s/nginx.sock", s.dir);
    CHECK_CODE(hc_client_set_unix_socket(c, path), HC_OK);
    static char cert[8192];
    snprintf(path, sizeof path, "%s/client.pem", s.dir);
    const char *got = read_file(path, &len);
    size_t cert_len = len;
    memcpy(cert, got, len);
    snprintf(path, sizeof path, "%s/client.key", s.dir);
    const char *key = read_file(path, &len);
    CHECK_CODE(hc_client_set_client_cert_pem(c, (const uint8_t *)cert, cert_len, (const uint8_t *)key, len), HC_OK);
    CHECK(get(c, "https://127.0.0.1:1/whoami", &r) == HC_OK);
    CHECK(r && hc_response_bytes(r, &data, &n) == HC_OK && n == 20 && memcmp(data, "SUCCESS CN=hc-client", 20) == 0);
    hc_response_free(r);
    hc_client_free(c);

    /* pinning a key the server does not have: HC_ETRANSPORT, CURLE_SSL_PINNEDPUBKEYNOTMATCH */
    c = hc_client_new();
    CHECK_CODE(hc_client_set_ca_file(c, s.ca), HC_OK);
    CHECK_CODE(hc_client_set_pinned_public_key(c, "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="), HC_OK);
    snprintf(url, sizeof url, "https://127.0.0.1:%d/f3.bin", s.port);
    r = NULL;
    CHECK_CODE(get(c, url, &r), HC_ETRANSPORT);
    CHECK(hc_error_curl_code(hc_error_last()) == 90);
    hc_client_free(c);

    /* bad values and NULL handles */
    CHECK_CODE(hc_client_set_min_tls(NULL, HC_TLS_1_2), HC_EINVALID_ARG);
    c = hc_client_new();
    CHECK_CODE(hc_client_set_min_tls(c, (hc_tls_version)3), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_min_tls(c, HC_TLS_1_3), HC_OK);
    CHECK_CODE(hc_client_set_happy_eyeballs_ms(c, -5), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_happy_eyeballs_ms(c, 50), HC_OK);
    CHECK_CODE(hc_client_set_ciphers(c, "", NULL), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_tls_session_tickets(c, 0), HC_OK);
    CHECK_CODE(hc_client_set_http_version(c, (hc_http_version)3), HC_EINVALID_ARG);
    CHECK_CODE(hc_client_set_http_version(c, HC_HTTP_1_1), HC_OK);
    hc_client_free(c);
    h2_stop(&s);
}

int main(void) {
    test_tls12_sessions_resume_by_ticket();
    test_clients_given_one_share_resume_each_others_sessions();
    test_options_against_nginx();
    return hc_test_finish();
}
