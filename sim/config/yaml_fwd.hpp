// The positioned YAML reader's types by name, for headers whose functions take them by reference.
// Only the readers that walk a document include yaml_field.hpp, and yaml-cpp with it: parsing
// yaml-cpp's headers in every file that includes scenario.hpp was a large part of a build.
#pragma once

namespace stepsim::config {

class Field;
class YamlDocument;

}  // namespace stepsim::config
