// A decoder-only transformer as the simulator sees it: its shape, and the parameter counts that
// follow from it. Plain data; read from presets, model YAML or a HuggingFace config.json by
// model_yaml.hpp. Counts are exact integers (no rounding); FLOPs and bytes live in layer_ops.hpp.
//
// Invariants (checked by the readers): layers, hidden, heads, kv_heads, head_dim, ffn_hidden,
// vocab > 0; heads % kv_heads == 0; max_seq > 0 when position == learned; with experts:
// 1 <= top_k <= experts, expert_ffn > 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stepsim::models {

/// MLP kind. GELU: two matrices h→f→h. SwiGLU: three (gate, up, down), silu(gate)·up. GeGLU:
/// the same three with gelu(gate)·up (Shazeer 2020; Gemma).
enum class Activation { gelu, swiglu, geglu };
/// A gated MLP: three matrices, the activation reading two inputs.
inline bool is_gated(Activation a) { return a != Activation::gelu; }
enum class Norm { layernorm, rmsnorm };
/// Learned absolute positions add a max_seq × hidden table; the others add no parameters.
enum class Position { learned, rotary, alibi, none };

/// A mixture-of-experts MLP in every layer (Shazeer et al. 2017; Fedus et al. 2022, Switch
/// Transformers): a linear router sends each token to top_k of `experts` MLPs of width expert_ffn
/// and sums their outputs weighted by its gate; a shared expert MLP of width shared_ffn runs on
/// every token (DeepSeekMoE; Qwen2-MoE, whose shared expert has a sigmoid gate). Parameters count
/// every expert; FLOPs and activations per token count the k it runs. experts == 0: a dense MLP
/// of width ffn_hidden.
struct MoeSpec {
  int experts = 0;                  ///< routed experts E per layer
  int top_k = 0;                    ///< experts each token runs, k
  std::int64_t expert_ffn = 0;      ///< width of one routed expert's MLP
  std::int64_t shared_ffn = 0;      ///< width of the shared expert MLP (all shared experts); 0 = none
  bool shared_gate = false;         ///< sigmoid(x·w) scales the shared expert's output (Qwen2-MoE)
  /// Expert buffers of ceil(capacity_factor·T·k/E) rows, padded when short, tokens past it
  /// dropped (GShard, Lepikhin et al. 2020; DeepSpeed-MoE); 0 = dropless, every routed token runs
  /// (Megatron-Core's default).
  double capacity_factor = 0;
  /// Routed tokens of the busiest expert-parallel rank over the mean (1 = balanced, the default:
  /// Megatron-Core's auxiliary loss aims there). Under EP the all-to-all waits for the busiest
  /// rank, so every rank is costed at its load; without EP a rank runs every expert and the sum
  /// is what counts.
  double load_imbalance = 1;
  /// The first dense_layers layers keep a dense MLP of width ffn_hidden (DeepSeek-V2/V3's
  /// first_k_dense_replace); the rest are MoE layers.
  int dense_layers = 0;
  /// A per-expert bias added to the routing scores (DeepSeek-V3's e_score_correction_bias for its
  /// auxiliary-loss-free balancing): E more parameters a layer.
  bool router_bias = false;

  bool enabled() const { return experts > 0; }
  auto operator<=>(const MoeSpec&) const = default;
};

/// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434 §2.1): keys and values come up
/// from a kv_lora_rank-wide latent, queries from a q_lora_rank-wide one (0: straight from the
/// hidden state); each head's query and key have qk_nope_head_dim dims plus qk_rope_head_dim
/// rotary ones (one rotary key shared by all heads), its value v_head_dim. kv_lora_rank == 0: the
/// model uses ordinary multi-head / grouped-query attention.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;

  bool enabled() const { return kv_lora_rank > 0; }
  auto operator<=>(const MlaSpec&) const = default;
};

struct ModelSpec {
  std::string name;                    ///< preset or file name, for reports
  std::string source;                  ///< citation of the architecture numbers
  /// Fields of the file that change the cost of training and that stepsim does not model, each
  /// with its position and what is costed instead ("config.json:18:3: sliding_window 4096 ...");
  /// the commands print them as warnings.
  std::vector<std::string> unmodelled{};
  double published_params = 0;         ///< the count the source quotes; 0 = none quoted
  double published_active_params = 0;  ///< active parameters per token it quotes (MoE); 0 = none
  int layers = 0;                      ///< transformer layers L
  std::int64_t hidden = 0;             ///< model width h
  int heads = 0;                       ///< query heads a
  int kv_heads = 0;                    ///< key/value heads g (GQA: g < a; MHA: g == a)
  std::int64_t head_dim = 0;           ///< d; usually h / a
  std::int64_t ffn_hidden = 0;         ///< MLP width f
  std::int64_t vocab = 0;              ///< V, as padded by the framework
  std::int64_t max_seq = 0;            ///< rows of a learned position table; 0 = none
  Activation activation = Activation::gelu;
  Norm norm = Norm::layernorm;
  Position position = Position::learned;
  bool tied_embeddings = true;         ///< logits reuse the input embedding matrix
  bool linear_bias = true;             ///< biases on output projection and MLP matrices
  bool qkv_bias = true;                ///< biases on the QKV projection (Qwen2: yes, Llama: no)
  bool norm_bias = true;               ///< LayerNorm has a bias (beta); RMSNorm never does
  bool qk_norm = false;                ///< RMSNorm of d weights on each query and key head (Qwen3)
  /// A norm on the attention's and the MLP's output too, before each residual add: four norms a
  /// layer instead of two (Gemma-2 and Gemma-3: post_attention_layernorm, post_feedforward_layernorm).
  bool sandwich_norm = false;
  bool dropout = true;                 ///< attention and hidden dropout run (GPT/Megatron: yes)
  MoeSpec moe{};                       ///< experts instead of the dense MLP when moe.enabled()
  MlaSpec mla{};                       ///< latent attention instead of QKV when mla.enabled()
  /// Local (sliding-window) attention: each query attends to the last attention_window tokens,
  /// itself included (Beltagy et al. 2020; Mistral 7B, Jiang et al. 2023); 0 = none.
  std::int64_t attention_window = 0;
  /// With a window, every global_attention_every-th layer (layers n−1, 2n−1, …) attends to the
  /// whole sequence instead: Gemma-2 alternates (2), Gemma-3 keeps one in six (6); 0 = every
  /// layer local.
  int global_attention_every = 0;
  /// Multi-token prediction depths (DeepSeek-V3 report §2.2; Megatron-Core --mtp-num-layers): each
  /// predicts one token further, from the previous depth's hidden state and the next token's
  /// embedding: two RMSNorms, a 2h → h projection, one transformer layer of the last layer's kind,
  /// and the shared output head and loss again. Not in total_params() (DeepSeek's "671B without
  /// the 14B MTP module"): mtp_params(). 0 = none.
  int mtp_layers = 0;
  /// With a window, the first global_first_layers layers attend to the whole sequence and the
  /// rest are local (Qwen2's use_sliding_window from layer max_window_layers on); 0 = none.
  int global_first_layers = 0;

