// Every registered attention variant (nn/attention_variants.h) has what
// docs/adding-an-attention-variant.md asks of it: its module, built through the
// registry; gradcheck cases in the catalogue (its module's and the language
// model's); a PyTorch parity fixture; its accounting; its chapter. A failure names
// the variant and what it lacks. The checking function is tested on a made-up
// entry too, so the test is seen to fail.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "catalog/module_catalog.h"
#include "nn/accounting.h"
#include "nn/attention_variants.h"
#include "tensor/random.h"
#include "tests/support/test_util.h"

namespace ropegrad::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kSource = std::string(ROPEGRAD_FIXTURES) + "/../..";  // the source tree

// A small model of the variant: D 8, H 2, L 1, V 7, context 4.
TransformerConfig small_config(AttentionKind kind) {
  TransformerConfig c;
  c.vocab_size = 7, c.context_length = 4, c.d_model = 8, c.num_heads = 2, c.num_layers = 1, c.d_ff = 16;
  c.attention = kind;
  return c;
}

bool in_catalogue(const std::string& name, const std::string& shapes_prefix) {
  const std::vector<ModuleCase>& cases = module_catalog();
  return std::any_of(cases.begin(), cases.end(), [&](const ModuleCase& c) {
    return c.name == name && c.shapes.rfind(shapes_prefix, 0) == 0;
  });
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What `v` lacks, one line each: "attention variant 'w2': <what is missing>". Empty when it has all.
std::vector<std::string> missing_parts(const AttentionVariant& v) {
  std::vector<std::string> missing;
  const auto lacks = [&](const std::string& what) {
    missing.push_back(fmt::format("attention variant '{}': {}", v.name, what));
  };
  const TransformerConfig config = small_config(v.kind);
  if (v.make == nullptr) {
    lacks("no module: its registry entry has no make (nn/attention_variants.cpp)");
  } else {
    Generator gen(1);
    const std::shared_ptr<AttentionLayer> layer = v.make(config, nullptr, &gen, DType::Float64);
    if (layer == nullptr) lacks("no module: its make returned null (nn/attention_variants.cpp)");
    else if (layer->forward(randn({1, 3, 8}, DType::Float64, &gen), AttentionCall::causal()).shape() != Shape{1, 3, 8})
      lacks("its module does not map (B, T, D) to (B, T, D)");
  }
  if (!in_catalogue(v.module, "")) {
    lacks(fmt::format("no gradcheck case of its module '{}' in the catalogue (catalog/module_catalog.cpp)", v.module));
  }
  if (!in_catalogue("transformer_lm", std::string(v.name) + ":")) {
    lacks("no gradcheck case 'transformer_lm' with it in the catalogue (catalog/module_catalog.cpp)");
  }
  const std::string fixture = fmt::format("tests/fixtures/{}.x.npy", v.fixture);
  if (!std::filesystem::exists(kSource + "/" + fixture)) {
    lacks(fmt::format("no parity fixture {} (tests/fixtures/make_*_fixtures.py)", fixture));
  }
  if (v.accounting == nullptr) {
    lacks("no accounting: its registry entry has no accounting (nn/accounting.cpp)");
  } else if (v.accounting(config).saved.empty()) {
    lacks("its accounting does not say what it saves for the backward (nn/accounting.cpp)");
  }
  const std::string chapter = v.chapter;
  const std::string page = chapter.rfind("docs/", 0) == 0 ? chapter.substr(5) : chapter;  // as mkdocs.yml names it
  if (!std::filesystem::exists(kSource + "/" + v.chapter)) {
    lacks(fmt::format("no chapter {}", v.chapter));
  } else if (read_text(kSource + "/mkdocs.yml").find(": " + page + "\n") == std::string::npos) {
    lacks(fmt::format("its chapter {} is not in mkdocs.yml's nav", v.chapter));
  }
  return missing;
}

TEST(AttentionVariants, EveryVariantHasItsModuleCasesFixtureAccountingAndChapter) {
  for (const AttentionVariant& v : attention_variants()) {
    EXPECT_THAT(missing_parts(v), ElementsAre()) << v.name;
  }
}

TEST(AttentionVariants, NamesAndKindsAreOneToOne) {
  for (const AttentionVariant& v : attention_variants()) {
    EXPECT_EQ(&attention_variant(v.kind), &v) << v.name;
    ASSERT_NE(find_attention_variant(v.name), nullptr) << v.name;
    EXPECT_EQ(find_attention_variant(v.name)->kind, v.kind) << v.name;
    EXPECT_EQ(parse_attention_kind(v.name), v.kind) << v.name;
    EXPECT_STREQ(attention_kind_name(v.kind), v.name);
    EXPECT_FALSE(std::string(v.description).empty()) << v.name;
  }
  EXPECT_EQ(find_attention_variant("quadratic"), nullptr);
  EXPECT_EQ(attention_variants().front().kind, AttentionKind::Standard);  // the default comes first
}

TEST(AttentionVariants, TheListReadsAsASentence) {
  const std::vector<std::string> names = attention_variant_names();
  std::string joined;
  for (size_t i = 0; i < names.size(); ++i) joined += (i == 0 ? "" : " | ") + names[i];
  EXPECT_EQ(attention_variant_list(" | ", " | "), joined);
  EXPECT_THAT(attention_variant_list(", ", " or "), HasSubstr(" or " + names.back()));
}

// The check fails, naming the variant and each missing part, for an entry that has none of them.
TEST(AttentionVariants, TheCheckNamesWhatAMadeUpVariantLacks) {
  const AttentionVariant made_up{AttentionKind::Standard, "made_up", "a variant with nothing behind it",
                                 "made_up_attention", "docs/99-made-up-attention.md", "variants/made_up",
                                 nullptr, nullptr};
  const std::vector<std::string> missing = missing_parts(made_up);
  EXPECT_THAT(missing,
              ElementsAre("attention variant 'made_up': no module: its registry entry has no make "
                          "(nn/attention_variants.cpp)",
                          "attention variant 'made_up': no gradcheck case of its module 'made_up_attention' in the "
                          "catalogue (catalog/module_catalog.cpp)",
                          "attention variant 'made_up': no gradcheck case 'transformer_lm' with it in the catalogue "
                          "(catalog/module_catalog.cpp)",
                          "attention variant 'made_up': no parity fixture tests/fixtures/variants/made_up.x.npy "
                          "(tests/fixtures/make_*_fixtures.py)",
                          "attention variant 'made_up': no accounting: its registry entry has no accounting "
                          "(nn/accounting.cpp)",
                          "attention variant 'made_up': no chapter docs/99-made-up-attention.md"));
  // A chapter that exists but is not in the book's nav is named too.
  AttentionVariant unlisted = attention_variants().front();
  unlisted.chapter = "CMakeLists.txt";
  EXPECT_THAT(missing_parts(unlisted), ElementsAre(fmt::format("attention variant '{}': its chapter CMakeLists.txt is "
                                                               "not in mkdocs.yml's nav", unlisted.name)));
}

}  // namespace
}  // namespace ropegrad::nn
