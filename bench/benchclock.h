/* benchclock.h — the two clocks every C benchmark program reads: wall time and the process's
 * own CPU time. Header-only; each bench program includes it. */
#ifndef BENCHCLOCK_H
#define BENCHCLOCK_H

#include <sys/resource.h>
#include <time.h>

/* Monotonic wall-clock seconds. */
static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time (user + system, every thread) this process has used, in seconds. */
static inline double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
         + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

#endif