  auto operator<=>(const ModelSpec&) const = default;
};

const char* to_string(Activation a);
const char* to_string(Norm n);
const char* to_string(Position p);

// --- parameter counts (whole model, no parallelism) ---------------------------------------------

/// Q, K, V and output projection weights and biases of one layer: h·(a·d) + 2·h·(g·d) + (a·d)·h.
/// With latent attention: the down projections (h·r_q, h·(r_kv + d_rope)), their norms (r_q, r_kv)
/// and the up projections (r_q·a·d_qk, r_kv·a·(d_nope + d_v)), and the output a·d_v·h.
std::int64_t attention_params(const ModelSpec& m);
/// Dims of one head's query and key (d, or d_nope + d_rope with latent attention) and of its value.
std::int64_t qk_head_dim(const ModelSpec& m);
std::int64_t v_head_dim(const ModelSpec& m);
/// MLP weights and biases of one MoE layer (of a dense one in a dense model): 2·h·f (GELU) or
/// 3·h·f (gated), plus biases. With experts: the router h·E, E expert MLPs of width expert_ffn,
/// the shared expert and its gate.
std::int64_t mlp_params(const ModelSpec& m);
/// The MLP parameters one token runs through in that layer: mlp_params() with k of the E experts.
std::int64_t active_mlp_params(const ModelSpec& m);
/// One norm's weights: h (RMSNorm, or LayerNorm without bias) or 2h.
std::int64_t norm_params(const ModelSpec& m);
/// Norms in one layer: 2, or 4 with sandwich_norm.
int norms_per_layer(const ModelSpec& m);
/// Whether layer `layer` (0-based) runs experts: a MoE model's layers past moe.dense_layers.
bool is_moe_layer(const ModelSpec& m, int layer);
/// One transformer layer: attention + MLP + two norms, four with sandwich_norm (+ the q/k norms,
/// 2d, with qk_norm). Without `layer`: the model's last layer (a MoE layer in a MoE model).
std::int64_t params_per_layer(const ModelSpec& m, int layer);
std::int64_t params_per_layer(const ModelSpec& m);
/// Token (V·h) plus learned position (max_seq·h) tables.
std::int64_t embedding_params(const ModelSpec& m);
/// Output projection V·h when untied, else 0; plus the final norm.
std::int64_t head_params(const ModelSpec& m);
/// Everything: embedding + L layers + final norm + untied output projection.
std::int64_t total_params(const ModelSpec& m);
/// The multi-token-prediction module's own weights, mtp_layers × (two norms + the 2h·h projection
/// + a layer of the last layer's kind + its final norm); the embedding and output head it uses
/// are the model's.
std::int64_t mtp_params(const ModelSpec& m);
/// Those one TP rank holds: the norms replicated, the projection and the layer split t ways as
/// params_per_layer_per_rank() splits a layer.
std::int64_t mtp_params_per_rank(const ModelSpec& m, int tp);
/// What one token runs through ("active parameters" of a MoE model card): total_params() with
/// active_mlp_params() per layer. Equal to total_params() for a dense model.
std::int64_t active_params(const ModelSpec& m);
/// Keys a query of layer `layer` (0-based) attends to: attention_window in a local layer, 0
/// (every earlier token) in a global one or a model without a window. Layer n−1, 2n−1, … of a
/// model with global_attention_every n is global, as transformers' Gemma2DecoderLayer (n = 2,
/// `not bool(layer_idx % 2)` local) and Gemma3 (`(layer_idx + 1) % sliding_window_pattern`) have it;
/// so are layers below global_first_layers (Qwen2: `layer_idx >= max_window_layers` slides).
std::int64_t attention_window(const ModelSpec& m, int layer);
/// Parameters one TP rank holds of one layer: the matrices (and column-parallel biases) split t
/// ways, norms and row-parallel biases replicated (Megatron-LM's layout). Without `layer`: the
/// last layer.
std::int64_t params_per_layer_per_rank(const ModelSpec& m, int layer, int tp);
std::int64_t params_per_layer_per_rank(const ModelSpec& m, int tp);

}  // namespace stepsim::models
