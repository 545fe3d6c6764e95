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

/* sync_file_range(2): start writing a range of a file back, or wait for it, without the
 * journal commit of an fsync. */
int sync_file_range(int fd, off_t offset, off_t nbytes, unsigned int flags);

#define HC_SYNC_FILE_RANGE_WAIT_BEFORE 1u
#define HC_SYNC_FILE_RANGE_WRITE 2u
#define HC_SYNC_FILE_RANGE_WAIT_AFTER 4u

/* pthread_tryjoin_np(3): join a thread if it has finished, else EBUSY (GNU). */
#include <pthread.h>
int pthread_tryjoin_np(pthread_t thread, void **retval);

#endif
