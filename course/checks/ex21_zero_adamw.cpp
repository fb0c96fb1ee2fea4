// ex21-zero-adamw: ZeroAdamW's step (dist/zero_adamw.cpp): AdamW on this
// rank's contiguous range of the flattened parameters only, then the ranges
// gathered so every rank holds every weight. Parameters p0 (3), p1 (2),
// p2 (4): 9 elements; with 3 ranks, rank 1 owns elements [3, 6): p1[0],
// p1[1] and p2[0]. Against nn::AdamW (ex13-adamw), which updates everything.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>

#include "course/checks/check_util.h"
#include "course/checks/rank_groups.h"
#include "dist/zero_adamw.h"

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

// ---- ZeRO's step replayed, with look-alikes --------------------------------------------
//
// The step on n ranks computed here with nn::adamw_update_elements (ex13's
// update, the one ZeroAdamW calls), each rank's range [9 r / n, 9 (r + 1) / n)
// cut at the parameters' boundaries into pieces, as the right step does; or
// with one or more of these changes, each a look-alike of the right step that
// gives other weights on these parameters:
struct Replay {
  bool grad_from_parameter_start = false;  // a piece starting at p[at] reads the gradient from g[0], not g[at]
  bool moments_from_range_start = false;   // every piece's m and v start at the range's slot 0, not at lo - begin
  int step_shift = 0;                      // the update told step t + shift
  // Settings, each alone (every one gives other weights than the right step here):
  bool eps_and_weight_decay_exchanged = false;  // the update told eps = weight_decay and weight_decay = eps
  bool betas_exchanged = false;                 // the update told beta1 = beta2 and beta2 = beta1
  bool beta1_for_both = false;                  // the update told beta2 = beta1
  bool beta2_for_both = false;                  // the update told beta1 = beta2
  bool no_weight_decay = false;                 // the update told weight_decay = 0
  bool decay_times_lr = false;                  // the update told weight_decay = lr x weight_decay
  bool last_piece_skipped = false;              // the last parameter piece of each rank's range not updated
  bool split_pieces_skipped = false;            // a piece that is not a whole parameter not updated
  bool last_element_skipped = false;            // each range's last element not updated (its end taken as inclusive)
  bool gathered_from_parameter_start = false;   // a piece p[at..] gathered from p[0..] of the rank's own copy
  bool last_parameter_skipped = false;          // the last parameter of the flat order updated by no rank
  bool moments_reset_each_step = false;         // m and v zeroed at the start of every step (the count t kept)
  bool gradient_over_ranks = false;             // the (already averaged) gradient divided by the number of ranks
  bool decay_applied_twice = false;             // p *= 1 - lr wd before the update, which decays p itself too
  bool update_at_parameter_start = false;       // a piece's update written at p[0..], not at p[at..]
  bool piece_from_before_range_skipped = false;  // a piece of a parameter that starts before the range not updated
};

