/*
 * httpcontent.h — the C interface of libhttpcontent, an HTTP content library: send a request,
 * and let a handler decide, as the bytes arrive, what becomes of the response body.
 *
 * Conventions, true of every function below unless its comment says otherwise:
 *  - Handles are opaque. Every `*_new` is paired with a `*_free`; `*_free(NULL)` does nothing.
 *  - A function returning `hc_code` returns HC_OK on success; on failure, the code says what went
 *    wrong and hc_error_last() explains it. A function returning a pointer returns NULL on
 *    failure, with hc_error_last() set.
 *  - A NULL handle or required pointer argument gives HC_EINVALID_ARG, never a crash. A getter
 *    that returns a value rather than a code or a pointer (a status, a count, a kind) has no
 *    failure to report: for a NULL handle it returns the value its comment gives (0, -1,
 *    HC_JSON_INVALID...) and leaves hc_error_last() as it was.
 *  - Strings passed in are NUL-terminated UTF-8 and are copied: the caller may free them after
 *    the call. Strings returned are borrowed from the handle they came from, as each comment says.
 *  - Handles may be used from any thread, but one handle by one thread at a time, except where a
 *    comment says a function is safe to call concurrently (hc_cancel_cancel, hc_client_send).
 *  - Streaming promise: every streaming handler (path items, batches, records, lines, events,
 *    XML elements, stream and custom callbacks) hands a complete item to its callback before
 *    the write callback that read the item's last byte returns: batches made for speed are cut
 *    at the end of every chunk libcurl delivers, and an item still incomplete there goes on in
 *    the next batch. Nothing waits for more bytes that may not come.
 */
#ifndef HTTPCONTENT_H
#define HTTPCONTENT_H

/* One header per family, as libcurl and libgit2 do; each compiles alone, and a program may
 * include just the families it uses. A new family adds one header here. */
#include "httpcontent/core.h"    /* errors, cancellation, handlers, requests, clients, responses */
#include "httpcontent/batch.h"   /* many requests at once (libcurl multi) */
#include "httpcontent/body.h"    /* request bodies: forms, multipart, files */
#include "httpcontent/json.h"    /* JSON */
#include "httpcontent/image.h"   /* decoded images */
#include "httpcontent/plist.h"   /* property lists */
#include "httpcontent/schema.h"  /* JSON Schema validation, transformers */
#include "httpcontent/records.h" /* lines, JSON records, Server-Sent Events */
#include "httpcontent/session.h" /* cookies, auth, proxies, retries, digests */
#include "httpcontent/xml.h"     /* XML trees, elements and events */
#include "httpcontent/request_options.h" /* a request's settings in one struct; the defaults */
#include "httpcontent/transport.h" /* TLS, DNS and socket options; per-phase timings */
#include "httpcontent/cache.h"   /* the HTTP cache (RFC 9111) */

#endif /* HTTPCONTENT_H */
