// Token ids on disk, read through a memory mapping: a 1-D .npy of dtype
// uint16 ('<u2'), int32 ('<i4') or int64 ('<i8'). The loader never reads the
// file whole; get_batch copies only the B * (T + 1) ids it samples.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ropegrad::nn {

class TokenMemmap {
 public:
  // Maps the file and checks its header: magic, version, dtype, C order,
  // a 1-D shape, and that the data size equals what the shape claims.
  explicit TokenMemmap(const std::string& path);
  ~TokenMemmap();
  TokenMemmap(const TokenMemmap&) = delete;
  TokenMemmap& operator=(const TokenMemmap&) = delete;

  int64_t size() const { return count_; }
  int64_t at(int64_t i) const;  // i in [0, size)
  const std::string& path() const { return path_; }

  // (inputs, targets), each (B, T) int64: B windows at uniform random starts,
  // targets shifted by one; the draws of nn::get_batch (tasks/batch.h). A
  // negative id in a window is an Error naming the file and its position.
  std::pair<Tensor, Tensor> get_batch(int64_t batch_size, int64_t context, Generator& gen) const;

  // Every id in [0, vocab_size), or an Error naming the first that is not,
  // its position and `op`. Reads the whole file once.
  void check_ids(int64_t vocab_size, const std::string& op) const;

 private:
  std::string path_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  const unsigned char* data_ = nullptr;
  int64_t count_ = 0;
  int item_bytes_ = 0;  // 2, 4 or 8
};

// Writes a 1-D token-id .npy piece by piece, so that the ids of a text larger
// than memory never have to be held at once (`ropegrad tokenize encode`).
// The dtype is fixed up front from the vocabulary size: '<u2' when every id
// fits in uint16, else '<i4'. The count goes into the header at close(); the
// header is padded to a fixed length so that any count fits. The ids go to
// PATH.<pid>.<random>.tmp (io/tmp_file.h: unique, so two writers never share
// it), which close() flushes to disk and renames to PATH: an interrupted
// or failed write never leaves a truncated .npy under PATH, and the
// destructor of an unclosed writer removes the temporary file.
class TokenIdWriter {
 public:
  TokenIdWriter(const std::string& path, int64_t vocab_size);
  ~TokenIdWriter();
  TokenIdWriter(const TokenIdWriter&) = delete;
  TokenIdWriter& operator=(const TokenIdWriter&) = delete;

  void write(const std::vector<int32_t>& ids);  // each id in [0, vocab_size)
  int64_t count() const { return count_; }
  void close();

 private:
  std::string path_, tmp_path_;
  int fd_ = -1;
  int64_t vocab_size_ = 0, count_ = 0;
  bool small_ = true;
  std::vector<unsigned char> buffer_;
};

// Writes ids as a 1-D .npy: '<u2' when every id fits in uint16, else '<i4'.
void save_token_ids(const std::string& path, const std::vector<int32_t>& ids);

}  // namespace ropegrad::nn
