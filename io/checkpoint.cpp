#include "io/checkpoint.h"

#include <string_view>

#include "io/safetensors.h"

namespace ropegrad::nn {

namespace {

constexpr std::string_view kModelPrefix = "model.";
constexpr std::string_view kOptimizerPrefix = "optimizer.";
constexpr const char* kMetadataCrc = "metadata_crc32";

// CRC-32 of every metadata entry but the checksum itself, in key order, each
// as "<key length>:<key><value length>:<value>" (no separator can be forged).
std::string metadata_checksum(const std::map<std::string, std::string>& metadata) {
  uint32_t crc = 0;
  for (const auto& [key, value] : metadata) {
    if (key == kMetadataCrc) continue;
    const std::string entry = fmt::format("{}:{}{}:{}", key.size(), key, value.size(), value);
    crc = crc32(reinterpret_cast<const unsigned char*>(entry.data()), entry.size(), crc);
  }
  return fmt::format("{:08x}", crc);
}

}  // namespace

void save_checkpoint(const std::string& path, const Module& model, const StateDict& optimizer_state,
                     int64_t step) {
  RG_CHECK(step >= 0 && step <= kMaxSteps, "save_checkpoint", "'{}': step must be in 0..{}, got {}", path, kMaxSteps,
           step);
  StateDict all;
  for (const auto& [name, t] : model.state_dict()) all.emplace(std::string(kModelPrefix) + name, t);
  for (const auto& [name, t] : optimizer_state) all.emplace(std::string(kOptimizerPrefix) + name, t);
  std::map<std::string, std::string> metadata = {{"format", kCheckpointFormat}, {"step", std::to_string(step)}};
  metadata[kMetadataCrc] = metadata_checksum(metadata);
  save_safetensors(path, all, metadata);
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
  // The checksum first: an edited step is named as an edit, not as a bad number.
  const auto crc = file.metadata.find(kMetadataCrc);
  if (crc != file.metadata.end()) {
    const std::string computed = metadata_checksum(file.metadata);
    RG_CHECK(crc->second == computed, "load_checkpoint",
             "'{}': the metadata fails its checksum (CRC-32 {} stored, {} computed; step '{}'): it was edited or is "
             "corrupt, and the step cannot be trusted; resume from another checkpoint or start a new run",
             path, crc->second, computed, step_entry->second.substr(0, 40));
  }
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