std::string replay_text(const Replay& r) {
  std::vector<std::string> parts;
  if (r.grad_from_parameter_start)
    parts.push_back("the gradient of a piece that starts at p[at] read from g[0] instead of g[at] (element i of "
                    "the parameter updated with the gradient of element i - at)");
  if (r.moments_from_range_start)
    parts.push_back("every piece's moments read from the first slot of this rank's m and v instead of slot lo - "
                    "begin (the pieces of different parameters share slots)");
  if (r.step_shift != 0)
    parts.push_back(fmt::format("the step count t {} {} (AdamW's: t, the number of steps taken)",
                                r.step_shift > 0 ? "+" : "-", std::abs(r.step_shift)));
  if (r.eps_and_weight_decay_exchanged)
    parts.push_back(fmt::format("eps and weight_decay in each other's places (the decay uses eps = {:g} and the "
                                "denominator adds weight_decay = {:g})",
                                kZeroOptions.eps, kZeroOptions.weight_decay));
  if (r.betas_exchanged)
    parts.push_back(fmt::format("beta1 and beta2 in each other's places (m decays by beta2 = {:g}, v by beta1 = {:g})",
                                kZeroOptions.betas.second, kZeroOptions.betas.first));
  if (r.beta1_for_both)
    parts.push_back(fmt::format("beta1 = {:g} for both moments (v decays by beta1 where beta2 = {:g} belongs)",
                                kZeroOptions.betas.first, kZeroOptions.betas.second));
  if (r.beta2_for_both)
    parts.push_back(fmt::format("beta2 = {:g} for both moments (m decays by beta2 where beta1 = {:g} belongs)",
                                kZeroOptions.betas.second, kZeroOptions.betas.first));
  if (r.no_weight_decay)
    parts.push_back(fmt::format("no weight decay (weight_decay 0 instead of {:g})", kZeroOptions.weight_decay));
  if (r.decay_times_lr)
    parts.push_back(fmt::format("weight_decay multiplied by lr before the update, which multiplies it by lr again "
                                "(the decay lr x lr x wd = {:g} instead of lr x wd = {:g})",
                                kZeroOptions.lr * kZeroOptions.lr * kZeroOptions.weight_decay,
                                kZeroOptions.lr * kZeroOptions.weight_decay));
  if (r.last_piece_skipped)
    parts.push_back("the last parameter piece of each rank's range left out of the update (the loop over the "
                    "range's pieces stops one piece short)");
  if (r.split_pieces_skipped)
    parts.push_back("every parameter split between two ranks left out of the update (only whole parameters in a "
                    "range updated)");
  if (r.last_parameter_skipped)
    parts.push_back("the last parameter of the flat order (p2) updated by no rank (the loop over the parameters "
                    "stops one early)");
  if (r.gathered_from_parameter_start)
    parts.push_back("each rank's piece of a parameter gathered from the parameter's first element instead of from "
                    "its offset in it (a piece that starts at p[at] sends p[0], p[1], ... of the rank's own copy)");
  if (r.last_element_skipped)
    parts.push_back("the last element of each rank's range left out of the update (its end, which is one past the "
                    "range, read as the range's last element)");
  if (r.moments_reset_each_step)
    parts.push_back("m and v set to 0 at the start of every step (AdamW's moments carry over from step to step; "
                    "the step count t still counts)");
  if (r.gradient_over_ranks)
    parts.push_back("the gradient divided by the number of ranks (after the all-reduce every rank already holds "
                    "the average)");
  if (r.decay_applied_twice)
    parts.push_back("the weight decay applied twice: p (1 - lr wd) before an update that decays p by itself");
  if (r.update_at_parameter_start)
    parts.push_back("each piece's update written from the parameter's first element, p[0..], where its offset in "
                    "the parameter, p[at..], belongs (the gradient read at its offset): a piece that starts inside "
                    "a parameter updates the wrong elements and keeps its own");
  if (r.piece_from_before_range_skipped)
    parts.push_back("the piece of a parameter that starts before the rank's range left out of the update (the "
                    "piece's start not clipped to the range's begin: the rank where the parameter starts updates it "
                    "only up to its own end)");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; and " : "") + parts[i];
  return out;
}

