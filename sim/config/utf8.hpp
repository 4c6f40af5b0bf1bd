// UTF-8 well-formedness (RFC 3629 §4): what YAML input (YAML 1.2 §5.2) and JSON output
// (RFC 8259 §8.1) must be.
#pragma once

#include <cstddef>
#include <string_view>

namespace stepsim::config {

/// Bytes of the well-formed UTF-8 sequence that starts at text[i] (1 for ASCII; no overlong
/// forms, no surrogates, nothing above U+10FFFF), or 0 if none does. Requires: i < text.size().
std::size_t utf8_sequence(std::string_view text, std::size_t i);

}  // namespace stepsim::config
