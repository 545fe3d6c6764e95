/* libFuzzer's driver entry point (compiler-rt, linked by -sanitize=fuzzer). SwiftPM renames an
 * executable's entry point to <module>_main and points `main` at it, so libFuzzer's own main is
 * not used: each fuzz target's @main calls this instead. */
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