// The look-alikes tried, each change alone and in pairs.
std::vector<Replay> look_alikes() {
  std::vector<Replay> out;
  for (int mask = 1; mask < 8; ++mask)
    out.push_back({(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0 ? 1 : 0});
  out.push_back({false, false, -1});
  Replay at_start, before_range;
  at_start.update_at_parameter_start = true;
  before_range.piece_from_before_range_skipped = true;
  out.insert(out.end(), {at_start, before_range});
  Replay exchanged, betas, beta1_both, beta2_both, no_decay, decay_lr, last_skipped, split_skipped, last_element, gathered_from_start,
      last_parameter, reset, over_ranks, decay_twice;
  decay_twice.decay_applied_twice = true;
  reset.moments_reset_each_step = true;
  over_ranks.gradient_over_ranks = true;
  exchanged.eps_and_weight_decay_exchanged = true;
  betas.betas_exchanged = true;
  beta1_both.beta1_for_both = true;
  beta2_both.beta2_for_both = true;
  no_decay.no_weight_decay = true;
  decay_lr.decay_times_lr = true;
  last_skipped.last_piece_skipped = true;
  split_skipped.split_pieces_skipped = true;
  last_element.last_element_skipped = true;
  gathered_from_start.gathered_from_parameter_start = true;
  last_parameter.last_parameter_skipped = true;
  out.insert(out.end(), {exchanged, betas, beta1_both, beta2_both, no_decay, decay_lr, last_skipped, split_skipped, last_element,
                         gathered_from_start, last_parameter, reset, over_ranks, decay_twice});
  return out;
}

// The flat weights after each of `steps` steps of the replay on n ranks.
std::vector<std::vector<float>> replay_zero(int n, const Replay& how, int steps) {
  const int64_t sizes[] = {3, 2, 4}, offsets[] = {0, 3, 5}, total = 9;
  std::vector<float> w = flat(zero_params());
  std::vector<std::vector<float>> m(static_cast<size_t>(n)), v(static_cast<size_t>(n)), out;
  for (int r = 0; r < n; ++r) {
    m[r].assign(static_cast<size_t>(total * (r + 1) / n - total * r / n), 0.0f);
    v[r] = m[r];
  }
  for (int step = 1; step <= steps; ++step) {
    const std::vector<Tensor> ps = zero_params();
    set_zero_grads(ps, step);
    if (how.moments_reset_each_step) {
      for (int r = 0; r < n; ++r) std::fill(m[r].begin(), m[r].end(), 0.0f), std::fill(v[r].begin(), v[r].end(), 0.0f);
    }
    const std::vector<float> before = w;  // every rank's copy at the step's start
    std::vector<float> gathered = w;      // what the gather makes of the ranks' pieces
    for (int r = 0; r < n; ++r) {
      // This rank's own copy, updated in its range alone (a write outside it reaches no other rank).
      if (how.gathered_from_parameter_start || how.update_at_parameter_start) w = before;
      const int64_t begin = total * r / n, end = total * (r + 1) / n;
      size_t last = 0;  // the last parameter with a piece in this range
      for (size_t i = 0; i < 3; ++i) {
        if (std::max(begin, offsets[i]) < std::min(end, offsets[i] + sizes[i])) last = i;
      }
      for (size_t i = 0; i < 3; ++i) {
        const int64_t lo = std::max(begin, offsets[i]);
        const int64_t hi = std::min(how.last_element_skipped ? end - 1 : end, offsets[i] + sizes[i]);
        if (lo >= hi || (how.last_piece_skipped && i == last) || (how.last_parameter_skipped && i == 2)) continue;
        if (how.split_pieces_skipped && (lo != offsets[i] || hi != offsets[i] + sizes[i])) continue;
        if (how.piece_from_before_range_skipped && offsets[i] < begin) continue;
        std::vector<float> g = ps[i].grad().to_vector<float>();
        if (how.decay_applied_twice) {
          for (int64_t j = lo; j < hi; ++j)
            w[static_cast<size_t>(j)] *= static_cast<float>(1.0 - kZeroOptions.lr * kZeroOptions.weight_decay);
        }
        if (how.gradient_over_ranks)
          for (float& x : g) x /= static_cast<float>(n);
        const int64_t at = lo - offsets[i], slot = how.moments_from_range_start ? 0 : lo - begin;
        const double eps = how.eps_and_weight_decay_exchanged ? kZeroOptions.weight_decay : kZeroOptions.eps;
        const double decay = how.no_weight_decay                  ? 0.0
                             : how.eps_and_weight_decay_exchanged ? kZeroOptions.eps
                             : how.decay_times_lr                 ? kZeroOptions.lr * kZeroOptions.weight_decay
                                                                  : kZeroOptions.weight_decay;
        const double beta1 =
            how.betas_exchanged || how.beta2_for_both ? kZeroOptions.betas.second : kZeroOptions.betas.first;
        const double beta2 =
            how.betas_exchanged || how.beta1_for_both ? kZeroOptions.betas.first : kZeroOptions.betas.second;
        nn::adamw_update_elements(w.data() + (how.update_at_parameter_start ? offsets[i] : lo),
                                  g.data() + (how.grad_from_parameter_start ? 0 : at),
                                  m[r].data() + slot, v[r].data() + slot, hi - lo, kZeroOptions.lr, beta1, beta2, eps,
                                  decay, step + how.step_shift);
        const int64_t from = how.gathered_from_parameter_start ? offsets[i] : lo;
        std::copy(w.begin() + from, w.begin() + from + (hi - lo), gathered.begin() + lo);
      }
    }
    w = gathered;
    out.push_back(w);
  }
  return out;
}

// What one rank sent at each step: got[s] is elements [from, to) of the flat weights after step s + 1.
struct Sent {
  std::vector<std::vector<float>> got;
  int64_t from = 0, to = 0;
  int n = 0;  // of how many ranks
};

// The look-alike whose replay gives what every rank of `sent` sent, at every
// step, exactly, while the right replay does not: its text; when several do
// (they agree on these elements), "either ..., or ..."; nullopt when none does.
std::optional<std::string> reproducing(const std::vector<Sent>& sent) {
  const auto gives = [&](const Replay& how) {
    for (const Sent& r : sent) {
      const std::vector<std::vector<float>> want = replay_zero(r.n, how, static_cast<int>(r.got.size()));
      for (size_t s = 0; s < r.got.size(); ++s)
        for (int64_t e = r.from; e < r.to; ++e)
          if (r.got[s][static_cast<size_t>(e - r.from)] != want[s][static_cast<size_t>(e)]) return false;
    }
    return true;
  };
  if (gives(Replay{})) return std::nullopt;
  std::vector<std::string> texts;
  for (const Replay& how : look_alikes())
    if (gives(how)) texts.push_back(replay_text(how));
  if (texts.empty()) return std::nullopt;
  if (texts.size() == 1) return texts[0];
  std::string out = "either";
  for (size_t i = 0; i < texts.size(); ++i) out += (i ? ", or " : " ") + texts[i];
  return out + " (these give the same weights here)";
}

// "p1[1] (element 4: rank 1's range [4, 9) holds p1[1] .. p1[1], a piece that
// starts inside p1)": where element e lies against its rank's range and its
// parameter's bounds.
std::string placed(int n, int64_t e) {
  const int64_t sizes[] = {3, 2, 4}, offsets[] = {0, 3, 5}, total = 9;
  int r = 0;
  while (!(total * r / n <= e && e < total * (r + 1) / n)) ++r;
  const int64_t begin = total * r / n, end = total * (r + 1) / n;
  size_t i = 0;
  while (!(offsets[i] <= e && e < offsets[i] + sizes[i])) ++i;
  const int64_t lo = std::max(begin, offsets[i]), hi = std::min(end, offsets[i] + sizes[i]);
  return fmt::format("{} (element {}: rank {}'s range [{}, {}) holds p{}[{}..{}], {} of p{}, {} of its piece)",
                     element_name(e), e, r, begin, end, i, lo - offsets[i], hi - 1 - offsets[i],
                     lo == offsets[i] && hi == offsets[i] + sizes[i] ? "all"
                     : lo == offsets[i]                             ? "the start"
                     : hi == offsets[i] + sizes[i]                  ? "the end"
                                                                    : "the middle",
                     i, e == lo ? "the first element" : e == hi - 1 ? "the last element" : "inside");
}

// The same float, bit for bit (0 and -0 differ): "not updated" only then.
bool same_bits(float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); }

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
  if (same_bits(sent, r.before[i]))
    return fmt::format("{} was not updated: sent its old value {}, AdamW gives {}{}; {}", where, sent, r.adamw[i],
                       r.grad[i] == 0 ? fmt::format(" (its gradient is 0 at this step: AdamW moves it by the weight "
                                                    "decay alone, lr x weight_decay x w = {:g})",
                                                    kZeroOptions.lr * kZeroOptions.weight_decay * r.before[i])
                                      : "",
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
                        right ? "updated as AdamW" : same_bits(sent, r.before[i]) ? "not updated" : "wrong");
  }
  if (first_wrong < 0) return;
  const float sent = r.sent[0][static_cast<size_t>(first_wrong - 3)];
  // What it sent is its gradients there, not its weights?
  if (r.sent[0].size() == 3 && r.sent[0][0] == r.grad[3] && r.sent[0][1] == r.grad[4] && r.sent[0][2] == r.grad[5]) {
    ADD_FAILURE() << "what this rank sent for its range [3, 6) is its gradients there (" << r.grad[3] << ", "
                  << r.grad[4] << ", " << r.grad[5] << "), not its updated weights (AdamW's: " << r.adamw[3] << ", "
                  << r.adamw[4] << ", " << r.adamw[5] << "): the gather is given the gradients";
    return;
  }
  // Three steps of each rank of 3, and of 2, alone (a range evolves alone:
  // the others' are pretended): a look-alike that gives every element each
  // rank sent at each step. The other ranges part look-alikes that agree on
  // rank 1 of 3's (with 2 ranks, p1 is the parameter split between them).
  {
    std::vector<Sent> sent;
    for (const int n : {3, 2})
      for (int rank = 0; rank < n; ++rank) {
        const std::vector<Tensor> ps = zero_params();
        PretendRanks group(rank, n);
        tasks::ZeroAdamW zero(ps, kZeroOptions, group);
        for (int step = 1; step <= 3; ++step) {
          set_zero_grads(ps, step);
          zero.step();
        }
        sent.push_back({group.gathered, 9 * rank / n, 9 * (rank + 1) / n, n});
      }
    const bool complete = std::all_of(sent.begin(), sent.end(), [](const Sent& r) {
      return r.got.size() == 3 && std::all_of(r.got.begin(), r.got.end(), [&](const std::vector<float>& g) {
               return static_cast<int64_t>(g.size()) == r.to - r.from;
             });
    });
    if (complete) {
      if (const std::optional<std::string> how = reproducing(sent)) {
        ADD_FAILURE() << "what each rank sent for its range, with 3 ranks ([0, 3), [3, 6), [6, 9)) and with 2 ([0, "
                         "4), [4, 9)), at each of steps 1 to 3 is exactly, element for element, the update with "
                      << *how << " (" << kRangeHolds << "; after step 1: " << each << ")";
        return;
      }
    }
  }
  ADD_FAILURE() << observed_at(r, first_wrong, sent) << " (the range: " << each << ")";
}

