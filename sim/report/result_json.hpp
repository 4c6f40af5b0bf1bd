// One StepResult as JSON fields, and back: the only writer and reader of a result's keys, used by
// `run --json` (result_formats.hpp), the sweep outcome file and `advise --json` (sim/sweep). Keys
// and units are README.md's (Result formats). Numbers are written in their shortest exact form and
// read back with std::from_chars, so read(write(r)) == r field for field
// (tests/sim/report/result_json_test.cpp). The timeline (tasks, ranks, links) is not part of it.
#pragma once

#include "sim/config/yaml_fwd.hpp"
#include "sim/plan/step_result.hpp"
#include "sim/report/json_writer.hpp"

namespace stepsim::report {

/// The fields of `r` as key/value pairs inside an object the caller opened ("name" first).
void write_result_fields(JsonWriter& w, const plan::StepResult& r);

/// The result `object` holds (what write_result_fields wrote; other keys are ignored). Errors:
/// config::ConfigError at the key that is missing or of the wrong type. JSON null reads as NaN
/// (the writer's form of a non-finite number).
plan::StepResult read_result_fields(const config::Field& object);

}  // namespace stepsim::report
