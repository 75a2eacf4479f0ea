#pragma once
// The x86 intrinsics, for every file that writes SIMD code. GCC 12's AVX-512 headers seed results
// with _mm512_undefined_*(), which the uninitialized warnings then report at every inlined use;
// the warnings are silenced here, before the header is read, for the rest of the including file.
// Include it instead of <immintrin.h>, which nothing else in the project includes.
#ifndef __clang__  // a GCC-only warning group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
