#include "tasks/token_text_task.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "autograd/node.h"
#include "nn/functional.h"
#include "tensor/error.h"

namespace ropegrad::tasks {

std::string validation_path_for(const std::string& train_path) {
  const std::filesystem::path p(train_path);
  std::string name = p.filename().string();
  const size_t at = name.rfind("train");
  RG_CHECK(at != std::string::npos, "text", "--data {}: the training ids' file name must contain 'train' (its "
           "validation file is the same name with 'valid')", train_path);
  name.replace(at, 5, "valid");
  return (p.parent_path() / name).string();
}

TokenTextTask::TokenTextTask(const std::string& tokenizer_dir, const std::string& train_path, int64_t context_length)
    : tokenizer_(tok::load_tokenizer(tokenizer_dir)), context_(context_length) {
  RG_CHECK(context_length > 0, "text", "context length {} must be positive", context_length);
  const std::string valid = validation_path_for(train_path);
  train_ = std::make_unique<nn::TokenMemmap>(train_path);
  RG_CHECK(std::filesystem::exists(valid), "text", "no validation ids {} beside {}", valid, train_path);
  valid_ = std::make_unique<nn::TokenMemmap>(valid);
  // Every id must be a token of this tokenizer; checked once, by scanning the mapping.
  for (const nn::TokenMemmap* ids : {train_.get(), valid_.get()}) {
    for (int64_t i = 0; i < ids->size(); ++i) {
      const int64_t id = ids->at(i);
      RG_CHECK(id >= 0 && id < vocab_size(), "text", "{}: token id {} at position {} is outside the tokenizer's [0, {})",
               ids->path(), id, i, vocab_size());
    }
  }
}

Batch TokenTextTask::batch(int64_t b, Generator& gen) const {
  auto [x, y] = train_->get_batch(b, context_, gen);
  return {x, y, ones({b, context_}, DType::Bool)};
}

Batch TokenTextTask::eval_batch(int64_t b, Generator& gen) const {
  auto [x, y] = valid_->get_batch(b, context_, gen);
  return {x, y, ones({b, context_}, DType::Bool)};
}

double TokenTextTask::metric(const Tensor& logits, const Batch& batch) const {
  NoGradGuard no_grad;
  return std::exp(nn::cross_entropy(logits, batch.targets).item<double>());
}

std::string tokenizer_of_run(const std::string& run_dir) {
  std::ifstream in(run_dir + "/config.txt");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("tokenizer=", 0) == 0) return line.substr(10);
  return "";
}

}  // namespace ropegrad::tasks

namespace ropegrad::tasks {
std::unique_ptr<Task> make_token_text_task(const TaskOptions& o, int64_t context) {
  RG_CHECK(!o.data_path.empty(), "text", "--tokenizer needs --data TRAIN_IDS.npy (from `ropegrad tokenize encode`)");
  return std::make_unique<TokenTextTask>(o.tokenizer_dir, o.data_path, context);
}
}  // namespace ropegrad::tasks
