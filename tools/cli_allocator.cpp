#include "tools/cli_allocator.hpp"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace stepsim::cli {

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  // mallopt(3): blocks below M_MMAP_THRESHOLD come from the heap and return to its free lists;
  // M_TRIM_THRESHOLD is how much free heap top may stay before it is given back.
  // Older glibc refuses a threshold above 32 MiB (HEAP_MAX_SIZE / 2); setting the trim threshold
  // alone would then pin the mmap threshold at its 128 KiB start, worse than glibc's own
  // adjustment, so a refusal leaves both alone.
  constexpr int kLargestHeapBlock = 1 << 30;
  constexpr int kKeptFreeTop = 1 << 30;
  if (mallopt(M_MMAP_THRESHOLD, kLargestHeapBlock) == 1) mallopt(M_TRIM_THRESHOLD, kKeptFreeTop);
#endif
}

}  // namespace stepsim::cli