// A gradient need not be contiguous: a parameter's .grad may be a strided
// view (a slice, a transposed or expanded tensor). Rank 1 of 3 with p1's
// gradient every other element of a buffer [0.5, 7, -0.75, 9]: p1[0] reads
// 0.5 either way; p1[1] is AdamW's update with -0.75, and with 7 when the
// gradient's memory is read as if it were contiguous.
TEST(ex21_zero_adamw, a_strided_gradient_is_read_by_its_strides) {
  COURSE_REQUIRES("this_rank_updates_exactly_its_range_with_adamw");
  const auto step_with = [](const Tensor& p1_grad, PretendRanks* group) {
    const std::vector<Tensor> ps = zero_params();
    set_zero_grads(ps, 1);
    ps[1].set_grad(p1_grad);
    if (group == nullptr) {  // one AdamW over all of it
      nn::AdamW adamw(ps, kZeroOptions);
      adamw.step();
    } else {
      tasks::ZeroAdamW zero(ps, kZeroOptions, *group);
      zero.step();
    }
    return flat(ps);
  };
  const Tensor buffer = tensor({0.5, 7.0, -0.75, 9.0}, {4}, DType::Float32);
  PretendRanks group(1, 3);
  step_with(slice(buffer, 0, 0, 4, 2), &group);  // p1.grad() = [0.5, -0.75], strides 2
  const std::vector<float> right = step_with(tensor({0.5, -0.75}, {2}, DType::Float32), nullptr);
  const std::vector<float> as_if_contiguous = step_with(tensor({0.5, 7.0}, {2}, DType::Float32), nullptr);
  if (group.gathered.size() != 1 || group.gathered[0].size() != 3) {
    ADD_FAILURE() << "with p1's gradient a strided view, the step sent " << group.gathered.size()
                  << " gathers, expected one of this rank's 3 elements";
    return;
  }
  const float sent = group.gathered[0][1];  // element 4: p1[1]
  if (sent == right[4]) return;
  if (sent == as_if_contiguous[4]) {
    ADD_FAILURE() << "with p1's gradient a strided view (every other element of [0.5, 7, -0.75, 9]: p1.grad() is "
                     "[0.5, -0.75]), p1[1] (element 4) was sent as "
                  << sent << ", AdamW's update with gradient 7, the buffer's next float in memory, not with -0.75 ("
                  << right[4] << "): the gradient's memory was read as if it were contiguous";
    return;
  }
  ADD_FAILURE() << "with p1's gradient a strided view (every other element of [0.5, 7, -0.75, 9]: p1.grad() is "
                   "[0.5, -0.75]), p1[1] (element 4) was sent as "
                << sent << ", expected AdamW's update " << right[4];
}

