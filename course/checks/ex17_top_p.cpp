// ex17-top-p: top-p (nucleus) sampling in decoding (nn/transformer.cpp,
// sample_token): the most likely tokens, in order, until their mass reaches
// top_p (the token that crosses it included), sampled in proportion.
#include <cmath>

#include "course/checks/check_util.h"
#include "nn/transformer.h"

namespace ropegrad::course {
namespace {

// logits log p for p = [0.1, 0.5, 0.15, 0.25] (normalised already).
Tensor logits() { return tensor({std::log(0.1), std::log(0.5), std::log(0.15), std::log(0.25)}, {4}, DType::Float64); }

std::vector<double> frequencies(double top_p, int draws) {
  Generator gen(2024);
  std::vector<int> count(4, 0);
  const Tensor z = logits();
  for (int i = 0; i < draws; ++i) ++count[static_cast<size_t>(nn::sample_token(z, 1.0, top_p, gen))];
  std::vector<double> f;
  for (int c : count) f.push_back(static_cast<double>(c) / draws);
  return f;
}

TEST(ex17_top_p, the_token_that_crosses_top_p_is_kept) {
  // Sorted: 0.5 (token 1), 0.25 (token 3), 0.15, 0.1. top_p 0.6: 0.5 < 0.6,
  // so token 3 is added (mass 0.75 crosses 0.6) and the nucleus is {1, 3}.
  const std::vector<double> f = frequencies(0.6, 4000);
  if (f[3] == 0)
    ADD_FAILURE() << "token 3 (mass 0.5 + 0.25 = 0.75 crosses top_p = 0.6) is never drawn: the nucleus keeps "
                     "tokens until their mass reaches top_p, the token that crosses it included";
  if (f[0] != 0 || f[2] != 0)
    ADD_FAILURE() << "tokens outside the nucleus {1, 3} are drawn (frequencies " << fmt::format("{:.4f}", f[0]) << ", "
                  << fmt::format("{:.4f}", f[2]) << ")";
}

TEST(ex17_top_p, the_nucleus_is_sampled_in_proportion_to_its_probabilities) {
  // top_p 0.85: nucleus {1, 3, 2} (0.5 + 0.25 + 0.15 = 0.9), renormalised to
  // 0.5556, 0.2778, 0.1667; 20000 draws: standard deviations <= 0.0036, bound 0.015.
  const std::vector<double> f = frequencies(0.85, 20000);
  const double want[4] = {0.0, 0.5 / 0.9, 0.15 / 0.9, 0.25 / 0.9};
  for (int t = 0; t < 4; ++t) {
    if (std::abs(f[t] - want[t]) > 0.015) {
      ADD_FAILURE() << "token " << t << " is drawn with frequency " << fmt::format("{:.4f}", f[t]) << ", expected "
                    << fmt::format("{:.4f}", want[t]) << " (the nucleus renormalised)";
      return;
    }
  }
}

TEST(ex17_top_p, top_p_one_keeps_every_token) {
  const std::vector<double> f = frequencies(1.0, 20000);
  const double want[4] = {0.1, 0.5, 0.15, 0.25};
  for (int t = 0; t < 4; ++t) {
    if (std::abs(f[t] - want[t]) > 0.015) {
      ADD_FAILURE() << "top_p = 1: token " << t << " is drawn with frequency " << fmt::format("{:.4f}", f[t])
                    << ", expected " << fmt::format("{:.4f}", want[t]);
      return;
    }
  }
}

TEST(ex17_top_p, a_top_p_below_the_largest_probability_is_greedy) {
  const std::vector<double> f = frequencies(0.3, 2000);
  if (f[1] != 1.0)
    ADD_FAILURE() << "top_p = 0.3 < 0.5: only the most likely token may be drawn, but it has frequency "
                  << fmt::format("{:.4f}", f[1]);
}

}  // namespace
}  // namespace ropegrad::course
