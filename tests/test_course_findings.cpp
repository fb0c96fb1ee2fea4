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

TEST(CourseFindings, ATransposeIsNamedOnlyWhenEveryElementIsTheSwappedOne) {
  // (2, 3, 3): each 3 x 3 matrix transposed.
  const std::vector<double> want = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  const std::vector<double> got = {1, 4, 7, 2, 5, 8, 3, 6, 9, 11, 14, 17, 12, 15, 18, 13, 16, 19};
  EXPECT_EQ(structure(got, want, {2, 3, 3}), "it is the expected with dims 1 and 2 swapped (a transpose)");
  std::vector<double> almost = got;
  almost[17] = 0;
  EXPECT_EQ(structure(almost, want, {2, 3, 3}).find("swapped"), std::string::npos) << "one element off";
}

TEST(CourseFindings, SlicesHoldingTheExpectedsNeighboursAreNamed) {
  // (4, 3): rows shifted up by one (an off-by-one in the row index); the last matches no row.
  const std::vector<double> want = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  EXPECT_EQ(structure({4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0}, want, {4, 3}),
            "along dim 0 (size 4), index 0 holds the expected's 1, index 1 holds the expected's 2, index 2 holds "
            "the expected's 3, index 3 holds none of them; the other indices are right");
  // Column 2 a copy of column 1, the others right.
  EXPECT_EQ(structure({1, 2, 2, 4, 5, 5, 7, 8, 8, 10, 11, 11}, want, {4, 3}),
            "along dim 1 (size 3), index 2 holds the expected's 1; the other indices are right");
  // Two rows matching none: no statement of moved slices.
  EXPECT_EQ(structure({4, 5, 6, 0, 0, 0, 0, 0, 1, 10, 11, 12}, want, {4, 3}).find("holds"), std::string::npos);
}

TEST(CourseFindings, AFactorPerRowIsNamedWhenEachRowHasOne) {
  EXPECT_EQ(structure({2, 4, 6, 2, 2.5, 3}, {1, 2, 3, 4, 5, 6}, {2, 3}),
            "each row (along the last dim) is the expected times a number of its own (row [0]: 2, row [1]: 0.5)");
  EXPECT_EQ(structure({2, 4, 6, 2, 2.5, 3.1}, {1, 2, 3, 4, 5, 6}, {2, 3}).find("number of its own"), std::string::npos);
}

TEST(CourseFindings, RowOffsetsAndTheFirstNonFiniteValue) {
  EXPECT_EQ(structure({2, 3, 4, 3, 4, 5}, {1, 2, 3, 1, 2, 3}, {2, 3}),
            "each row (along the last dim) is the expected plus a number of its own (row [0]: +1, row [1]: +2)");
  EXPECT_EQ(structure({1, NAN, 3, INFINITY}, {1, 2, 3, 4}, {2, 2}),
            "first non-finite value at [0, 1]: nan (2 of 4 elements are not finite; every expected value is finite)");
}

}  // namespace
}  // namespace ropegrad::course
