/*
 * httpcontent/cache.h — the HTTP cache (RFC 9111): in memory or in a SQLite file.
 * Part of <httpcontent.h>, which includes every family; this header also compiles alone.
 * The conventions at the top of httpcontent.h hold for every function here.
 */
#ifndef HTTPCONTENT_CACHE_H
#define HTTPCONTENT_CACHE_H

#include "httpcontent/core.h"

HC_BEGIN_DECL

/** An HTTP cache (RFC 9111): in memory or in a SQLite file that several processes may share.
 *  A client set to use it answers requests from it, replaying the stored head and body through
 *  the request's handler; see docs/cache.md. */
typedef struct hc_cache hc_cache;

/** How the cache answered a request (hc_response_cache_status, hc_error_cache_status). */
typedef enum hc_cache_status {
    HC_CACHE_NONE = 0,        /**< the client has no cache, or it did not apply to the request */
    HC_CACHE_MISS = 1,        /**< from the origin server (stored when the response allows) */
    HC_CACHE_HIT = 2,         /**< a fresh stored response; nothing was sent */
    HC_CACHE_REVALIDATED = 3, /**< a stored response the origin confirmed with a 304 */
    HC_CACHE_STALE = 4        /**< a stale stored response (max-stale, stale-while-revalidate, stale-if-error) */
} hc_cache_status;

/** Flags of hc_cache_new. */
#define HC_CACHE_SHARED 1u /**< shared-cache rules (private responses and Authorization not stored, s-maxage) */

/** A new cache. `path` (copied): the SQLite database file, created when missing; NULL keeps the
 *  cache in memory. `max_bytes`: the most body bytes kept, least recently used evicted first;
 *  0 for the default (64 MiB in memory, 256 MiB in a file); negative: HC_EINVALID_ARG. `flags`:
 *  0 (a private cache, the default) or HC_CACHE_SHARED. NULL on failure, with hc_error_last():
 *  HC_ELOCAL_IO when the file cannot be opened, is not a SQLite database or belongs to another
 *  application (the file is left as it is). The caller owns the result and frees it with
 *  hc_cache_free. */
HC_EXTERN hc_cache *hc_cache_new(const char *path, int64_t max_bytes, unsigned int flags);

/** Releases the caller's reference; clients set to use the cache keep theirs, so it may be
 *  freed at once after hc_client_set_cache. hc_cache_free(NULL) does nothing. */
HC_EXTERN void hc_cache_free(hc_cache *cache);

/** Makes `client` answer its requests through `cache` (NULL: no cache, the default). The client
 *  keeps its own reference to the cache: the caller still frees its own with hc_cache_free.
 *  Several clients, on several threads, may share one cache. No send may be running on the client.
 *  Every way of sending uses it: hc_client_send, hc_client_fetch and batches (hc_batch_add and the
 *  keyed queue); in a batch, a request the cache answers starts no transfer and completes at the
 *  batch's next turn (hc_batch_run, _perform, _step, _socket_action), as a transfer would. */
HC_EXTERN hc_code hc_client_set_cache(hc_client *client, hc_cache *cache);

/** Body bytes the cache holds now, or -1 (with hc_error_last()) when its file cannot be read. */
HC_EXTERN int64_t hc_cache_size(const hc_cache *cache);

/** How the cache answered the request of `response`; HC_CACHE_NONE for NULL. */
HC_EXTERN hc_cache_status hc_response_cache_status(const hc_response *response);

/** How the cache answered the request that failed with `err`, when a response came
 *  (HC_CACHE_NONE otherwise, and for NULL). */
HC_EXTERN hc_cache_status hc_error_cache_status(const hc_error *err);

/** "none", "miss", "hit", "revalidated" or "stale"; NULL for another value. Static: never freed. */
HC_EXTERN const char *hc_cache_status_name(hc_cache_status status);

HC_END_DECL

#endif /* HTTPCONTENT_CACHE_H */
