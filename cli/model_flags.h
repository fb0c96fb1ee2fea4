// The model shape's flags: one range each for every command that takes a
// shape (`ropegrad train` and `compare`, and `account` and `dp-simulate`,
// which count from one), and the shape `account` and `dp-simulate` read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/transformer.h"
#include "io/flags.h"

namespace ropegrad::tasks {

// Each count the accounting makes from a shape stays within int64
// (nn/accounting.h: the largest, the feed-forward's d_model x d_ff x layers
// x 3, is 3e18 at these maxima); the context is 2^20 tokens.
inline constexpr int64_t kMaxVocab = 100000000;
inline constexpr int64_t kMaxDModel = 1000000;
inline constexpr int64_t kMaxLayers = 100000;
inline constexpr int64_t kMaxHeads = 1000000;
inline constexpr int64_t kMaxDff = 10000000;
inline constexpr int64_t kMaxBatch = 1000000000;
inline constexpr int64_t kMaxContext = 1048576;

// --preset, --vocab, --d-model, --layers, --heads, --d-ff, --attention,
// --sigma and --tie, as `account` and `dp-simulate` take them.
std::vector<flags::Flag> shape_flags();

// The shape of those flags (a preset's, changed by the flags given); its
// context length is --preset's (1024) or 128. `title` (when not null): "GPT-2
// small shape" or "model".
nn::TransformerConfig model_from_flags(const flags::Values& v, std::string* title);

}  // namespace ropegrad::tasks