// The moments this rank keeps for its range [3, 6) after one step are
// AdamW's m and v there; each kept moment is named as what it equals (AdamW's
// m, AdamW's v, or 0) when that holds on all three elements.
// m = c x AdamW's and v = c^2 x AdamW's: the moments of the gradient c g ("" otherwise).
std::string scaled_gradient_note(const std::string& m_is, const std::string& v_is) {
  const auto factor = [](const std::string& text) {
    return text.ends_with(" x AdamW's") ? std::stod(text) : NAN;
  };
  const double cm = factor(m_is), cv = factor(v_is);
  if (std::isnan(cm) || std::isnan(cv) || !(std::abs(cv - cm * cm) <= 1e-4 * cv)) return "";
  return fmt::format(": the moments of the gradient {:.6g} g (m scales with g, v with g^2), where this rank's gradient "
                     "after the all-reduce is g itself{}",
                     cm, std::abs(cm - 1.0 / 3) <= 1e-5 ? " (1/3: the number of ranks, 3)" : "");
}

// After one step from zero m = (1 - beta1) g and v = (1 - beta2) g^2: a
// moment that is AdamW's times (1 - the other beta) / (1 - its beta) was
// made with the other moment's beta ("" otherwise).
std::string other_beta_note(const std::string& m_is, const std::string& v_is) {
  const double b1 = kZeroOptions.betas.first, b2 = kZeroOptions.betas.second;
  const auto is = [](const std::string& text, double c) {
    return text.ends_with(" x AdamW's") && std::abs(std::stod(text) - c) <= 1e-5 * c;
  };
  if (m_is == "AdamW's m" && is(v_is, (1 - b1) / (1 - b2)))
    return fmt::format(": v = (1 - beta1) g^2, v made with beta1 = {:g} where beta2 = {:g} belongs", b1, b2);
  if (v_is == "AdamW's v" && is(m_is, (1 - b2) / (1 - b1)))
    return fmt::format(": m = (1 - beta2) g, m made with beta2 = {:g} where beta1 = {:g} belongs", b2, b1);
  return "";
}

