// The safetensors format (huggingface/safetensors), written from its spec:
// how ropegrad saves models and checkpoints, readable by any safetensors
// library (and by tests/read_safetensors.py with numpy alone).
//
// Layout:
//   8 bytes   N, the header length, unsigned little-endian
//   N bytes   UTF-8 JSON, padded with spaces to a multiple of 8:
//             {"__metadata__": {"step": "100"},
//              "layers.0.weight": {"dtype": "F32", "shape": [4, 3], "data_offsets": [0, 48]}, ...}
//   the rest  the data section: each tensor's row-major little-endian bytes;
//             data_offsets are [begin, end) relative to the data section, and
//             together they cover it exactly, without gaps or overlaps.
//
// dtypes: F32 (float32), F64 (float64), I64 (int64), BOOL (one byte, 0 or 1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "nn/module.h"

namespace ropegrad::nn {

struct SafetensorsFile {
  StateDict tensors;                            // name -> a fresh contiguous tensor
  std::map<std::string, std::string> metadata;  // "__metadata__"; empty when absent
};

// Writes `tensors` (any strides; stored row-major) and `metadata`. The bytes
// go to "<path>.tmp", are fsynced, then renamed over <path>: a crash leaves
// either the old file or the new one, never half of one.
void save_safetensors(const std::string& path, const StateDict& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads and validates a whole file. A missing, truncated or malformed file
// (bad JSON, unknown dtype, offsets that do not match the shape, overlap,
// leave gaps or run past the end, duplicate names) is an Error that names the
// file and the problem; nothing is read out of bounds.
SafetensorsFile load_safetensors(const std::string& path);

// CRC-32 (IEEE 802.3, the checksum of zip and PNG) of `size` bytes, continued
// from `crc`: each tensor's checksum here, the metadata's in io/checkpoint.h.
uint32_t crc32(const unsigned char* data, size_t size, uint32_t crc = 0);

}  // namespace ropegrad::nn
