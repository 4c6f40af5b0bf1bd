// Reading a file a user named, with a message that says what is wrong with it: missing, a
// directory, not a regular file (a FIFO, /dev/zero), unreadable (the system's reason), or larger
// than any input stepsim reads. Every reader of user files (YAML, nccl-tests logs, topo pastes)
// goes through it.
#pragma once

#include <cstdint>
#include <string>

namespace stepsim::config {

/// No scenario, hardware, model, log or topo paste comes near this; /dev/zero or a mistyped
/// path to a checkpoint would, and would otherwise be read into memory whole.
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{64} << 20;

/// The file's bytes. Throws ConfigError at {path, 0, 0} naming what is wrong.
std::string read_text_file(const std::string& path);

}  // namespace stepsim::config
