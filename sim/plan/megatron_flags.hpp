// The Megatron-LM arguments megatron_args.cpp knows, by how it reads them: a value of one word, a
// switch, a list of words, or a flag that changes no step's time. Any other flag is a note.
#pragma once

#include <string>

namespace stepsim::plan {

bool is_valued(const std::string& flag);     ///< --tensor-model-parallel-size 8
bool is_switch(const std::string& flag);     ///< --sequence-parallel
bool is_listed(const std::string& flag);     ///< --recompute-modules core_attn moe_act (nargs='*')
bool has_no_effect(const std::string& flag); ///< --lr, --data-path, launcher flags
/// Whether `word`, after a listed flag, belongs to its list.
bool is_list_word(const std::string& word);

}  // namespace stepsim::plan
