#include "sim/plan/megatron_arg_table.hpp"

#include <algorithm>
#include <tuple>

#include "sim/config/config_error.hpp"
#include "sim/plan/megatron_flags.hpp"

namespace stepsim::plan {

using config::ShellWord;

// Every --flag of the file, in order; a flag stepsim reads that is given twice must say the same
// both times.
MegatronArgTable::MegatronArgTable(const config::ShellScript& script) : script_(script) {
  const auto& words = script_.words;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const ShellWord& w = words[i];
    if (w.text.size() < 3 || w.text.compare(0, 2, "--") != 0) continue;
    MegatronArg a;
    a.pos = w.pos();
    const std::size_t eq = w.text.find('=');
    a.name = w.text.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (eq != std::string::npos) {
      ShellWord v;
      v.text = w.text.substr(eq + 1);
      v.at.assign(w.at.begin() + static_cast<std::ptrdiff_t>(eq + 1), w.at.end());
      if (is_listed(a.name)) a.list.push_back(v);
      else a.value = v;
    } else if (is_valued(a.name) && i + 1 < words.size() && words[i + 1].text.compare(0, 2, "--") != 0) {
      a.value = words[++i];
    } else if (is_listed(a.name)) {
      while (i + 1 < words.size() && is_list_word(words[i + 1].text)) a.list.push_back(words[++i]);
    }
    if (is_valued(a.name) && !a.value) fail(a.pos, a.name, "expected a value after --" + a.name + ", found none");
    if (auto it = index_.find(a.name);
        it != index_.end() && (is_valued(a.name) || is_switch(a.name) || is_listed(a.name))) {
      const MegatronArg& first = args_[it->second];
      if (is_listed(a.name)) fail(a.pos, a.name, "given twice (first at " + config::to_string(first.pos) + ")");
      if (first.value && a.value && text(first) != text(a))
        fail(a.value->pos(), a.name, "given twice with different values: " + text(first) + " at " +
                                         config::to_string(first.value->pos()) + ", " + text(a) + " here");
      continue;
    }
    index_.emplace(a.name, args_.size());
    args_.push_back(a);
  }
}

void MegatronArgTable::fail(const config::SourcePos& pos, const std::string& name, const std::string& message) {
  throw config::ConfigError(pos, "--" + name, message);
}

std::vector<std::string> MegatronArgTable::notes_in_file_order() const {
  auto sorted = notes_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.line, a.first.column) < std::tie(b.first.line, b.first.column);
  });
  std::vector<std::string> out;
  for (const auto& [pos, text] : sorted) out.push_back(config::to_string(pos) + ": " + text);
  return out;
}

std::string MegatronArgTable::text(const MegatronArg& a) const {
  std::string why;
  const auto v = script_.expand(a.value->text, a.value->pos(), why);
  if (!v) fail(a.value->pos(), a.name, "expected a value stepsim can read without running the script: " + why);
  return *v;
}

std::int64_t MegatronArgTable::integer(const MegatronArg& a, std::int64_t low, std::int64_t high) const {
  const std::string t = text(a);
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != t.size() || t.empty() || v < low || v > high)
    fail(a.value->pos(), a.name, "expected an integer from " + std::to_string(low) + " to " + std::to_string(high) +
                                     ", found '" + t + "'");
  return v;
}

}  // namespace stepsim::plan
