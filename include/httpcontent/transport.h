/*
 * httpcontent/transport.h — where connections go and how TLS is set up (issue 31): DNS
 * overrides, Unix sockets, certificates from memory, TLS versions and ciphers, public-key
 * pinning, happy eyeballs, TLS session reuse, and the per-phase timings of a response. Each is
 * one libcurl option or info. Included by httpcontent.h; readable alone.
 *
 * Every setter replaces the client's earlier value, applies to the requests sent after it, and
 * returns HC_OK, or HC_EINVALID_ARG for a NULL client or a bad value (the message says which).
 * Settings are meant to be made before sending, as the other hc_client_set_* ones.
 */
#ifndef HTTPCONTENT_TRANSPORT_H
#define HTTPCONTENT_TRANSPORT_H

#include "httpcontent/core.h"

HC_BEGIN_DECL

/** DNS overrides, as curl's --resolve: each entry "host:port:address[,address...]" makes
 *  https://host:port/ connect to `address` while TLS and the Host header still say `host`
 *  ("-host:port" removes an entry). `entries` (copied) holds `count` NUL-terminated strings;
 *  count 0 (entries may then be NULL) removes every override. Default: none. */
HC_EXTERN hc_code hc_client_set_resolve(hc_client *client, const char *const *entries, size_t count);

/** Connect to the Unix domain socket at `path` (copied) instead of the URL's host and port (the
 *  URL still names the Host header and the TLS server name). NULL: TCP again. Default: NULL. */
HC_EXTERN hc_code hc_client_set_unix_socket(hc_client *client, const char *path);

/** Trust the CA certificates in `len` bytes of PEM at `pem` (copied; not NUL-terminated) instead
 *  of the system's and of hc_client_set_ca_file's. NULL: back to the file or the system's.
 *  Default: NULL. */
HC_EXTERN hc_code hc_client_set_ca_pem(hc_client *client, const uint8_t *pem, size_t len);

/** A client certificate from memory, PEM: `cert_len` bytes at `cert` (the certificate, or its
 *  chain) and `key_len` bytes at `key` (its private key; NULL: in the certificate's bytes). Both
 *  copied. cert NULL: no certificate from memory. Default: none. */
HC_EXTERN hc_code hc_client_set_client_cert_pem(hc_client *client, const uint8_t *cert, size_t cert_len,
                                                const uint8_t *key, size_t key_len);

/** A client certificate and key from memory as a PKCS#12 bundle: `len` bytes at `p12` (copied),
 *  `password` (copied; NULL: none). p12 NULL: no certificate from memory. Default: none. */
HC_EXTERN hc_code hc_client_set_client_cert_p12(hc_client *client, const uint8_t *p12, size_t len,
                                                const char *password);

/** TLS protocol versions, for hc_client_set_min_tls. */
typedef enum hc_tls_version {
    HC_TLS_DEFAULT = 0, /**< libcurl's and the system's policy (TLS 1.2 here). */
    HC_TLS_1_0 = 4,     /**< TLS 1.0 */
    HC_TLS_1_1 = 5,     /**< TLS 1.1 */
    HC_TLS_1_2 = 6,     /**< TLS 1.2 */
    HC_TLS_1_3 = 7      /**< TLS 1.3 */
} hc_tls_version;

/** The lowest TLS version accepted: `version` is an hc_tls_version. Default: HC_TLS_DEFAULT. */
HC_EXTERN hc_code hc_client_set_min_tls(hc_client *client, hc_tls_version version);

/** OpenSSL cipher lists (both copied): `tls12` for TLS 1.2 and below (as "ECDHE-RSA-AES128-GCM-SHA256"),
 *  `tls13` for TLS 1.3 suites (as "TLS_AES_128_GCM_SHA256"); NULL leaves OpenSSL's. A list
 *  OpenSSL knows none of fails each request with HC_ETRANSPORT. Default: NULL, NULL. */
HC_EXTERN hc_code hc_client_set_ciphers(hc_client *client, const char *tls12, const char *tls13);

/** Public-key pinning (copied): "sha256//<base64>[;sha256//<base64>...]" or the path of a PEM/DER
 *  public key; a server whose key matches none fails with HC_ETRANSPORT, hc_error_curl_code 90
 *  (CURLE_SSL_PINNEDPUBKEYNOTMATCH). NULL: no pinning. Default: NULL. */
HC_EXTERN hc_code hc_client_set_pinned_public_key(hc_client *client, const char *pins);

/** How long IPv6 gets before IPv4 is tried too for a host with both (RFC 8305), in
 *  milliseconds; -1: libcurl's default (200 ms). Default: -1. */
