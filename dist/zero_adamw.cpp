#include "dist/zero_adamw.h"

#include <algorithm>

#include "tensor/exercise.h"

namespace ropegrad::tasks {

ZeroAdamW::ZeroAdamW(std::vector<Tensor> params, nn::AdamWOptions o, ProcessGroup& group)
    : Optimizer(std::move(params), o.lr, "ZeroAdamW"),
      group_(group),
      beta1_(o.betas.first),
      beta2_(o.betas.second),
      eps_(o.eps),
      weight_decay_(o.weight_decay) {
  nn::AdamW check(this->params(), o);  // the same checks of the settings as AdamW's
  for (const Tensor& p : this->params()) {
    RG_CHECK(p.dtype() == DType::Float32 && p.is_contiguous(), "ZeroAdamW",
             "needs contiguous float32 parameters, got {} of shape {}", dtype_name(p.dtype()), shape_str(p.shape()));
    offset_.push_back(total_);
    total_ += p.numel();
  }
  const int n = group.size();
  for (int r = 0; r < n; ++r) counts_.push_back(total_ * (r + 1) / n - total_ * r / n);
  begin_ = total_ * group.rank() / n;
  end_ = total_ * (group.rank() + 1) / n;
  m_.assign(static_cast<size_t>(end_ - begin_), 0.0f);
  v_.assign(m_.size(), 0.0f);
}

std::vector<nn::OptimizerSetting> ZeroAdamW::settings() const {
  return {{"beta1", beta1_}, {"beta2", beta2_}, {"eps", eps_}, {"weight_decay", weight_decay_}};
}

// The part of each parameter inside [begin_, end_), with AdamW's update
// (nn::adamw_update_elements: AdamW::step's own loop); m_ and v_ hold this
// rank's range only, m_[0] being element begin_ of the flat order.
void ZeroAdamW::update_my_range() {
  const std::vector<Tensor>& ps = params();
  // BEGIN EXERCISE ex21-zero-adamw
  for (size_t i = 0; i < ps.size(); ++i) {
    const int64_t lo = std::max(begin_, offset_[i]);
    const int64_t hi = std::min(end_, offset_[i] + ps[i].numel());
    if (lo >= hi) continue;
    const Tensor g = gradient_of(i);
    const int64_t at = lo - offset_[i];  // in parameter i
    const int64_t mine = lo - begin_;    // in this rank's range
    nn::adamw_update_elements(ps[i].data_ptr<float>() + at, g.data_ptr<float>() + at, m_.data() + mine,
                              v_.data() + mine, hi - lo, lr(), beta1_, beta2_, eps_, weight_decay_, updates_);
  }
  // END EXERCISE ex21-zero-adamw
}

Tensor ZeroAdamW::gradient_of(size_t i) const {
  const Tensor g = params()[i].grad();
  RG_CHECK(g.defined(), "ZeroAdamW", "parameter {} has no gradient", i);
  return kernels::contiguous(g);
}

std::vector<float> ZeroAdamW::gather(const std::vector<float>& mine) const {
  std::vector<float> all(static_cast<size_t>(total_));
  group_.all_gather_floats(mine.data(), counts_, all.data(), "the updated parameters");
  return all;
}

// Every rank's updated range to every rank: this rank's range copied out of
// the parameters, gathered (gather), and the whole copied back in.
void ZeroAdamW::gather_parameters() {
  const std::vector<Tensor>& ps = params();
  // BEGIN EXERCISE ex21-zero-adamw
  std::vector<float> mine(static_cast<size_t>(end_ - begin_));
  for (size_t i = 0; i < ps.size(); ++i) {
    const int64_t lo = std::max(begin_, offset_[i]);
    const int64_t hi = std::min(end_, offset_[i] + ps[i].numel());
    if (lo < hi) std::copy_n(ps[i].data_ptr<float>() + (lo - offset_[i]), hi - lo, mine.data() + (lo - begin_));
  }
  const std::vector<float> all = gather(mine);
  for (size_t i = 0; i < ps.size(); ++i) std::copy_n(all.data() + offset_[i], ps[i].numel(), ps[i].data_ptr<float>());
  // END EXERCISE ex21-zero-adamw
}

void ZeroAdamW::step() {
  NoGradGuard no_grad;
  ++updates_;
  update_my_range();
  gather_parameters();
  for (const Tensor& p : params()) p.bump_version();
  count_step();
}

nn::StateDict ZeroAdamW::state_dict() const {
  nn::StateDict out = Optimizer::state_dict();
  if (updates_ == 0) return out;
  const std::vector<float> m = gather(m_), v = gather(v_);
  const std::vector<Tensor>& ps = params();
  for (size_t i = 0; i < ps.size(); ++i) {
    Tensor em = empty(ps[i].shape(), DType::Float32), ev = empty(ps[i].shape(), DType::Float32);
    std::copy_n(m.data() + offset_[i], ps[i].numel(), em.data_ptr<float>());
    std::copy_n(v.data() + offset_[i], ps[i].numel(), ev.data_ptr<float>());
    out[state_key(i, "step")] = scalar_tensor(updates_, DType::Int64);
    out[state_key(i, "exp_avg")] = em;
    out[state_key(i, "exp_avg_sq")] = ev;
  }
  return out;
}

void ZeroAdamW::load_state_dict(const nn::StateDict& state, nn::OptimizerSettingsOnLoad on_settings) {
  // nn::AdamW checks the whole state (keys, shapes, settings) and holds it; this rank keeps its range.
  nn::AdamW whole(params(), {.lr = lr(), .betas = {beta1_, beta2_}, .eps = eps_, .weight_decay = weight_decay_});
  whole.load_state_dict(state, on_settings);
  int64_t updates = 0;
  std::vector<float> m(m_.size(), 0.0f), v(v_.size(), 0.0f);
  const std::vector<Tensor>& ps = params();
  for (size_t i = 0; i < ps.size(); ++i) {
    const auto& s = whole.state(i);
    RG_CHECK(s.has_value() || updates == 0, "ZeroAdamW.load_state_dict",
             "parameter {} has no state while others have: a sharded AdamW updates every parameter every step", i);
    if (!s) continue;
    RG_CHECK(updates == 0 || s->step == updates, "ZeroAdamW.load_state_dict",
             "parameter {} is at update {}, the others at {}: a sharded AdamW updates every parameter every step", i,
             s->step, updates);
    updates = s->step;
    const int64_t lo = std::max(begin_, offset_[i]), hi = std::min(end_, offset_[i] + ps[i].numel());
    if (lo >= hi) continue;
    std::copy_n(s->exp_avg.data_ptr<float>() + (lo - offset_[i]), hi - lo, m.data() + (lo - begin_));
    std::copy_n(s->exp_avg_sq.data_ptr<float>() + (lo - offset_[i]), hi - lo, v.data() + (lo - begin_));
  }
  m_ = std::move(m);
  v_ = std::move(v);
  updates_ = updates;
  set_step_count(whole.step_count());
  set_lr(whole.lr());
  const auto taken = whole.settings();  // take_saved may have changed them
  beta1_ = taken[0].value, beta2_ = taken[1].value, eps_ = taken[2].value, weight_decay_ = taken[3].value;
}

}  // namespace ropegrad::tasks
