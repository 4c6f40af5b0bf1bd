#include "sim/sweep/sweep_json.hpp"

#include "sim/config/yaml_field.hpp"
#include "sim/report/result_json.hpp"

namespace stepsim::sweep {
namespace {

using config::Field;

constexpr const char* kFormat = "stepsim-sweep";
constexpr int kVersion = 1;

int read_small(const Field& f) { return static_cast<int>(f.as_int()); }

PlanResult read_plan(const Field& f) {
  PlanResult p;
  p.index = static_cast<std::size_t>(f.required("index").as_non_negative_int());
  p.result = report::read_result_fields(f);
  return p;
}

std::size_t read_count(const Field& root, const char* key) {
  return static_cast<std::size_t>(root.required(key).as_non_negative_int());
}

SweepOutcome read_outcome(const config::YamlDocument& doc) {
  const Field root = doc.root();
  const Field format = root.required("format");
  if (format.as_string() != kFormat) format.fail(std::string("expected '") + kFormat + "', found " + format.found());
  const Field version = root.required("version");
  if (version.as_int() != kVersion) version.fail("expected version " + std::to_string(kVersion) + ", found " + version.found());
  SweepOutcome out;
  out.scenario = root.required("scenario").as_string();
  out.fingerprint = root.required("fingerprint").as_string();
  out.enumerated = read_count(root, "enumerated");
  out.shard_count = read_small(root.required("shard_count"));
  out.shards.clear();
  for (const Field& k : root.required("shards").items()) out.shards.push_back(read_small(k));
  out.tried = read_count(root, "tried");
  out.invalid = read_count(root, "invalid");
  out.not_run = read_count(root, "not_run");
  out.interrupted = root.required("interrupted").as_bool();
  for (const Field& item : root.required("results").items()) out.results.push_back(read_plan(item));
  return out;
}

}  // namespace

void write_outcome_json(std::ostream& out, const SweepOutcome& o) {
  report::JsonWriter w(out);
  w.begin_object().key("format").value(kFormat).key("version").value(kVersion);
  w.key("scenario").value(o.scenario).key("fingerprint").value(o.fingerprint);
  w.key("enumerated").value(static_cast<std::int64_t>(o.enumerated)).key("shard_count").value(o.shard_count);
  w.key("shards").begin_array();
  for (int k : o.shards) w.value(k);
  w.end_array();
  w.key("tried").value(static_cast<std::int64_t>(o.tried)).key("invalid").value(static_cast<std::int64_t>(o.invalid));
  w.key("not_run").value(static_cast<std::int64_t>(o.not_run)).key("interrupted").value(o.interrupted);
  w.key("out_of_memory").value(static_cast<std::int64_t>(o.out_of_memory()));
  w.key("fits").value(static_cast<std::int64_t>(o.fits()));
  w.key("results").begin_array();
  for (const PlanResult& p : o.results) {
    w.line_break().begin_object().key("index").value(static_cast<std::int64_t>(p.index));
    report::write_result_fields(w, p.result);
    w.end_object();
  }
  w.line_break().end_array().end_object();
  out << "\n";
}

SweepOutcome read_outcome_json(const std::string& path) {
  return read_outcome(config::YamlDocument::load_file(path));
}

SweepOutcome read_outcome_json_text(const std::string& text, const std::string& name) {
  return read_outcome(config::YamlDocument::load_string(text, name));
}

}  // namespace stepsim::sweep
