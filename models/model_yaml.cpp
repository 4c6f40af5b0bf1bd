#include "models/model_yaml.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <optional>

#include "sim/config/paths.hpp"
#include "sim/config/yaml_field.hpp"

namespace stepsim::models {
namespace {

namespace fs = std::filesystem;
using config::ConfigError;
using config::Field;

const std::vector<std::string> kModelKeys{
    "name",       "source",  "published_params", "published_active_params", "layers",          "hidden",   "heads",
    "kv_heads",   "head_dim", "ffn_hidden",      "vocab",           "max_seq",  "activation",
    "norm",       "position", "tied_embeddings", "bias",            "qkv_bias", "norm_bias",
    "dropout",    "qk_norm",  "moe",             "preset",          "attention_window", "global_attention_every",
    "sandwich_norm", "mla", "global_first_layers", "mtp_layers"};
const std::vector<std::string> kMlaKeys{"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                        "v_head_dim"};
const std::vector<std::string> kMoeKeys{"experts",     "top_k",           "expert_ffn",    "shared_ffn",
                                        "shared_gate", "capacity_factor", "load_imbalance", "dense_layers", "router_bias"};

fs::path presets_dir() { return fs::path(STEPSIM_DATA_DIR) / "models" / "presets"; }

bool looks_like_path(const std::string& s) {
  const auto ext = fs::path(s).extension().string();
  return s.find('/') != std::string::npos || ext == ".yaml" || ext == ".yml" || ext == ".json";
}

std::string stem_of(const std::string& path) { return fs::path(path).stem().string(); }

// `name`: what the model is called when the file does not say (default: the file's stem).
ModelSpec read_document(const std::string& path, std::string name = {}) {
  if (name.empty()) name = stem_of(path);
  const auto doc = config::YamlDocument::load_file(path);
  const Field root = doc.root();
  if (is_hf_config(root)) return read_hf_config(root, name);
  return read_model_yaml(root, name);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A name as people and the Hugging Face Hub spell it, for comparison: "meta-llama/Llama-2-7b-hf",
// "llama2-7b" and "Llama-2-7B" all become "llama27b"; "mistralai/Mistral-7B-v0.1" becomes
// "mistral7b". Without case, an organisation prefix, "-hf"/"-base" suffixes and those of a tuned
// checkpoint ("-instruct", "-it", "-chat": the base's architecture), a version suffix ("-v0.1"),
// a leading "meta-", and separators.
std::string spelling_key(const std::string& name) {
  std::string s = config::ascii_lower(name);
  if (const auto slash = s.rfind('/'); slash != std::string::npos) s = s.substr(slash + 1);
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const char* tail : {"-hf", "-base", "-instruct", "-it", "-chat"})
      if (ends_with(s, tail)) {
        s.resize(s.size() - std::strlen(tail));
        stripped = true;
      }
  }
  if (const auto v = s.rfind("-v"); v != std::string::npos && v + 2 < s.size() &&
      s.find_first_not_of("0123456789.", v + 2) == std::string::npos)
    s.resize(v);
  if (s.rfind("meta-", 0) == 0) s = s.substr(5);
  std::string key;
  for (char c : s)
    if (c != '-' && c != '_' && c != ' ') key += c;
  return key;
}

// The preset `text` names, exactly or as spelling_key() reads it.
std::optional<std::string> preset_named(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (config::path_exists(presets_dir() / (text + ".yaml"))) return text;
  const std::string key = spelling_key(text);
  for (const auto& name : model_preset_names())
    if (spelling_key(name) == key) return name;
  return std::nullopt;
}

// The size a model name ends with ("7b", "8x7b", "1.5b", "125m"), or "".
std::string size_token(const std::string& name) {
  const std::string s = config::ascii_lower(name);
  const auto dash = s.find_last_of("-_/");
  const std::string last = dash == std::string::npos ? s : s.substr(dash + 1);
  if (last.size() < 2 || (last.back() != 'b' && last.back() != 'm')) return "";
  if (last.find_first_not_of("0123456789.x", 0) != last.size() - 1 || !std::isdigit(static_cast<unsigned char>(last[0])))
    return "";
  return last;
}

std::string unknown_model_message(const std::string& name) {
  const auto names = model_preset_names();
  std::string message = "unknown model '" + name + "'";
  const std::string suggestion = config::closest_match(name, names);
  if (!suggestion.empty()) {
    message += "; did you mean '" + suggestion + "'?";
    // A near spelling of another size is another model ("mixtral-8x7b" is not "mistral-7b").
    const std::string asked = size_token(name), offered = size_token(suggestion);
    if (!asked.empty() && !offered.empty() && asked != offered)
      message += " (that is a model of another size: " + offered + ", not " + asked + ")";
  }
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
  if (auto f = root.optional("attention_window")) m.attention_window = f->as_positive_int();
  if (auto f = root.optional("global_attention_every")) m.global_attention_every = as_int32(*f);
  if (auto f = root.optional("global_first_layers")) m.global_first_layers = as_int32(*f);
  if (auto f = root.optional("mtp_layers")) m.mtp_layers = read_mtp_layers(*f);
}

void apply_kind_keys(const Field& root, ModelSpec& m) {
  if (auto f = root.optional("activation"))
    m.activation = read_enum<Activation>(*f, {{"gelu", Activation::gelu}, {"swiglu", Activation::swiglu},
                                              {"geglu", Activation::geglu}});
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
  if (auto f = root.optional("qk_norm")) m.qk_norm = f->as_bool();
  if (auto f = root.optional("sandwich_norm")) m.sandwich_norm = f->as_bool();
}

// `moe:` — every key optional over a preset's; experts and top_k required for a dense base.
void apply_moe_keys(const Field& root, ModelSpec& m) {
  const auto f = root.optional("moe");
  if (!f) return;
  f->check_keys(kMoeKeys);
  MoeSpec& moe = m.moe;
  if (!moe.enabled())
    for (const char* key : {"experts", "top_k"}) f->required(key);
  if (auto v = f->optional("experts")) moe.experts = as_int32(*v);
  if (auto v = f->optional("top_k")) moe.top_k = as_int32(*v);
  if (auto v = f->optional("expert_ffn")) moe.expert_ffn = v->as_positive_int();
  if (moe.expert_ffn == 0) moe.expert_ffn = m.ffn_hidden;  // Mixtral: every expert as wide as a dense MLP
  if (auto v = f->optional("shared_ffn")) moe.shared_ffn = v->as_positive_int();
  if (auto v = f->optional("shared_gate")) moe.shared_gate = v->as_bool();
  if (auto v = f->optional("capacity_factor")) moe.capacity_factor = v->as_positive_double();
  if (auto v = f->optional("dense_layers")) moe.dense_layers = as_int32(*v);
  if (auto v = f->optional("router_bias")) moe.router_bias = v->as_bool();
  if (auto v = f->optional("load_imbalance")) {
    moe.load_imbalance = v->as_positive_double();
    if (moe.load_imbalance < 1) v->fail("expected the busiest rank's load over the mean, at least 1, found " + v->found());
  }
}

// `mla:` — every width required but q_lora_rank (0: queries straight from the hidden state).
void apply_mla_keys(const Field& root, ModelSpec& m) {
  const auto f = root.optional("mla");
  if (!f) return;
  f->check_keys(kMlaKeys);
  MlaSpec& a = m.mla;
  a.kv_lora_rank = f->required("kv_lora_rank").as_positive_int();
  a.qk_nope_head_dim = f->required("qk_nope_head_dim").as_positive_int();
  a.qk_rope_head_dim = f->required("qk_rope_head_dim").as_positive_int();
  a.v_head_dim = f->required("v_head_dim").as_positive_int();
  a.q_lora_rank = f->has("q_lora_rank") ? f->required("q_lora_rank").as_positive_int() : 0;
  m.kv_heads = m.heads;  // every head expands its own key and value from the latent
  m.head_dim = a.v_head_dim;
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

void validate_model(const ModelSpec& m, const Field& where, bool head_dim_from_split) {
  auto at = [&](const char* key) { return where.optional(key).value_or(where); };
  if (m.head_dim <= 0 ||
      (head_dim_from_split && !where.has("head_dim") && !m.mla.enabled() && m.head_dim * m.heads != m.hidden))
    at("heads").fail("hidden " + std::to_string(m.hidden) + " is not a multiple of heads " +
                     std::to_string(m.heads) + "; give head_dim");
  if (m.heads % m.kv_heads != 0)
    at("kv_heads").fail("expected a divisor of heads (" + std::to_string(m.heads) + "), found '" +
                        std::to_string(m.kv_heads) + "'");
  if (m.global_attention_every > 0 && m.attention_window == 0)
    at("global_attention_every").fail("global layers between local ones need attention_window (the local layers' window in tokens)");
  if (m.global_first_layers > 0 && m.attention_window == 0)
    at("global_first_layers").fail("global layers before local ones need attention_window (the local layers' window in tokens)");
  if (m.position == Position::learned && m.max_seq <= 0)
    at("position").fail("learned position embeddings need max_seq (rows of the position table)");
  if (m.moe.enabled()) {
    const Field moe = at("moe");
    auto in_moe = [&](const char* key) { return moe.is_map() ? moe.optional(key).value_or(moe) : moe; };
    if (m.moe.top_k < 1 || m.moe.top_k > m.moe.experts)
      in_moe("top_k").fail("expected top_k between 1 and the " + std::to_string(m.moe.experts) +
                           " experts, found " + std::to_string(m.moe.top_k));
    if (m.moe.expert_ffn <= 0) in_moe("expert_ffn").fail("expected a positive expert MLP width");
    if (m.moe.dense_layers >= m.layers)
      in_moe("dense_layers").fail("expected fewer dense layers than the " + std::to_string(m.layers) +
                                  " layers (a MoE model runs experts in at least one), found " +
                                  std::to_string(m.moe.dense_layers));
  }
}

int read_mtp_layers(const Field& f) {
  const std::int64_t v = f.as_int();
  if (v < 0 || v > 16) f.fail("expected multi-token-prediction depths from 0 to 16, found " + f.found());
  return static_cast<int>(v);
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
  if (auto f = root.optional("published_active_params")) m.published_active_params = f->as_count();
  apply_shape_keys(root, m);
  apply_kind_keys(root, m);
  fill_defaults(root, m, fresh);
  apply_moe_keys(root, m);
  apply_mla_keys(root, m);
  validate_model(m, root);
  return m;
}

// A file, or a directory holding config.json (what save_pretrained writes), named after the
// directory.
ModelSpec read_model_path(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return read_document(path.string());
  const fs::path config = path / "config.json";
  if (!config::path_exists(config))
    throw ConfigError({path.string(), 0, 0}, "", "a model directory needs a config.json (a HuggingFace model's); none is in it");
  const fs::path dir = path.filename().empty() ? path.parent_path() : path;
  return read_document(config.string(), dir.filename().string());
}

ModelSpec load_model(const std::string& preset_or_path) {
  if (looks_like_path(preset_or_path) && config::path_exists(preset_or_path))
    return read_model_path(preset_or_path);
  if (const auto preset = preset_named(preset_or_path)) return read_document((presets_dir() / (*preset + ".yaml")).string());
  if (looks_like_path(preset_or_path)) return read_document(preset_or_path);  // says the file is missing
  throw ConfigError({}, "", unknown_model_message(preset_or_path));
}

ModelSpec read_model(const Field& field) {
  if (field.is_map()) return read_model_yaml(field, "model");
  const std::string text = field.as_string();
  fs::path path(text);
  if (looks_like_path(text) && path.is_relative() && !config::path_exists(path)) {
    const fs::path beside = fs::path(field.file()).parent_path() / path;
    if (config::path_exists(beside)) path = beside;
  }
  if (looks_like_path(text) && config::path_exists(path)) return read_model_path(path);
  if (const auto preset = preset_named(text)) return read_document((presets_dir() / (*preset + ".yaml")).string());
  if (!looks_like_path(text)) field.fail(unknown_model_message(text));
  field.fail("no model file '" + text + "' (relative paths are tried from the working directory and next to " +
             field.file() + ")");
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
