// How this process asks the C library to keep the memory it frees.
#pragma once

namespace stepsim::cli {

/// A sweep builds and frees one plan's task arrays after another, thousands of them. glibc maps
/// blocks above its mmap threshold (which adapts up to 32 MiB) and returns them to the kernel when
/// freed, and trims the heap's free top, so the next plan takes a page fault for every 4 KiB it
/// touches again. With the thresholds raised the next plan reuses that memory. Worker threads'
/// arenas are 64 MiB heaps, so their larger blocks are still mapped each time. A single large run
/// is left as it is: the blocks kept while its arrays grow would raise its peak resident set, which
/// the memory guard (config::check_memory) reads. No effect outside glibc.
void keep_freed_memory_for_reuse();

}  // namespace stepsim::cli
