// io/fnv1a.h and io/edit_distance.h on known values.
#include <gtest/gtest.h>

#include <string>

#include "io/edit_distance.h"
#include "io/fnv1a.h"

namespace ropegrad {
namespace {

TEST(Fnv1a, KnownValuesAndPieces) {
  EXPECT_EQ(fnv1a(""), kFnv1aOffset);
  EXPECT_EQ(fnv1a("a"), 0xaf63dc4c8601ec8cull);       // the published FNV-1a 64 test vectors
  EXPECT_EQ(fnv1a("foobar"), 0x85944171f73967e8ull);
  EXPECT_EQ(fnv1a("bar", fnv1a("foo")), fnv1a("foobar"));  // in pieces = at once
  const int32_t ids[] = {1, 2};
  EXPECT_EQ(fnv1a_bytes(ids, sizeof(ids)), fnv1a(std::string("\x01\0\0\0\x02\0\0\0", 8)));
}

TEST(EditDistance, Levenshtein) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("same", "same"), 0u);
  EXPECT_EQ(edit_distance("--step", "--steps"), 1u);
  EXPECT_EQ(edit_distance("ex07-rmsnrom", "ex07-rmsnorm"), 2u);  // a swap is two edits
}

}  // namespace
}  // namespace ropegrad
