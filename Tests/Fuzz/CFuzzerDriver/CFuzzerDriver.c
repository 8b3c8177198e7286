// Declarations only (include/CFuzzerDriver.h); SwiftPM wants one source file in a C target.
#include "CFuzzerDriver.h"
