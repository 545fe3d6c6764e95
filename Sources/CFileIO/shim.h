/* Linux file calls that glibc declares only under _GNU_SOURCE, which Swift's Glibc module is
 * built without. Declared here as glibc defines them (off_t is 64-bit on the 64-bit targets the
 * library supports); nothing is compiled or exported. */
#ifndef HC_CFILEIO_SHIM_H
#define HC_CFILEIO_SHIM_H

#include <sys/types.h>

/* fallocate(2): reserve a file's blocks up front. */
int fallocate(int fd, int mode, off_t offset, off_t len);

/* FALLOC_FL_KEEP_SIZE: allocate without changing the file's size. */
#define HC_FALLOC_FL_KEEP_SIZE 0x01

#endif
