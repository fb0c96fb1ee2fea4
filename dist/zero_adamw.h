// ZeRO stage 1: AdamW with its state sharded across the processes.
//
// The parameters, flattened in registration order, are cut into N
// contiguous element ranges, rank r owning range r (element slices rather
// than whole tensors: every rank gets within one element of the same share,
// where whole tensors would leave the rank holding the embedding with far
// more). Each rank keeps AdamW's m and v for its range only (1/N of the
// state), updates only its range from the full gradient every rank holds
// after the all-reduce (clipping already applied on the whole gradient), and
// the updated ranges are gathered so every rank has every weight. AdamW is
// elementwise: an element's update reads only its own p, g, m and v, so the
// sharded update gives the unsharded one's bits (nn::adamw_update_elements
// is AdamW::step's own loop).
//
// state_dict() gathers the whole state (a collective: every rank calls it),
// in nn::AdamW's keys, so a checkpoint is the file an unsharded run writes
// and --resume works with any N, sharded or not.
#pragma once

#include <cstdint>
#include <vector>

#include "optim/optim.h"
#include "dist/process_group.h"

namespace ropegrad::tasks {

class ZeroAdamW : public nn::Optimizer {
 public:
  ZeroAdamW(std::vector<Tensor> params, nn::AdamWOptions options, ProcessGroup& group);
  std::string type_name() const override { return "AdamW"; }
  void step() override;
  std::vector<nn::OptimizerSetting> settings() const override;
  nn::StateDict state_dict() const override;
  void load_state_dict(const nn::StateDict& state,
                       nn::OptimizerSettingsOnLoad on_settings = nn::OptimizerSettingsOnLoad::must_match) override;

  // This rank's elements [begin, end) of the flattened parameters.
  int64_t begin() const { return begin_; }
  int64_t end() const { return end_; }
  // Bytes of optimizer state this rank holds (m and v of its range).
  int64_t state_bytes() const { return static_cast<int64_t>((m_.size() + v_.size()) * sizeof(float)); }

 private:
  void update_my_range();                  // AdamW on this rank's elements
  Tensor gradient_of(size_t param) const;  // its .grad, contiguous (an Error when it has none)
  void gather_parameters();                // every rank's updated range to every rank
  std::vector<float> gather(const std::vector<float>& mine) const;  // a whole flat vector from the ranges

  ProcessGroup& group_;
  double beta1_, beta2_, eps_, weight_decay_;
  std::vector<int64_t> offset_;  // parameter i's first element in the flat order
  std::vector<int64_t> counts_;  // elements per rank
  int64_t begin_ = 0, end_ = 0, total_ = 0;
  int64_t updates_ = 0;          // AdamW's per-parameter step (every parameter is updated every step)
  std::vector<float> m_, v_;     // this rank's range
};

}  // namespace ropegrad::tasks
