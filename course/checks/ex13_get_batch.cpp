// ex13-get-batch: nn::get_batch (tasks/batch.cpp).
#include <set>

#include "course/checks/check_util.h"
#include "tasks/batch.h"

namespace ropegrad::course {
namespace {

TEST(ex13_get_batch, y_is_x_shifted_by_one_token) {
  const Tensor tokens = arange(100);  // token i is i
  Generator gen(0);
  const auto [x, y] = nn::get_batch(tokens, 4, 8, gen);
  if (x.shape() != Shape{4, 8} || y.shape() != Shape{4, 8}) {
    ADD_FAILURE() << "shapes " << shape_str(x.shape()) << ", " << shape_str(y.shape()) << "; expected [4, 8] each";
    return;
  }
  const std::vector<int64_t> xv = x.to_vector<int64_t>(), yv = y.to_vector<int64_t>();
  for (size_t i = 0; i < xv.size(); ++i) {
    if (yv[i] != xv[i] + 1 || (i % 8 != 0 && xv[i] != xv[i - 1] + 1)) {
      ADD_FAILURE() << "row " << i / 8 << ": x and y are not consecutive windows with y = x shifted by one";
      return;
    }
  }
}

TEST(ex13_get_batch, every_start_from_0_to_n_minus_t_minus_1_is_drawn) {
  const int64_t n = 20, t = 5;
  Generator gen(1);
  std::set<int64_t> starts;
  for (int round = 0; round < 200; ++round) {
    const Tensor x = nn::get_batch(arange(n), 8, t, gen).first;
    for (int64_t b = 0; b < 8; ++b) starts.insert(x.at<int64_t>({b, 0}));
  }
  if (*starts.begin() != 0 || *starts.rbegin() != n - t - 1 || static_cast<int64_t>(starts.size()) != n - t)
    ADD_FAILURE() << "starts drawn: " << starts.size() << " distinct in [" << *starts.begin() << ", "
                  << *starts.rbegin() << "]; expected all of [0, " << n - t - 1 << "]";
}

TEST(ex13_get_batch, the_same_generator_state_gives_the_same_batch) {
  // One gen.integer(0, n - T) per sequence, in order: the documented draw.
  Generator a(5), b(5);
  const Tensor x = nn::get_batch(arange(50), 3, 4, a).first;
  for (int64_t row = 0; row < 3; ++row) {
    const int64_t start = b.integer(0, 50 - 4);
    if (x.at<int64_t>({row, 0}) != start) {
      ADD_FAILURE() << "row " << row << " starts at " << x.at<int64_t>({row, 0}) << ", expected " << start
                    << " (one gen.integer(0, n - T) per row, in order)";
      return;
    }
  }
}

}  // namespace
}  // namespace ropegrad::course
