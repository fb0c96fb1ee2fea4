// Training checkpoints: a model's state_dict, the optimizer's state and the
// step, in one safetensors file (nn/safetensors.h), so a run can stop and
// resume exactly, and the weights open in any safetensors reader.
//
//   tensors   "model.<name>"      every parameter and persistent buffer
//             "optimizer.<name>"  the optimizer's state_dict (nn/optim.h): "optimizer.step", "optimizer.lr",
//                                 its settings ("optimizer.settings.beta2", ...), "optimizer.state.0.exp_avg", ...
//   metadata  {"format": "ropegrad-checkpoint-1", "step": "1200"}
//
// Checkpoints written before the settings were saved have no
// "optimizer.settings.*": they load, and the optimizer they are loaded into
// keeps its own settings (Optimizer::load_state_dict cannot check them).
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"

namespace ropegrad::nn {

inline constexpr const char* kCheckpointFormat = "ropegrad-checkpoint-1";

// Writes atomically (through "<path>.tmp", like save_safetensors). step >= 0.
void save_checkpoint(const std::string& path, const Module& model, const StateDict& optimizer_state,
                     int64_t step);

// Loads the model strictly (load_state_dict: every key present, none extra,
// shapes equal; errors name the keys), replaces *optimizer_state with the
// saved optimizer state (names without the prefix) when non-null, and returns
// the step. A file that is not a ropegrad checkpoint is an Error saying so;
// on any error neither the model nor *optimizer_state is changed.
int64_t load_checkpoint(const std::string& path, Module& model, StateDict* optimizer_state);

}  // namespace ropegrad::nn
