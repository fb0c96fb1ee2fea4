// ex21-zero-adamw: ZeroAdamW's step (tasks/zero_adamw.cpp): AdamW on this
// rank's contiguous range of the flattened parameters only, then the ranges
// gathered so every rank holds every weight. Parameters p0 (3), p1 (2),
// p2 (4): 9 elements; with 3 ranks, rank 1 owns elements [3, 6): p1[0],
// p1[1] and p2[0]. Against nn::AdamW (ex13-adamw), which updates everything.
#include "course/checks/check_util.h"
#include "course/checks/rank_groups.h"
#include "tasks/zero_adamw.h"

namespace ropegrad::course {
namespace {

const nn::AdamWOptions kZeroOptions{.lr = 0.1, .betas = {0.9, 0.95}, .eps = 1e-8, .weight_decay = 0.1};

std::vector<Tensor> zero_params() {
  return {tensor({0.5, -1.0, 2.0}, {3}, DType::Float32).requires_grad_(),
          tensor({1.5, -0.25}, {2}, DType::Float32).requires_grad_(),
          tensor({-2.0, 0.75, 1.0, 3.0}, {4}, DType::Float32).requires_grad_()};
}

// Step `step`'s gradients: the same on every rank (after the all-reduce).
void set_zero_grads(const std::vector<Tensor>& ps, int step) {
  for (size_t i = 0; i < ps.size(); ++i) {
    std::vector<double> g;
    for (int64_t e = 0; e < ps[i].numel(); ++e) g.push_back(0.25 * static_cast<double>((step + 1) * (e + 1)) - 0.5 * static_cast<double>(i));
    ps[i].set_grad(tensor(g, ps[i].shape(), DType::Float32));
  }
}

std::vector<float> flat(const std::vector<Tensor>& ps) {
  std::vector<float> out;
  for (const Tensor& p : ps) {
    const std::vector<float> v = p.to_vector<float>();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// The flat index e as "p1[0]".
std::string element_name(int64_t e) {
  const int64_t sizes[] = {3, 2, 4};
  int i = 0;
  while (e >= sizes[i]) e -= sizes[i++];
  return fmt::format("p{}[{}]", i, e);
}

// One step of rank 1 of 3 (the other ranks pretended), and nn::AdamW's step,
// with the moments each kept (the flat m and v; AdamW's as its state_dict gives them).
struct RankOneStep {
  std::vector<float> before, after, adamw, grad, m, v, adamw_m, adamw_v;
  int64_t step = 0;
  std::vector<std::vector<float>> sent;
};

std::vector<float> flat_state(const nn::StateDict& state, const char* name, size_t params) {
  std::vector<float> out;
  for (size_t i = 0; i < params; ++i) {
    const auto it = state.find(fmt::format("state.{}.{}", i, name));
    const std::vector<float> v = it == state.end() ? std::vector<float>() : it->second.to_vector<float>();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

RankOneStep rank_one_step() {
  RankOneStep r;
  const std::vector<Tensor> ps = zero_params(), whole = zero_params();
  PretendRanks group(1, 3);
  tasks::ZeroAdamW zero(ps, kZeroOptions, group);
  nn::AdamW adamw(whole, kZeroOptions);
  set_zero_grads(ps, 1);
  set_zero_grads(whole, 1);
  r.before = flat(ps);
  for (const Tensor& p : ps) {
    const std::vector<float> g = p.grad().to_vector<float>();
    r.grad.insert(r.grad.end(), g.begin(), g.end());
  }
  zero.step();
  adamw.step();
  r.after = flat(ps);
  r.adamw = flat(whole);
  r.sent = group.gathered;
  const nn::StateDict mine = zero.state_dict(), theirs = adamw.state_dict();
  r.m = flat_state(mine, "exp_avg", ps.size());
  r.v = flat_state(mine, "exp_avg_sq", ps.size());
  r.adamw_m = flat_state(theirs, "exp_avg", ps.size());
  r.adamw_v = flat_state(theirs, "exp_avg_sq", ps.size());
  const auto step = mine.find("state.0.step");
  r.step = step == mine.end() ? -1 : step->second.to_vector<int64_t>()[0];
  return r;
}

// Which parameters this rank's range [3, 6) holds whole, and which in part.
constexpr const char* kRangeHolds = "this rank's range [3, 6) holds p1[0], p1[1] (all of p1) and p2[0] (p2 starts "
                                    "inside the range and ends outside it)";

// What was observed at element e of this rank's range, whose value `sent` is not AdamW's.
std::string observed_at(const RankOneStep& r, int64_t e, float sent) {
  const auto i = static_cast<size_t>(e);
  const std::string where = fmt::format("element {} ({}) of this rank's range [3, 6)", e, element_name(e));
  const std::string moments =
      i < r.m.size() && i < r.adamw_m.size()
          ? fmt::format("the moments this rank kept there: m = {}, v = {} (AdamW's: m = {}, v = {}), step count {}",
                        r.m[i], r.v[i], r.adamw_m[i], r.adamw_v[i], r.step)
          : std::string("the step kept no moments");
  if (!std::isfinite(sent))
    return fmt::format("{} is {} after step 1, from finite inputs (weight {}, gradient {}); {}; AdamW's update from "
                       "them divides by its bias corrections 1 - beta1^t = {:.4g} and 1 - beta2^t = {:.4g} at t = 1 "
                       "(they are 0 at t = 0)",
                       where, sent, r.before[i], r.grad[i], moments, 1 - kZeroOptions.betas.first, 1 - kZeroOptions.betas.second);
  if (sent == r.before[i])
    return fmt::format("{} was not updated: sent its old value {}, AdamW gives {}; {}", where, sent, r.adamw[i],
                       kRangeHolds);
  return fmt::format("{}: sent {}, AdamW's update gives {}; {}", where, sent, r.adamw[i], moments);
}

TEST(ex21_zero_adamw, this_rank_updates_exactly_its_range_with_adamw) {
  const RankOneStep r = rank_one_step();
  if (r.sent.size() != 1) {
    ADD_FAILURE() << "the step called the gather " << r.sent.size() << " times, expected once (gather, with this "
                  << "rank's updated range): without it the other ranks never see this rank's update";
    return;
  }
  // Every element of the range, so the pattern shows (the first of each piece, the end of a parameter, ...).
  std::string each;
  int64_t first_wrong = -1;
  for (int64_t e = 3; e < 6; ++e) {
    const auto i = static_cast<size_t>(e);
    const float sent = r.sent[0][i - 3];
    const bool right = sent == r.adamw[i];
    if (!right && first_wrong < 0) first_wrong = e;
    each += fmt::format("{}{} {}", e > 3 ? ", " : "", element_name(e),
                        right ? "updated as AdamW" : sent == r.before[i] ? "not updated" : "wrong");
  }
  if (first_wrong < 0) return;
  const float sent = r.sent[0][static_cast<size_t>(first_wrong - 3)];
  ADD_FAILURE() << observed_at(r, first_wrong, sent) << " (the range: " << each << ")";
}

TEST(ex21_zero_adamw, the_gathered_ranges_become_every_parameter) {
  // The pretended ranks 0 and 2 send 100 + the element's index for theirs.
  const RankOneStep r = rank_one_step();
  for (int64_t e = 0; e < 9; ++e) {
    const bool mine = e >= 3 && e < 6;
    const float want = mine ? r.adamw[static_cast<size_t>(e)] : static_cast<float>(100 + e);
    const float got = r.after[static_cast<size_t>(e)];
    if (got == want) continue;
    if (!mine && got == r.before[static_cast<size_t>(e)])
      ADD_FAILURE() << "the other ranks' ranges were not gathered: " << element_name(e) << " (element " << e
                    << ", another rank's) still holds its old value " << got << ", the gather gave " << want;
    else if (!mine && got == r.adamw[static_cast<size_t>(e)])
      ADD_FAILURE() << "this rank updated " << element_name(e) << " (element " << e << "), outside its range [3, 6), "
                    << "and kept it: the gathered value is " << want;
    else
      ADD_FAILURE() << element_name(e) << " (element " << e << ") = " << got << " after the step, expected " << want
                    << (mine ? " (AdamW's update: this rank's range)" : " (the gathered value of another rank)");
    return;
  }
}

TEST(ex21_zero_adamw, n_ranks_give_the_weights_of_one_adamw_bit_for_bit) {
  COURSE_REQUIRES("this_rank_updates_exactly_its_range_with_adamw", "the_gathered_ranges_become_every_parameter");
  for (int n : rank_counts()) {
    const std::string found = first_finding(on_ranks(n, [&](tasks::ProcessGroup& group) -> std::string {
      const std::vector<Tensor> ps = zero_params(), whole = zero_params();
      tasks::ZeroAdamW zero(ps, kZeroOptions, group);
      nn::AdamW adamw(whole, kZeroOptions);
      for (int step = 1; step <= 3; ++step) {
        set_zero_grads(ps, step);
        set_zero_grads(whole, step);
        zero.step();
        adamw.step();
        const std::vector<float> got = flat(ps), want = flat(whole);
        for (size_t e = 0; e < got.size(); ++e)
          if (got[e] != want[e])
            return fmt::format("after step {}, {} (element {}) = {}, AdamW's = {} (this rank owns [{}, {}))", step,
                               element_name(static_cast<int64_t>(e)), e, got[e], want[e], zero.begin(), zero.end());
      }
      return "";
    }));
    if (!found.empty()) {
      ADD_FAILURE() << "the weights differ from one AdamW's: " << found;
      return;
    }
  }
}

}  // namespace
}  // namespace ropegrad::course