TEST(ex21_zero_adamw, the_moments_of_its_range_are_adamws) {
  const RankOneStep r = rank_one_step();
  if (r.m.size() != 9 || r.v.size() != 9) {
    ADD_FAILURE() << "state_dict() holds " << r.m.size() << " values of exp_avg and " << r.v.size()
                  << " of exp_avg_sq over the three parameters, expected 9 of each";
    return;
  }
  const auto what = [&](const std::vector<float>& kept) -> std::string {
    bool as_m = true, as_v = true, zero = true;
    for (size_t e = 3; e < 6; ++e) {
      as_m = as_m && kept[e] == r.adamw_m[e];
      as_v = as_v && kept[e] == r.adamw_v[e];
      zero = zero && kept[e] == 0;
    }
    if (as_m || as_v || zero) return as_m ? "AdamW's m" : as_v ? "AdamW's v" : "0";
    // One factor of AdamW's (over the nonzero entries): 1/3 for m and 1/9 for v say the gradient was g / 3.
    const std::vector<float>& ref = &kept == &r.m ? r.adamw_m : r.adamw_v;
    double c = NAN;
    for (size_t e = 3; e < 6; ++e) {
      if (ref[e] == 0) {
        if (kept[e] != 0) return "";
        continue;
      }
      const double q = static_cast<double>(kept[e]) / ref[e];
      if (std::isnan(c)) c = q;
      if (!(std::abs(q - c) <= 1e-5 * std::abs(c))) return "";
    }
    return std::isnan(c) ? "" : fmt::format("{:.6g} x AdamW's", c);
  };
  const std::string m_is = what(r.m), v_is = what(r.v);
  if (m_is == "AdamW's m" && v_is == "AdamW's v") return;
  const auto values = [](const std::vector<float>& x) { return fmt::format("{:.6g}, {:.6g}, {:.6g}", x[3], x[4], x[5]); };
  ADD_FAILURE() << "after step 1 this rank keeps, for its range [3, 6) (" << kRangeHolds << "), m = " << values(r.m)
                << (m_is.empty() ? "" : " (" + m_is + ")") << " and v = " << values(r.v)
                << (v_is.empty() ? "" : " (" + v_is + ")") << "; AdamW's m = " << values(r.adamw_m)
                << ", v = " << values(r.adamw_v)
                << (m_is == "AdamW's v" && v_is == "0" ? ": the second moment is written in m's slot, and v's is never written" : "")
                << scaled_gradient_note(m_is, v_is) << other_beta_note(m_is, v_is);
}

