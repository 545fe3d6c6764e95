/* Declarations only (see include/CLibFuzzer.h); SwiftPM needs one source file in a C target. */
#include "CLibFuzzer.h"
