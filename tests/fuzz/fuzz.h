/*
 * fuzz.h -- the one entry point every fuzz target (tests/fuzz/fuzz_<parser>.c) defines, called
 * by libFuzzer in the fuzz build and by replay_main.c in every build. Returns 0 (libFuzzer's
 * convention: other values are reserved).
 */
#ifndef SWORN_FUZZ_H
#define SWORN_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