TEST(ex21_zero_adamw, the_gathered_ranges_become_every_parameter) {
  // The pretended ranks 0 and 2 send 100 + the element's index for theirs.
  const RankOneStep r = rank_one_step();
  // Where each wrong element's value comes from in the gathered vector (every value there is distinct):
  // read at another offset, the sources say which.
  std::vector<float> gathered(9);
  for (int64_t k = 0; k < 9; ++k) {
    gathered[static_cast<size_t>(k)] = k >= 3 && k < 6 ? r.adamw[static_cast<size_t>(k)] : static_cast<float>(100 + k);
  }
  const int64_t starts[] = {0, 0, 0, 3, 3, 5, 5, 5, 5};  // the flat offset of each element's parameter
  std::string sources;
  bool all_sourced = true, from_param_start = true;
  int64_t wrong = 0;
  for (int64_t e = 0; e < 9; ++e) {
    const float got = r.after[static_cast<size_t>(e)];
    if (got == gathered[static_cast<size_t>(e)]) continue;
    ++wrong;
    const auto it = std::find(gathered.begin(), gathered.end(), got);
    if (it == gathered.end()) {
      all_sourced = false;
      continue;
    }
    const int64_t k = it - gathered.begin();
    from_param_start = from_param_start && k == e - starts[e];
    if (wrong <= 4) sources += fmt::format("{}{} (element {}) holds element {}'s", sources.empty() ? "" : ", ",
                                           element_name(e), e, k);
  }
  if (wrong > 0 && all_sourced) {
    ADD_FAILURE() << "every wrong element holds another element of the gathered vector: " << sources
                  << (wrong > 4 ? ", ..." : "")
                  << (from_param_start ? ": each parameter is read from the start of the gathered vector, not from "
                                         "its own offset"
                                       : "");
    return;
  }
  for (int64_t e = 0; e < 9; ++e) {
    const bool mine = e >= 3 && e < 6;
    const float want = mine ? r.adamw[static_cast<size_t>(e)] : static_cast<float>(100 + e);
    const float got = r.after[static_cast<size_t>(e)];
    if (got == want) continue;
    if (!mine && got == r.before[static_cast<size_t>(e)] && r.sent.size() == 1) {
      // The gather ran (once, with this rank's range): the elements that kept their old values were not copied.
      std::string kept;
      for (int64_t k = 0; k < 9; ++k) {
        const bool theirs = !(k >= 3 && k < 6);
        if (theirs && r.after[static_cast<size_t>(k)] == r.before[static_cast<size_t>(k)] &&
            r.before[static_cast<size_t>(k)] != static_cast<float>(100 + k))
          kept += (kept.empty() ? "" : ", ") + element_name(k);
      }
      ADD_FAILURE() << "the gather was called, but " << kept << " kept their old values where the gathered values "
                    << "belong (" << element_name(e) << ": " << got << ", the gather gave " << want
                    << "): the gathered vector was not copied back into them";
    } else if (!mine && got == r.before[static_cast<size_t>(e)])
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
      std::vector<std::vector<float>> seen;
      std::string first;
      for (int step = 1; step <= 3; ++step) {
        set_zero_grads(ps, step);
        set_zero_grads(whole, step);
        const std::vector<float> before = flat(ps);
        zero.step();
        adamw.step();
        const std::vector<float> got = flat(ps), want = flat(whole);
        seen.push_back(got);
        if (!first.empty()) continue;
        std::string wrong;
        size_t count = 0;
        for (size_t e = 0; e < got.size(); ++e)
          if (got[e] != want[e]) {
            if (count++ == 0)
              first = fmt::format("after step {}, {} = {}, AdamW's = {} (this rank owns [{}, {})){}", step,
                                  placed(n, static_cast<int64_t>(e)), got[e], want[e], zero.begin(), zero.end(),
                                  same_bits(got[e], before[e]) ? "; it kept its value from before the step: the "
                                                                 "gathered weights never updated it"
                                                               : "");
            wrong += (wrong.empty() ? "" : ", ") + element_name(static_cast<int64_t>(e));
          }
        if (count > 1) first += fmt::format("; wrong after step {}: {}", step, wrong);
      }
      if (first.empty()) return "";
      // A look-alike of the step that gives this rank's weights, every element at every step.
      if (const std::optional<std::string> how = reproducing({Sent{seen, 0, 9, n}}))
        return fmt::format("its weights at each of steps 1 to 3 are exactly, element for element, those of the "
                           "step with {}; {}",
                           *how, first);
      return first;
    }));
    if (!found.empty()) {
      ADD_FAILURE() << "the weights differ from one AdamW's: " << found;
      return;
    }
  }
}

