#include "nn/checkpoint.h"

#include <string_view>

#include "nn/safetensors.h"

namespace ropegrad::nn {

namespace {

constexpr std::string_view kModelPrefix = "model.";
constexpr std::string_view kOptimizerPrefix = "optimizer.";
}  // namespace

void save_checkpoint(const std::string& path, const Module& model, const StateDict& optimizer_state,
                     int64_t step) {
  RG_CHECK(step >= 0 && step <= kMaxSteps, "save_checkpoint", "'{}': step must be in 0..{}, got {}", path, kMaxSteps,
           step);
  StateDict all;
  for (const auto& [name, t] : model.state_dict()) all.emplace(std::string(kModelPrefix) + name, t);
  for (const auto& [name, t] : optimizer_state) all.emplace(std::string(kOptimizerPrefix) + name, t);
  save_safetensors(path, all, {{"format", kCheckpointFormat}, {"step", std::to_string(step)}});
}

int64_t load_checkpoint(const std::string& path, Module& model, StateDict* optimizer_state) {
  SafetensorsFile file = load_safetensors(path);

  const auto format = file.metadata.find("format");
  RG_CHECK(format != file.metadata.end(), "load_checkpoint",
           "'{}' is not a ropegrad checkpoint (its metadata has no 'format'; expected '{}')", path,
           kCheckpointFormat);
  RG_CHECK(format->second == kCheckpointFormat, "load_checkpoint",
           "'{}' is not a ropegrad checkpoint this version reads (format '{}', expected '{}')", path,
           format->second, kCheckpointFormat);
  const auto step_entry = file.metadata.find("step");
  RG_CHECK(step_entry != file.metadata.end(), "load_checkpoint", "'{}': checkpoint metadata has no 'step'",
           path);
  const int64_t step = read_whole_field("load_checkpoint", fmt::format("'{}'", path), 0, "the metadata's step",
                                        step_entry->second, kCheckpointStepRule);

  StateDict model_state, optim_state;
  for (auto& [name, t] : file.tensors) {
    const std::string_view n = name;
    if (n.starts_with(kModelPrefix)) {
      model_state.emplace(name.substr(kModelPrefix.size()), std::move(t));
    } else if (n.starts_with(kOptimizerPrefix)) {
      optim_state.emplace(name.substr(kOptimizerPrefix.size()), std::move(t));
    } else {
      fail("load_checkpoint", "'{}': tensor '{}' is neither 'model.*' nor 'optimizer.*'", path, name);
    }
  }

  // load_state_dict checks every key and shape before it copies anything.
  try {
    model.load_state_dict(model_state, /*strict=*/true);
  } catch (const Error& e) {
    fail("load_checkpoint", "'{}': {}", path, e.what());
  }
  if (optimizer_state != nullptr) *optimizer_state = std::move(optim_state);
  return step;
}

}  // namespace ropegrad::nn
