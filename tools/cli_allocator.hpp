// How this process asks the C library to keep the memory it frees.
#pragma once

namespace stepsim::cli {

/// A sweep builds and frees one plan's task arrays after another, thousands of them. By default
/// glibc hands every freed block above its mmap threshold back to the kernel and trims the heap's
/// free top, so the next plan takes a page fault for every 4 KiB it touches again. Keeping freed
/// memory in the process lets the next plan reuse it. A single large run is left as it is: there
/// the blocks kept while its arrays grow would raise its peak resident set. No effect outside
/// glibc.
void keep_freed_memory_for_reuse();

}  // namespace stepsim::cli
