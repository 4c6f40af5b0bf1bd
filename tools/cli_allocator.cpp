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
  constexpr int kLargestHeapBlock = 1 << 30;
  constexpr int kKeptFreeTop = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kLargestHeapBlock);
  mallopt(M_TRIM_THRESHOLD, kKeptFreeTop);
#endif
}

}  // namespace stepsim::cli
