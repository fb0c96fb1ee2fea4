// Training checkpoints: a model's state_dict, the optimizer's state and the
// step, in one safetensors file (io/safetensors.h), so a run can stop and
// resume exactly, and the weights open in any safetensors reader.
//
//   tensors   "model.<name>"      every parameter and persistent buffer
//             "optimizer.<name>"  the optimizer's state_dict (optim/optim.h): "optimizer.step", "optimizer.lr",
//                                 its settings ("optimizer.settings.beta2", ...), "optimizer.state.0.exp_avg", ...
//   metadata  {"format": "ropegrad-checkpoint-1", "step": "1200", "metadata_crc32": "<8 hex digits>"}
//
// The tensors carry CRC-32s (io/safetensors.h); "metadata_crc32" covers the
// other metadata entries, so a step edited by hand is refused rather than
// resumed from with another step's optimizer state. Checkpoints written
// before it have none: they load, their step checked against its range only
// (train cross-checks it with the optimizer's own step count).
//
// Checkpoints written before the settings were saved have no
// "optimizer.settings.*": they load, and the optimizer they are loaded into
// keeps its own settings (Optimizer::load_state_dict cannot check them).
#pragma once

#include <cstdint>
#include <string>

#include "io/field_rule.h"
#include "nn/module.h"

namespace ropegrad::nn {

inline constexpr const char* kCheckpointFormat = "ropegrad-checkpoint-1";

// The most steps a run may have (train refuses --steps above it): 10^12,
// far beyond any run, and far from int64's end, so step + 1 and the
// schedule's arithmetic never overflow.
inline constexpr int64_t kMaxSteps = 1'000'000'000'000;
// The metadata's "step" (train/run_files.h declares the run files' other fields).
inline constexpr FieldRule kCheckpointStepRule = FieldRule::whole(0, kMaxSteps, "steps");

// Writes atomically (through "<path>.tmp", like save_safetensors). step in
// 0..kMaxSteps. The metadata gets its checksum, "metadata_crc32".
void save_checkpoint(const std::string& path, const Module& model, const StateDict& optimizer_state,
                     int64_t step);

// Loads the model strictly (load_state_dict: every key present, none extra,
// shapes equal; errors name the keys), replaces *optimizer_state with the
// saved optimizer state (names without the prefix) when non-null, and returns
// the step. A file that is not a ropegrad checkpoint is an Error saying so,
// and so are a step outside kCheckpointStepRule and metadata that fails its
// checksum (each naming the file); on any error neither the model nor
// *optimizer_state is changed.
int64_t load_checkpoint(const std::string& path, Module& model, StateDict* optimizer_state);

}  // namespace ropegrad::nn