HC_EXTERN hc_code hc_client_set_happy_eyeballs_ms(hc_client *client, long ms);

/** HTTP versions a client offers, for hc_client_set_http_version. */
typedef enum hc_http_version {
    HC_HTTP_1_1 = 2,               /**< HTTP/1.1 only (ALPN offers http/1.1). */
    HC_HTTP_2 = 4,                 /**< h2 where ALPN agrees over TLS, else HTTP/1.1 (the default). */
    HC_HTTP_2_PRIOR_KNOWLEDGE = 5  /**< h2 from the first byte, no ALPN or upgrade (h2c servers). */
} hc_http_version;

/** The HTTP versions offered: `version` is an hc_http_version. Default: HC_HTTP_2. */
HC_EXTERN hc_code hc_client_set_http_version(hc_client *client, hc_http_version version);

/** Accept TLS 1.2 session tickets (1) or not (0): with them a new connection to a server seen
 *  before resumes its session where the server keeps no session-ID cache (nginx's default).
 *  Sessions are shared by every handle of the client. Default: 1. */
HC_EXTERN hc_code hc_client_set_tls_session_tickets(hc_client *client, int on);

/** Most connections to one host at once (CURLMOPT_MAX_HOST_CONNECTIONS) for the client's
 *  batches (hc_batch_new after this call; hc_batch_set_host_limit overrides it per batch) and
 *  its background transfers; 0: no limit. Over h2 every transfer shares one connection anyway:
 *  this bounds HTTP/1.1 fan-out. Default: 0. */
HC_EXTERN hc_code hc_client_set_host_limit(hc_client *client, size_t max_per_host);

/* -- TLS sessions and DNS shared between clients. Every client shares its own among its
 *    handles; a share given to several clients lets each resume the TLS sessions the others
 *    made (libcurl matches a session to a connection's TLS settings before it reuses it, so
 *    clients of different TLS settings may share one). A client with cookies on shares its
 *    cookie jar's instead (libcurl gives a transfer one share): turn cookies off
 *    (hc_client_set_cookies) to use this one. */

/** Opaque: TLS sessions and DNS entries several clients use (Swift's ConnectionShare). */
typedef struct hc_connection_share hc_connection_share;

/** A share of TLS sessions and DNS entries (libcurl's share handle). Free with
 *  hc_connection_share_free; clients given it hold their own reference, so it may be freed
 *  before them. NULL only when out of memory. */
HC_EXTERN hc_connection_share *hc_connection_share_new(void);

/** Frees the caller's reference to a share (NULL: nothing). */
HC_EXTERN void hc_connection_share_free(hc_connection_share *share);

/** Makes the client keep its TLS sessions and DNS entries in `share` (borrowed: the client takes
 *  its own reference) from its next request on. HC_EINVALID_ARG for a NULL argument or a client
 *  with cookies on. A later hc_client_set_cookies turning them on moves the client to its jar's
 *  share. Default: a share of the client's own. */
HC_EXTERN hc_code hc_client_set_connection_share(hc_client *client, hc_connection_share *share);

/** The phases of a transfer, for hc_response_timing. */
typedef enum hc_timing {
    HC_TIMING_DNS = 0,         /**< The host name resolved (CURLINFO_NAMELOOKUP_TIME_T). */
    HC_TIMING_CONNECT = 1,     /**< The connection made (CURLINFO_CONNECT_TIME_T). */
    HC_TIMING_TLS = 2,         /**< The TLS handshake done; 0 for plain http (CURLINFO_APPCONNECT_TIME_T). */
    HC_TIMING_PRETRANSFER = 3, /**< The request about to be sent (CURLINFO_PRETRANSFER_TIME_T). */
    HC_TIMING_FIRST_BYTE = 4,  /**< The first response byte (CURLINFO_STARTTRANSFER_TIME_T). */
    HC_TIMING_TOTAL = 5,       /**< The whole transfer (CURLINFO_TOTAL_TIME_T). */
    HC_TIMING_REDIRECT = 6     /**< Redirects followed before the final request (CURLINFO_REDIRECT_TIME_T). */
} hc_timing;

/** When `phase` (an hc_timing) of the response's transfer ended, in seconds from its start, as
 *  libcurl measured it; a phase a kept connection skipped ends when the one before it did.
 *  -1 (HC_EINVALID_ARG) for a NULL response or an unknown phase. */
HC_EXTERN double hc_response_timing(const hc_response *response, hc_timing phase);

HC_END_DECL

#endif /* HTTPCONTENT_TRANSPORT_H */
