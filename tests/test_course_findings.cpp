// What a failing course check says when it names no cause
// (course/checks/findings.h): each structure is stated only when it fits
// every wrong element, and nothing when none does.
#include <gtest/gtest.h>

#include "course/checks/findings.h"

namespace ropegrad::course {
namespace {

std::vector<bool> wrong_where(const std::vector<double>& got, const std::vector<double>& want) {
  std::vector<bool> wrong(got.size());
  for (size_t i = 0; i < got.size(); ++i) wrong[i] = !(std::abs(got[i] - want[i]) <= 1e-12);
  return wrong;
}

std::string structure(const std::vector<double>& got, const std::vector<double>& want, const Shape& shape) {
  return difference_structure(got, want, shape, wrong_where(got, want));
}

TEST(CourseFindings, RightValuesSayNothing) {
  EXPECT_EQ(structure({1, 2, 3}, {1, 2, 3}, {3}), "");
}

TEST(CourseFindings, ACommonFactorOrSignIsSaidOnlyWhenEveryElementFits) {
  EXPECT_EQ(structure({-1, -2, 3}, {1, 2, -3}, {3}), "every element is -1 x the expected (the sign of each is flipped)");
  EXPECT_EQ(structure({0.5, 1, 1.5, 2}, {1, 2, 3, 4}, {4}), "every element is 0.5 x the expected");
  EXPECT_EQ(structure({0.5, 1, 1.5, 2.5}, {1, 2, 3, 4}, {4}), "") << "one element off the factor: no factor said";
  EXPECT_EQ(structure({2.2}, {3.1}, {1}), "") << "a single value has a ratio to anything";
  EXPECT_EQ(structure({-3.1}, {3.1}, {1}), "every element is -1 x the expected (the sign of each is flipped)");
}

TEST(CourseFindings, TheWrongSliceIsNamedWhenItIsExactlyTheWrongElements) {
  // (2, 4): column 0 wrong in both rows, twice the expected there.
  EXPECT_EQ(structure({2, 2, 3, 4, 10, 6, 7, 8}, {1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}),
            "wrong exactly where dim 1's index is 0 (of 4), right elsewhere; each wrong element is 2 x the expected");
  // (3, 5): only the last column right: the right slice is named.
  EXPECT_EQ(structure({20, 20, 20, 20, 5, 20, 20, 20, 20, 10, 20, 20, 20, 20, 15},
                      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {3, 5}),
            "right only where dim 1's index is 4 (of 5), wrong elsewhere");
  // Column 0 of row 0 and column 1 of row 1: no slice.
  EXPECT_EQ(structure({9, 2, 3, 4, 5, 9, 7, 8}, {1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}), "");
}

TEST(CourseFindings, RowOffsetsAndTheFirstNonFiniteValue) {
  EXPECT_EQ(structure({2, 3, 4, 3, 4, 5}, {1, 2, 3, 1, 2, 3}, {2, 3}),
            "each row (along the last dim) is the expected plus a number of its own (row [0]: +1, row [1]: +2)");
  EXPECT_EQ(structure({1, NAN, 3, INFINITY}, {1, 2, 3, 4}, {2, 2}),
            "first non-finite value at [0, 1]: nan (2 of 4 elements are not finite; every expected value is finite)");
}

}  // namespace
}  // namespace ropegrad::course
