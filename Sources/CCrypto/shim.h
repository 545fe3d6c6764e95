/* OpenSSL's libcrypto (already linked by libcurl), for download digests (Session/Checksum.swift). */
#ifndef HC_CCRYPTO_SHIM_H
#define HC_CCRYPTO_SHIM_H

#include <openssl/evp.h>

#endif
