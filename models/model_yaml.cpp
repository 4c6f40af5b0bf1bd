#include "models/model_yaml.hpp"

#include <algorithm>
#include <filesystem>

#include "sim/config/paths.hpp"

namespace stepsim::models {
namespace {

namespace fs = std::filesystem;
using config::ConfigError;
using config::Field;

const std::vector<std::string> kModelKeys{
    "name",       "source",  "published_params", "layers",          "hidden",   "heads",
    "kv_heads",   "head_dim", "ffn_hidden",      "vocab",           "max_seq",  "activation",
    "norm",       "position", "tied_embeddings", "bias",            "qkv_bias", "norm_bias",
    "dropout",    "preset"};

fs::path presets_dir() { return fs::path(STEPSIM_DATA_DIR) / "models" / "presets"; }

bool looks_like_path(const std::string& s) {
  const auto ext = fs::path(s).extension().string();
  return s.find('/') != std::string::npos || ext == ".yaml" || ext == ".yml" || ext == ".json";
}

std::string stem_of(const std::string& path) { return fs::path(path).stem().string(); }

ModelSpec read_document(const std::string& path) {
  const auto doc = config::YamlDocument::load_file(path);
  const Field root = doc.root();
  if (is_hf_config(root)) return read_hf_config(root, stem_of(path));
  return read_model_yaml(root, stem_of(path));
}

std::string unknown_model_message(const std::string& name) {
  const auto names = model_preset_names();
  std::string message = "unknown model '" + name + "'";
  const std::string suggestion = config::closest_match(name, names);
  if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
  message += " Presets: ";
  for (std::size_t i = 0; i < names.size(); ++i) message += (i ? ", " : "") + names[i];
  return message + "; or give a path to a model YAML or a HuggingFace config.json";
}

template <typename Enum>
Enum read_enum(const Field& f, const std::vector<std::pair<std::string, Enum>>& values) {
  std::vector<std::string> names;
  for (const auto& [name, value] : values) names.push_back(name);
  const std::string chosen = f.as_choice(names);
  for (const auto& [name, value] : values)
    if (name == chosen) return value;
  return values.front().second;
}

int as_int32(const Field& f) {
  const std::int64_t v = f.as_positive_int();
  if (v > 1'000'000'000) f.fail("expected a positive integer below 10^9, found " + f.found());
  return static_cast<int>(v);
}

void apply_shape_keys(const Field& root, ModelSpec& m) {
  if (auto f = root.optional("layers")) m.layers = as_int32(*f);
  if (auto f = root.optional("hidden")) m.hidden = f->as_positive_int();
  if (auto f = root.optional("heads")) m.heads = as_int32(*f);
  if (auto f = root.optional("kv_heads")) m.kv_heads = as_int32(*f);
  if (auto f = root.optional("head_dim")) m.head_dim = f->as_positive_int();
  if (auto f = root.optional("ffn_hidden")) m.ffn_hidden = f->as_positive_int();
  if (auto f = root.optional("vocab")) m.vocab = f->as_positive_int();
  if (auto f = root.optional("max_seq")) m.max_seq = f->as_positive_int();
}

void apply_kind_keys(const Field& root, ModelSpec& m) {
  if (auto f = root.optional("activation"))
    m.activation = read_enum<Activation>(*f, {{"gelu", Activation::gelu}, {"swiglu", Activation::swiglu}});
  if (auto f = root.optional("norm"))
    m.norm = read_enum<Norm>(*f, {{"layernorm", Norm::layernorm}, {"rmsnorm", Norm::rmsnorm}});
  if (auto f = root.optional("position"))
    m.position = read_enum<Position>(*f, {{"learned", Position::learned}, {"rotary", Position::rotary},
                                          {"alibi", Position::alibi}, {"none", Position::none}});
  if (auto f = root.optional("tied_embeddings")) m.tied_embeddings = f->as_bool();
  if (auto f = root.optional("bias")) m.linear_bias = m.qkv_bias = m.norm_bias = f->as_bool();
  if (auto f = root.optional("qkv_bias")) m.qkv_bias = f->as_bool();
  if (auto f = root.optional("norm_bias")) m.norm_bias = f->as_bool();
  if (auto f = root.optional("dropout")) m.dropout = f->as_bool();
}

// Fills what a file may leave out; `fresh` when no preset gave a base to override.
void fill_defaults(const Field& root, ModelSpec& m, bool fresh) {
  const auto required = {"layers", "hidden", "heads", "vocab"};
  if (fresh)
    for (const char* key : required) root.required(key);
  if (fresh || root.has("heads")) {
    if (!root.has("kv_heads")) m.kv_heads = m.heads;
  }
  if ((fresh || root.has("hidden") || root.has("heads")) && !root.has("head_dim"))
    m.head_dim = m.heads > 0 ? m.hidden / m.heads : 0;
  if ((fresh || root.has("hidden")) && !root.has("ffn_hidden")) m.ffn_hidden = 4 * m.hidden;
}

}  // namespace

bool is_hf_config(const Field& root) {
  return root.is_map() && (root.has("model_type") || root.has("architectures"));
}

void validate_model(const ModelSpec& m, const Field& where) {
  auto at = [&](const char* key) { return where.optional(key).value_or(where); };
  if (m.head_dim <= 0 || (!where.has("head_dim") && m.head_dim * m.heads != m.hidden))
    at("heads").fail("hidden " + std::to_string(m.hidden) + " is not a multiple of heads " +
                     std::to_string(m.heads) + "; give head_dim");
  if (m.heads % m.kv_heads != 0)
    at("kv_heads").fail("expected a divisor of heads (" + std::to_string(m.heads) + "), found '" +
                        std::to_string(m.kv_heads) + "'");
  if (m.position == Position::learned && m.max_seq <= 0)
    at("position").fail("learned position embeddings need max_seq (rows of the position table)");
}

ModelSpec read_model_yaml(const Field& root, const std::string& default_name) {
  root.check_keys(kModelKeys);
  ModelSpec m;
  bool fresh = true;
  if (auto preset = root.optional("preset")) {
    m = read_model(*preset);
    fresh = false;
  }
  m.name = root.has("name") ? root.required("name").as_string() : (fresh ? default_name : m.name);
  if (auto f = root.optional("source")) m.source = f->as_string();
  if (auto f = root.optional("published_params")) m.published_params = f->as_count();
  apply_shape_keys(root, m);
  apply_kind_keys(root, m);
  fill_defaults(root, m, fresh);
  validate_model(m, root);
  return m;
}

ModelSpec load_model(const std::string& preset_or_path) {
  if (looks_like_path(preset_or_path)) return read_document(preset_or_path);
  const fs::path preset = presets_dir() / (preset_or_path + ".yaml");
  if (!preset_or_path.empty() && config::path_exists(preset)) return read_document(preset.string());
  throw ConfigError({}, "", unknown_model_message(preset_or_path));
}

ModelSpec read_model(const Field& field) {
  if (field.is_map()) return read_model_yaml(field, "model");
  const std::string text = field.as_string();
  if (!looks_like_path(text)) {
    const fs::path preset = presets_dir() / (text + ".yaml");
    if (text.empty() || !config::path_exists(preset)) field.fail(unknown_model_message(text));
    return read_document(preset.string());
  }
  fs::path path(text);
  if (path.is_relative() && !config::path_exists(path)) {
    const fs::path beside = fs::path(field.file()).parent_path() / path;
    if (config::path_exists(beside)) path = beside;
  }
  if (!config::path_exists(path)) field.fail("no model file '" + text + "' (relative paths are tried from the working "
                                    "directory and next to " + field.file() + ")");
  return read_document(path.string());
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(presets_dir(), ec))
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace stepsim::models
