/* libplist 2.x (XML and binary property lists). No variadic calls to wrap: the header is
 * imported as it is. */
#ifndef HC_CPLIST_SHIM_H
#define HC_CPLIST_SHIM_H

#include <plist/plist.h>

#endif