// Every option the optimizer is built with reaches the update: lr 0.05, betas
// (0.8, 0.9), eps 0.5 and weight_decay 0.3, none a default nor the value the
// checks above use, on one rank for three steps against nn::AdamW with the
// same options. A wrong one is named when the weights are those of AdamW with
// that one option at AdamW's default or at the checks' value.
TEST(ex21_zero_adamw, every_option_reaches_the_update) {
  COURSE_REQUIRES("n_ranks_give_the_weights_of_one_adamw_bit_for_bit");
  const nn::AdamWOptions options{.lr = 0.05, .betas = {0.8, 0.9}, .eps = 0.5, .weight_decay = 0.3};
  const auto run = [](const nn::AdamWOptions& o, bool sharded) {
    const std::vector<Tensor> ps = zero_params();
    PretendRanks group(0, 1);
    std::unique_ptr<tasks::ZeroAdamW> zero;
    std::unique_ptr<nn::AdamW> adamw;
    if (sharded) zero = std::make_unique<tasks::ZeroAdamW>(ps, o, group);
    else adamw = std::make_unique<nn::AdamW>(ps, o);
    for (int step = 1; step <= 3; ++step) {
      set_zero_grads(ps, step);
      if (sharded) zero->step();
      else adamw->step();
    }
    return flat(ps);
  };
  const std::vector<float> got = run(options, true);
  if (got == run(options, false)) return;
  using O = nn::AdamWOptions;
  struct Field {
    const char* name;
    double (*get)(const O&);
    void (*set)(O&, double);
  };
  const Field fields[] = {
      {"lr", [](const O& o) { return o.lr; }, [](O& o, double v) { o.lr = v; }},
      {"beta1", [](const O& o) { return o.betas.first; }, [](O& o, double v) { o.betas.first = v; }},
      {"beta2", [](const O& o) { return o.betas.second; }, [](O& o, double v) { o.betas.second = v; }},
      {"eps", [](const O& o) { return o.eps; }, [](O& o, double v) { o.eps = v; }},
      {"weight_decay", [](const O& o) { return o.weight_decay; }, [](O& o, double v) { o.weight_decay = v; }}};
  const O defaults;
  const std::pair<const char*, const O*> sources[] = {{"AdamW's default", &defaults},
                                                      {"the value the other checks use", &kZeroOptions}};
  for (const Field& f : fields)
    for (const auto& [source, from] : sources) {
      O o = options;
      f.set(o, f.get(*from));
      if (got != run(o, false)) continue;
      ADD_FAILURE() << fmt::format("built with lr 0.05, betas (0.8, 0.9), eps 0.5, weight_decay 0.3, the weights after "
                                   "3 steps on one rank are exactly AdamW's with {} = {:g} ({}) and every other "
                                   "option as given: the update does not use the optimizer's {}",
                                   f.name, f.get(*from), source, f.name);
      return;
    }
  ADD_FAILURE() << "built with lr 0.05, betas (0.8, 0.9), eps 0.5, weight_decay 0.3, the weights after 3 steps on one "
                   "rank differ from AdamW's with those options, though with the options of the checks above they "
                   "agree";
}

}  // namespace
}  // namespace ropegrad::course
