#ifndef C_FUZZER_DRIVER_H
#define C_FUZZER_DRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver, for a binary whose `main` is its own (SwiftPM names an executable's entry
/// `<Module>_main`, so libFuzzer's `main` cannot be used): defined by the fuzzer runtime that
/// `-sanitize=fuzzer` links; never called in an ordinary build.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
