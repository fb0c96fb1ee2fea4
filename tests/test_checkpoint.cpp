// Step "checkpoint": nn::Module's walk over a model (names, state_dict,
// load_state_dict, to, zero_grad, train/eval), the safetensors format, training
// checkpoints and .npy files. Round trips are checked bit for bit; every
// corrupt input must be a ropegrad::Error that names the file and the problem
// (the suite also runs under ASan/UBSan, so "no crash" is checked too). The
// Python interop tests read ropegrad's files with numpy alone
// (tests/read_safetensors.py) and need /usr/bin/python3 with numpy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "autograd/ops.h"
#include "io/checkpoint.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "io/npy.h"
#include "optim/optim.h"
#include "io/safetensors.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::testing;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

// ---- helpers ----------------------------------------------------------------------------

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return s;
}

// A safetensors file from a header text and raw data bytes (no padding added).
std::string safetensors_bytes(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

template <typename T>
std::string raw(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// Same dtype, same shape and the same bytes (so NaN payloads and -0.0 count).
void expect_identical(const Tensor& got, const Tensor& want, const std::string& name = "") {
  SCOPED_TRACE(name);
  ASSERT_TRUE(got.defined());
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  const Tensor a = kernels::contiguous(got), b = kernels::contiguous(want);
  const size_t bytes = static_cast<size_t>(want.numel()) * element_size(want.dtype());
  if (bytes > 0) {
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), bytes), 0) << "bytes differ";
  }
}

void expect_same_dict(const nn::StateDict& got, const nn::StateDict& want) {
  std::vector<std::string> got_names, want_names;
  for (const auto& [name, t] : got) got_names.push_back(name);
  for (const auto& [name, t] : want) want_names.push_back(name);
  ASSERT_EQ(got_names, want_names);
  for (const auto& [name, t] : want) expect_identical(got.at(name), t, name);
}

// A float32 tensor of `shape` holding first, first + 0.25, first + 0.5, ...
// (exact in float32, so copies can be compared with ==).
Tensor counting(const Shape& shape, double first) {
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + 0.25 * static_cast<double>(i);
  return tensor(v, shape, DType::Float32);
}

// ---- a small model with every kind of member ----------------------------------------------

// y = x W^T + b
struct TinyLinear : nn::Module {
  Tensor weight;  // (d_out, d_in)
  Tensor bias;    // (d_out)
  TinyLinear(int64_t d_in, int64_t d_out, double first) {
    weight = register_parameter("weight", counting({d_out, d_in}, first));
    bias = register_parameter("bias", counting({d_out}, -first));
  }
  std::string type_name() const override { return "TinyLinear"; }
};

// A norm-like module with a persistent float buffer, a persistent int64
// buffer (like BatchNorm's num_batches_tracked) and a non-persistent cache.
struct TinyNorm : nn::Module {
  Tensor gain;          // (d) parameter
  Tensor running_mean;  // (d) persistent
  Tensor num_batches;   // () int64, persistent
  Tensor cache;         // (d, d) non-persistent: never saved
  explicit TinyNorm(int64_t d) {
    gain = register_parameter("gain", counting({d}, 1.0));
    running_mean = register_buffer("running_mean", counting({d}, -2.0));
    num_batches = register_buffer("num_batches", scalar_tensor(int64_t{41}, DType::Int64));
    cache = register_buffer("cache", counting({d, d}, 100.0), /*persistent=*/false);
  }
  std::string type_name() const override { return "TinyNorm"; }
};

// scale (2) | embed: 3 -> 2 | layers.i: 2 -> 2 | norm (2)
struct TinyNet : nn::Module {
  Tensor scale;  // (2)
  std::shared_ptr<TinyLinear> embed;
  std::shared_ptr<nn::ModuleList<TinyLinear>> layers;
  std::shared_ptr<TinyNorm> norm;
  explicit TinyNet(int n_layers = 2, double first = 0.5, int64_t d_in = 3) {
    scale = register_parameter("scale", counting({2}, first * 10));
    embed = register_module("embed", std::make_shared<TinyLinear>(d_in, 2, first));
    layers = register_module("layers", std::make_shared<nn::ModuleList<TinyLinear>>());
    for (int i = 0; i < n_layers; ++i) layers->push_back(std::make_shared<TinyLinear>(2, 2, first + i + 1));
    norm = register_module("norm", std::make_shared<TinyNorm>(2));
  }
  std::string type_name() const override { return "TinyNet"; }
};

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> out;
  for (const auto& [name, t] : named) out.push_back(name);
  return out;
}

std::vector<std::string> keys_of(const nn::StateDict& state) {
  std::vector<std::string> out;
  for (const auto& [name, t] : state) out.push_back(name);
  return out;
}

// A fresh directory per test, removed afterwards.
class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("ropegrad_ckpt_") + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" +
            info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir_)) out.push_back(entry.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_;
};

// ============================================================================================
// Module
// ============================================================================================

TEST(Module, NamedParametersAreDottedPathsInRegistrationOrder) {
  TinyNet net;
  // Own parameters first, then each child in registration order (as PyTorch).
  EXPECT_EQ(names_of(net.named_parameters()),
            (std::vector<std::string>{"scale", "embed.weight", "embed.bias", "layers.0.weight",
                                      "layers.0.bias", "layers.1.weight", "layers.1.bias", "norm.gain"}));
  // The named tensors are the module's own members, not copies.
  EXPECT_TRUE(net.named_parameters()[3].second.is_same(net.layers->operator[](0).weight));
  EXPECT_TRUE(net.named_parameters()[0].second.requires_grad());
  EXPECT_TRUE(net.named_parameters()[0].second.is_leaf());
  EXPECT_EQ(net.parameters().size(), 8u);
  EXPECT_EQ(names_of(net.named_buffers()),
            (std::vector<std::string>{"norm.running_mean", "norm.num_batches", "norm.cache"}));
  EXPECT_FALSE(net.named_buffers()[0].second.requires_grad());
}

TEST(Module, NumParametersCountsEveryElement) {
  // scale 2 + embed (2x3 + 2) + 2 layers x (2x2 + 2) + gain 2 = 24; buffers do not count.
  EXPECT_EQ(TinyNet(2).num_parameters(), 24);
  EXPECT_EQ(TinyNet(3).num_parameters(), 30);
  EXPECT_EQ(TinyNet(0).num_parameters(), 12);
}

TEST(Module, StateDictHoldsParametersAndPersistentBuffersOnly) {
  TinyNet net;
  const nn::StateDict state = net.state_dict();
  // Sorted names; "norm.cache" is non-persistent and left out.
  EXPECT_EQ(keys_of(state),
            (std::vector<std::string>{"embed.bias", "embed.weight", "layers.0.bias", "layers.0.weight",
                                      "layers.1.bias", "layers.1.weight", "norm.gain", "norm.num_batches",
                                      "norm.running_mean", "scale"}));
  // Detached views of the live data (torch: state_dict tensors share storage).
  const Tensor& w = state.at("layers.1.weight");
  EXPECT_TRUE(w.shares_storage_with(net.layers->operator[](1).weight));
  EXPECT_FALSE(w.requires_grad());
  EXPECT_EQ(w.shape(), (Shape{2, 2}));
  EXPECT_EQ(w.to_vector<double>(), (std::vector<double>{2.5, 2.75, 3.0, 3.25}));  // first = 0.5 + 1 + 1
  EXPECT_EQ(state.at("norm.num_batches").dtype(), DType::Int64);
  EXPECT_EQ(state.at("norm.num_batches").item<int64_t>(), 41);
  EXPECT_EQ(state.at("norm.running_mean").to_vector<double>(), (std::vector<double>{-2.0, -1.75}));
}

TEST(Module, LoadStateDictCopiesIntoTheSameTensors) {
  TinyNet source(2, 0.5), target(2, -7.0);
  const Tensor weight_before = target.embed->weight;
  target.load_state_dict(source.state_dict());
  for (const auto& [name, t] : source.state_dict()) expect_identical(target.state_dict().at(name), t, name);
  // Copied in place: same handle, still a trainable leaf; the cache is untouched.
  EXPECT_TRUE(target.embed->weight.is_same(weight_before));
  EXPECT_TRUE(target.embed->weight.requires_grad());
  EXPECT_TRUE(target.embed->weight.is_leaf());
  EXPECT_EQ(target.norm->num_batches.item<int64_t>(), 41);
  // Later changes to the source do not reach the target (a copy, not an alias).
  NoGradGuard no_grad;
  Tensor w = source.embed->weight;
  fill_(w, 9.0);
  EXPECT_EQ(target.embed->weight.at<double>({0, 0}), 0.5);
}

TEST(Module, LoadStateDictMissingKeyIsAnErrorNamingIt) {
  TinyNet net(2, -1.0);
  nn::StateDict state = TinyNet(2, 0.5).state_dict();
  state.erase("layers.1.bias");
  const std::string msg = error_of([&] { net.load_state_dict(state); });
  EXPECT_THAT(msg, HasSubstr("load_state_dict"));
  EXPECT_THAT(msg, HasSubstr("missing"));
  EXPECT_THAT(msg, HasSubstr("layers.1.bias"));
  // Nothing was copied: the check runs before any value changes.
  EXPECT_EQ(net.embed->weight.at<double>({0, 0}), -1.0);
}

TEST(Module, LoadStateDictUnexpectedKeyIsAnErrorNamingIt) {
  TinyNet net;
  nn::StateDict state = TinyNet(3).state_dict();  // one layer too many
  const std::string msg = error_of([&] { net.load_state_dict(state); });
  EXPECT_THAT(msg, HasSubstr("load_state_dict"));
  EXPECT_THAT(msg, HasSubstr("unexpected"));
  EXPECT_THAT(msg, HasSubstr("layers.2.weight"));
  EXPECT_THAT(msg, HasSubstr("layers.2.bias"));
}

TEST(Module, LoadStateDictWrongShapeNamesKeyAndBothShapes) {
  TinyNet net(2, -1.0);
  nn::StateDict state = TinyNet(2, 0.5, /*d_in=*/4).state_dict();  // embed.weight (2, 4)
  const std::string msg = error_of([&] { net.load_state_dict(state); });
  EXPECT_THAT(msg, HasSubstr("load_state_dict"));
  EXPECT_THAT(msg, HasSubstr("embed.weight"));
  EXPECT_THAT(msg, HasSubstr("[2, 4]"));  // checkpoint
  EXPECT_THAT(msg, HasSubstr("[2, 3]"));  // model
  EXPECT_EQ(net.scale.at<double>({0}), -10.0);  // untouched
  // A shape mismatch is an error even when not strict (as in PyTorch).
  EXPECT_THAT(error_of([&] { net.load_state_dict(state, /*strict=*/false); }), HasSubstr("embed.weight"));
}

TEST(Module, NonStrictLoadSkipsMissingAndUnexpectedKeys) {
  TinyNet net(2, -1.0);
  nn::StateDict state = TinyNet(3, 0.5).state_dict();
  state.erase("scale");
  net.load_state_dict(state, /*strict=*/false);
  EXPECT_EQ(net.scale.to_vector<double>(), (std::vector<double>{-10.0, -9.75}));  // missing: kept
  EXPECT_EQ(net.embed->bias.to_vector<double>(), (std::vector<double>{-0.5, -0.25}));  // loaded
}

TEST(Module, ToFloat64ConvertsParametersAndBuffersInPlace) {
  TinyNet net;
  const Tensor weight = net.embed->weight;  // a handle kept by "an optimizer"
  net.to(DType::Float64);
  for (const auto& [name, p] : net.named_parameters()) {
    EXPECT_EQ(p.dtype(), DType::Float64) << name;
    EXPECT_TRUE(p.requires_grad()) << name;
    EXPECT_TRUE(p.is_leaf()) << name;
  }
  // In place: every existing handle sees float64, values unchanged (float -> double is exact).
  EXPECT_EQ(weight.dtype(), DType::Float64);
  EXPECT_TRUE(weight.is_same(net.embed->weight));
  EXPECT_EQ(weight.to_vector<double>(), (std::vector<double>{0.5, 0.75, 1.0, 1.25, 1.5, 1.75}));
  EXPECT_EQ(net.norm->running_mean.dtype(), DType::Float64);
  EXPECT_EQ(net.norm->cache.dtype(), DType::Float64);
  EXPECT_EQ(net.norm->num_batches.dtype(), DType::Int64);  // integer buffers keep their dtype
  EXPECT_EQ(net.state_dict().at("norm.running_mean").dtype(), DType::Float64);
  // The converted model trains in float64: d/dW sum(W * W) = 2W.
  Tensor loss = sum(mul(net.embed->weight, net.embed->weight));
  backward(loss);
  ASSERT_TRUE(net.embed->weight.grad().defined());
  EXPECT_EQ(net.embed->weight.grad().dtype(), DType::Float64);
  EXPECT_EQ(net.embed->weight.grad().to_vector<double>(),
            (std::vector<double>{1.0, 1.5, 2.0, 2.5, 3.0, 3.5}));
}

TEST(Module, ToAnIntegerDtypeIsAnError) {
  TinyNet net;
  const std::string msg = error_of([&] { net.to(DType::Int64); });
  EXPECT_THAT(msg, HasSubstr("to"));
  EXPECT_THAT(msg, HasSubstr("int64"));
  EXPECT_EQ(net.scale.dtype(), DType::Float32);
}

TEST(Module, ZeroGradDropsEveryGradient) {
  TinyNet net;
  Tensor loss = sum(net.scale);
  for (const Tensor& p : net.parameters()) loss = add(loss, sum(mul(p, p)));
  backward(loss);
  for (const auto& [name, p] : net.named_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
  // d/d scale of sum(scale) + sum(scale^2) = 1 + 2 * scale = 1 + 2 * [5, 5.25]
  EXPECT_EQ(net.scale.grad().to_vector<double>(), (std::vector<double>{11.0, 11.5}));
  net.zero_grad();
  for (const auto& [name, p] : net.named_parameters()) EXPECT_FALSE(p.grad().defined()) << name;
}

TEST(Module, TrainAndEvalReachEverySubmodule) {
  TinyNet net;
  EXPECT_TRUE(net.is_training());
  net.eval();
  EXPECT_FALSE(net.is_training());
  EXPECT_FALSE(net.embed->is_training());
  EXPECT_FALSE(net.layers->is_training());
  EXPECT_FALSE(net.layers->operator[](1).is_training());
  EXPECT_FALSE(net.norm->is_training());
  net.train();
  EXPECT_TRUE(net.layers->operator[](0).is_training());
  EXPECT_TRUE(net.norm->is_training());
  net.layers->eval();  // a subtree alone
  EXPECT_TRUE(net.is_training());
  EXPECT_FALSE(net.layers->operator[](1).is_training());
}

TEST(Module, RegisteringABadNameIsAnError) {
  struct Dotted : nn::Module {
    Dotted() { register_parameter("a.b", zeros({2})); }
    std::string type_name() const override { return "Dotted"; }
  };
  struct Twice : nn::Module {
    Twice() {
      register_parameter("w", zeros({2}));
      register_buffer("w", zeros({2}));
    }
    std::string type_name() const override { return "Twice"; }
  };
  std::string msg = error_of([] { Dotted d; });
  EXPECT_THAT(msg, HasSubstr("Dotted"));
  EXPECT_THAT(msg, HasSubstr("'a.b'"));
  msg = error_of([] { Twice t; });
  EXPECT_THAT(msg, HasSubstr("Twice"));
  EXPECT_THAT(msg, HasSubstr("'w'"));
  EXPECT_THAT(msg, HasSubstr("already"));
}

// Weight tying (an LM head sharing the embedding): PyTorch lists a shared
// parameter once in parameters()/named_parameters() (under its first name) and
// counts it once, while state_dict keeps both names. An optimizer that saw it
// twice would update it twice per step.
TEST(Module, TiedParameterIsListedAndCountedOnce) {
  struct TiedHead : nn::Module {
    Tensor weight;
    explicit TiedHead(const Tensor& shared) { weight = register_parameter("weight", shared); }
  };
  struct Tied : nn::Module {
    std::shared_ptr<TinyLinear> a;
    std::shared_ptr<TiedHead> b;
    Tied() {
      a = register_module("a", std::make_shared<TinyLinear>(2, 2, 0.5));
      b = register_module("b", std::make_shared<TiedHead>(a->weight));
    }
  };
  Tied net;
  ASSERT_TRUE(net.b->weight.is_same(net.a->weight));
  EXPECT_EQ(names_of(net.named_parameters()), (std::vector<std::string>{"a.weight", "a.bias"}));
  EXPECT_EQ(net.parameters().size(), 2u);
  EXPECT_EQ(net.num_parameters(), 6);  // 2x2 weight once + 2 bias
  EXPECT_EQ(keys_of(net.state_dict()), (std::vector<std::string>{"a.bias", "a.weight", "b.weight"}));
}

// ============================================================================================
// safetensors
// ============================================================================================

// Tensors from exact bit patterns (NaN payloads, -0.0, denormals survive only a bit-exact copy).
Tensor f32_bits(const std::vector<uint32_t>& bits, const Shape& shape) {
  Tensor t = Tensor::empty(shape, DType::Float32);
  std::memcpy(t.raw_data(), bits.data(), bits.size() * sizeof(uint32_t));
  return t;
}

Tensor f64_bits(const std::vector<uint64_t>& bits, const Shape& shape) {
  Tensor t = Tensor::empty(shape, DType::Float64);
  std::memcpy(t.raw_data(), bits.data(), bits.size() * sizeof(uint64_t));
  return t;
}

// One tensor of each dtype, a 0-d one and two empty ones.
nn::StateDict every_kind_of_tensor() {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  return {
      // 0, -0, 1.5, inf, -inf, NaN with payload 1, smallest denormal, largest finite
      {"f32", f32_bits({0x00000000u, 0x80000000u, 0x3FC00000u, 0x7F800000u, 0xFF800000u, 0x7FC00001u,
                        0x00000001u, 0x7F7FFFFFu},
                       {2, 4})},
      {"f64", f64_bits({0x8000000000000000ull, 0x3FF8000000000000ull, 0x7FF8000000000123ull,
                        0x0000000000000001ull, 0x7FEFFFFFFFFFFFFFull, 0xBFB999999999999Aull},
                       {3, 1, 2})},
      {"i64", tensor_i64({kMin, -1, 0, 1, kMax, 1234567890123}, {2, 3})},
      {"bool", tensor_bool({true, false, false, true, true}, {5})},
      {"scalar", f64_bits({0x400A000000000000ull}, {})},  // 3.25, shape []
      {"empty", Tensor::empty({0}, DType::Float32)},
      {"empty_3d", Tensor::empty({2, 0, 3}, DType::Int64)},
  };
}

class SafetensorsTest : public FileTest {};

TEST_F(SafetensorsTest, RoundTripIsBitIdenticalForEveryDtype) {
  const nn::StateDict tensors = every_kind_of_tensor();
  const std::map<std::string, std::string> metadata = {{"step", "7"}, {"note", "caf\xC3\xA9 \"quoted\"\n\\"}};
  nn::save_safetensors(path("all.safetensors"), tensors, metadata);
  const nn::SafetensorsFile file = nn::load_safetensors(path("all.safetensors"));
  expect_same_dict(file.tensors, tensors);
  EXPECT_EQ(file.metadata, metadata);
  EXPECT_EQ(file.tensors.at("scalar").dim(), 0);
  EXPECT_EQ(file.tensors.at("scalar").item<double>(), 3.25);
  EXPECT_EQ(file.tensors.at("i64").at<int64_t>({0, 0}), std::numeric_limits<int64_t>::min());
  // Without metadata, the loaded metadata is empty.
  nn::save_safetensors(path("plain.safetensors"), tensors);
  EXPECT_TRUE(nn::load_safetensors(path("plain.safetensors")).metadata.empty());
}

TEST_F(SafetensorsTest, EmptyDictRoundTrips) {
  nn::save_safetensors(path("none.safetensors"), {});
  const nn::SafetensorsFile file = nn::load_safetensors(path("none.safetensors"));
  EXPECT_TRUE(file.tensors.empty());
  EXPECT_TRUE(file.metadata.empty());
}

TEST_F(SafetensorsTest, NonContiguousTensorIsStoredRowMajor) {
  const Tensor x = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float64);
  const Tensor xt = transpose(x, 0, 1);  // (3, 2), strides (1, 3)
  ASSERT_FALSE(xt.is_contiguous());
  nn::save_safetensors(path("t.safetensors"), {{"xt", xt}, {"tail", narrow(x, 1, 1, 2)}});
  const nn::SafetensorsFile file = nn::load_safetensors(path("t.safetensors"));
  EXPECT_EQ(file.tensors.at("xt").shape(), (Shape{3, 2}));
  EXPECT_EQ(file.tensors.at("xt").to_vector<double>(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(file.tensors.at("tail").to_vector<double>(), (std::vector<double>{2, 3, 5, 6}));
}

TEST_F(SafetensorsTest, FileLayoutFollowsTheSpec) {
  const nn::StateDict tensors = {{"b", tensor({1.5, -2.0}, DType::Float32)},
                                 {"a", scalar_tensor(int64_t{3}, DType::Int64)}};
  nn::save_safetensors(path("a.safetensors"), tensors, {{"k", "v"}});
  const std::string bytes = read_bytes(path("a.safetensors"));
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(n % 8, 0u) << "header padded to a multiple of 8";
  ASSERT_EQ(bytes.size(), 8 + n + 8 + 8) << "length field + header + int64 a + 2 float32 b";
  // Metadata first (with each tensor's CRC-32; the values are Python's
  // zlib.crc32 of the same bytes), tensors in name order and packed from
  // offset 0; spaces pad the JSON.
  const std::string json =
      R"({"__metadata__":{"crc32.a":"ebadd88a","crc32.b":"ccdf2c3a","k":"v"},)"
      R"("a":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";
  const std::string header = bytes.substr(8, n);
  EXPECT_EQ(header.substr(0, json.size()), json);
  EXPECT_EQ(header.substr(json.size()), std::string(n - json.size(), ' '));
  // Data: little-endian int64 3, then float32 1.5 and -2.0.
  EXPECT_EQ(bytes.substr(8 + n), raw<int64_t>({3}) + raw<float>({1.5f, -2.0f}));
}

// A flipped bit in a weight no longer loads without a word: every save
// stores each tensor's CRC-32 in the metadata, and load verifies it.
TEST_F(SafetensorsTest, AFlippedBitFailsTheChecksumNamingTheTensor) {
  Generator gen(3);
  const nn::StateDict tensors = {{"w", randn({4, 5}, DType::Float32, &gen)}, {"b", zeros({5})}};
  nn::save_safetensors(path("c.safetensors"), tensors, {{"k", "v"}});
  const nn::SafetensorsFile clean = nn::load_safetensors(path("c.safetensors"));
  EXPECT_EQ(clean.metadata, (std::map<std::string, std::string>{{"k", "v"}})) << "checksums are not user metadata";
  std::string bytes = read_bytes(path("c.safetensors"));
  // The data section ends with b (5 float32) and starts with w: flip one bit of w[0, 3].
  const size_t w_start = bytes.size() - 4 * (20 + 5) + 4 * 5;
  bytes[w_start + 4 * 3 + 1] ^= 0x10;
  write_bytes(path("c.safetensors"), bytes);
  EXPECT_RG_ERROR(nn::load_safetensors(path("c.safetensors")), "load_safetensors", path("c.safetensors"), "'w'",
                  "fails its checksum");
  EXPECT_RG_ERROR(nn::save_safetensors(path("d.safetensors"), tensors, {{"crc32.w", "0"}}), "reserved");
}

TEST_F(SafetensorsTest, ReadsAFileFromAnotherWriter) {
  // Spaced JSON, metadata last, \u escapes (a surrogate pair too), data not in name order.
  const std::string header =
      "{ \"z\" : {\"dtype\": \"I64\", \"shape\": [], \"data_offsets\": [4, 12]},\n"
      "  \"caf\\u00e9\\ud83d\\ude00\": {\"shape\": [1], \"data_offsets\": [0, 4], \"dtype\": \"F32\"},\n"
      "  \"e\": {\"dtype\": \"F64\", \"shape\": [0, 5], \"data_offsets\": [12, 12]},\n"
      "  \"__metadata__\": {\"a\\/b\": \"x\\ty\", \"q\": \"\\\"\\\\\"} }";
  write_bytes(path("other.safetensors"),
              safetensors_bytes(header, raw<float>({-0.5f}) + raw<int64_t>({-42})));
  const nn::SafetensorsFile file = nn::load_safetensors(path("other.safetensors"));
  EXPECT_EQ(keys_of(file.tensors), (std::vector<std::string>{"caf\xC3\xA9\xF0\x9F\x98\x80", "e", "z"}));
  expect_identical(file.tensors.at("z"), scalar_tensor(int64_t{-42}, DType::Int64));
  expect_identical(file.tensors.at("caf\xC3\xA9\xF0\x9F\x98\x80"), tensor({-0.5}, {1}, DType::Float32));
  EXPECT_EQ(file.tensors.at("e").shape(), (Shape{0, 5}));
  EXPECT_EQ(file.tensors.at("e").dtype(), DType::Float64);
  EXPECT_EQ(file.metadata, (std::map<std::string, std::string>{{"a/b", "x\ty"}, {"q", "\"\\"}}));
}

TEST_F(SafetensorsTest, NamesThatNeedEscapingRoundTrip) {
  const nn::StateDict tensors = {{"quote\"back\\slash", tensor({1.0})},
                                 {"new\nline\ttab\x01", tensor({2.0})},
                                 {"\xC3\xA9t\xC3\xA9", tensor({3.0})},
                                 {"", tensor({4.0})}};
  nn::save_safetensors(path("names.safetensors"), tensors, {{"\x1F key", "value\r"}});
  const nn::SafetensorsFile file = nn::load_safetensors(path("names.safetensors"));
  expect_same_dict(file.tensors, tensors);
  EXPECT_EQ(file.metadata.at("\x1F key"), "value\r");
}

// The save writes its own temporary file (PATH.<pid>.<random>.tmp) and
// leaves none; a file of the user's named like a temporary one is not its
// own, and is left as it was.
TEST_F(SafetensorsTest, SavingReplacesAnExistingFileWholeAndLeavesNoTmp) {
  nn::StateDict big = every_kind_of_tensor();
  big.emplace("large", zeros({64, 64}));
  nn::save_safetensors(path("model.safetensors"), big);
  write_bytes(path("model.safetensors.tmp"), "the user's notes, not a save's");
  const nn::StateDict small = {{"only", tensor({1.0, 2.0})}};
  nn::save_safetensors(path("model.safetensors"), small, {{"v", "2"}});
  EXPECT_EQ(listing(), (std::vector<std::string>{"model.safetensors", "model.safetensors.tmp"}));
  EXPECT_EQ(read_bytes(path("model.safetensors.tmp")), "the user's notes, not a save's");
  const nn::SafetensorsFile file = nn::load_safetensors(path("model.safetensors"));
  expect_same_dict(file.tensors, small);  // nothing of the old file survives
  EXPECT_EQ(file.metadata.at("v"), "2");
  EXPECT_EQ(fs::file_size(path("model.safetensors")), read_bytes(path("model.safetensors")).size());
  EXPECT_LT(fs::file_size(path("model.safetensors")), 200u);
}

TEST_F(SafetensorsTest, FailedSaveLeavesTheOldFileUntouched) {
  nn::save_safetensors(path("m.safetensors"), {{"w", tensor({1.0})}});
  const std::string before = read_bytes(path("m.safetensors"));

  const std::string file = path("m.safetensors");
  std::string msg = error_of([&] { nn::save_safetensors(file, {{"__metadata__", tensor({2.0})}}); });
  EXPECT_THAT(msg, HasSubstr("save_safetensors"));
  EXPECT_THAT(msg, HasSubstr("__metadata__"));
  msg = error_of([&] { nn::save_safetensors(file, {{"w", tensor({2.0})}, {"hole", Tensor()}}); });
  EXPECT_THAT(msg, HasSubstr("save_safetensors"));
  EXPECT_THAT(msg, HasSubstr("'hole'"));
  EXPECT_THAT(msg, HasSubstr("undefined"));
  msg = error_of([&] { nn::save_safetensors(path("m.safetensors"), {{"bad\xFFutf8", tensor({2.0})}}); });
  EXPECT_THAT(msg, HasSubstr("UTF-8"));

  EXPECT_EQ(read_bytes(path("m.safetensors")), before);
  EXPECT_EQ(listing(), (std::vector<std::string>{"m.safetensors"}));
}

TEST_F(SafetensorsTest, SavingIntoAMissingDirectoryIsAnError) {
  const std::string target = path("no_such_dir/m.safetensors");
  const std::string msg = error_of([&] { nn::save_safetensors(target, {{"w", tensor({1.0})}}); });
  EXPECT_THAT(msg, HasSubstr("save_safetensors"));
  EXPECT_THAT(msg, HasSubstr("no_such_dir/m.safetensors"));
  EXPECT_FALSE(fs::exists(target));
}

TEST_F(SafetensorsTest, MissingFileOrDirectoryIsAnError) {
  std::string msg = error_of([&] { nn::load_safetensors(path("absent.safetensors")); });
  EXPECT_THAT(msg, HasSubstr("load_safetensors"));
  EXPECT_THAT(msg, HasSubstr(path("absent.safetensors")));
  EXPECT_THAT(msg, HasSubstr("no such file"));
  msg = error_of([&] { nn::load_safetensors(dir_.string()); });
  EXPECT_THAT(msg, HasSubstr("load_safetensors"));
  EXPECT_THAT(msg, HasSubstr("not a regular file"));
}

TEST_F(SafetensorsTest, FileShorterThanTheLengthFieldIsAnError) {
  for (size_t size : {0, 1, 7}) {
    SCOPED_TRACE(size);
    write_bytes(path("short.safetensors"), std::string(size, '\x10'));
    const std::string msg = error_of([&] { nn::load_safetensors(path("short.safetensors")); });
    EXPECT_THAT(msg, HasSubstr("load_safetensors"));
    EXPECT_THAT(msg, HasSubstr(path("short.safetensors")));
    EXPECT_THAT(msg, HasSubstr(fmt::format("is {} bytes long, shorter than the 8-byte header length", size)));
  }
}

TEST_F(SafetensorsTest, EveryTruncationIsAnError) {
  nn::save_safetensors(path("full.safetensors"), every_kind_of_tensor(), {{"step", "3"}});
  const std::string bytes = read_bytes(path("full.safetensors"));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  ASSERT_LT(8 + n, bytes.size());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    SCOPED_TRACE(fmt::format("file cut to {} of {} bytes", cut, bytes.size()));
    write_bytes(path("cut.safetensors"), bytes.substr(0, cut));
    const std::string msg = error_of([&] { nn::load_safetensors(path("cut.safetensors")); });
    EXPECT_THAT(msg, HasSubstr("load_safetensors"));
    EXPECT_THAT(msg, HasSubstr(path("cut.safetensors")));
    if (cut < 8) EXPECT_THAT(msg, HasSubstr("shorter than the 8-byte header length"));
    else if (cut < 8 + n) EXPECT_THAT(msg, HasSubstr("header length"));
    else EXPECT_THAT(msg, HasSubstr("truncated"));
  }
}

TEST_F(SafetensorsTest, HeaderLengthLargerThanTheFileIsAnError) {
  const std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  const std::string data = raw<float>({1.0f});
  for (uint64_t n : {uint64_t{header.size() + data.size() + 1}, uint64_t{1} << 63,
                     std::numeric_limits<uint64_t>::max()}) {
    SCOPED_TRACE(n);
    write_bytes(path("big.safetensors"), le64(n) + header + data);
    const std::string msg = error_of([&] { nn::load_safetensors(path("big.safetensors")); });
    EXPECT_THAT(msg, HasSubstr("load_safetensors"));
    EXPECT_THAT(msg, HasSubstr(path("big.safetensors")));
    EXPECT_THAT(msg, HasSubstr(fmt::format("header length {} is larger than the {} bytes", n,
                                           header.size() + data.size())));
  }
}

struct BadFile {
  std::string label;
  std::string header;
  std::string data;
  std::vector<std::string> expected;  // substrings of the error message
};

void expect_each_is_an_error(const std::string& file, const std::vector<BadFile>& cases) {
  for (const BadFile& c : cases) {
    SCOPED_TRACE(c.label);
    write_bytes(file, safetensors_bytes(c.header, c.data));
    const std::string msg = error_of([&] { nn::load_safetensors(file); });
    EXPECT_THAT(msg, HasSubstr("load_safetensors: '" + file + "'"));
    for (const std::string& s : c.expected) EXPECT_THAT(msg, HasSubstr(s));
  }
}

TEST_F(SafetensorsTest, MalformedJsonIsAnError) {
  const std::string ok_entry = R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  const std::string f = raw<float>({1.0f});
  expect_each_is_an_error(
      path("bad.safetensors"),
      {
          {"not json", "not json", "", {"invalid JSON header at byte 0", "unexpected 'n'"}},
          {"empty header", "", "", {"unexpected end of header"}},
          {"lone brace", "{", "", {"expected a key string, found end of header"}},
          {"missing value", R"({"a":)", "", {"unexpected end of header"}},
          {"missing colon", R"({"a" 1})", "", {"expected ':'"}},
          {"trailing comma", R"({"a":)" + ok_entry + ",}", f, {"expected a key string, found '}'"}},
          {"unclosed object", R"({"a":)" + ok_entry, f, {"expected ',' or '}' in an object"}},
          {"garbage after the object", R"({"a":)" + ok_entry + "} x", f, {"after the top-level value"}},
          {"array at the top", "[1, 2]", "", {"the header must be a JSON object"}},
          {"string at the top", R"("a")", "", {"the header must be a JSON object"}},
          {"unterminated string", R"({"a": "abc)", "", {"unterminated string"}},
          {"bad escape", R"({"a\q": 1})", "", {"unknown escape '\\q'"}},
          {"bad \\u escape", R"({"a\u12G4": 1})", "", {"bad hex digit 'G'"}},
          {"short \\u escape", R"({"a\u12)", "", {"\\u escape"}},
          {"lone high surrogate", R"({"\ud800x": 1})", "", {"surrogate"}},
          {"lone low surrogate", R"({"\udc00": 1})", "", {"lone low surrogate"}},
          {"raw control character", "{\"a\x01\": 1}", "", {"raw control character 0x01"}},
          {"invalid UTF-8", "{\"a\xFF\": 1}", "", {"not valid UTF-8"}},
          {"overlong UTF-8", "{\"\xC0\xAF\": 1}", "", {"not valid UTF-8"}},
          {"literal true", R"({"a": true})", "",
           {"unexpected 't'", "only objects, arrays, strings and integers"}},
          {"literal null", R"({"a": null})", "", {"unexpected 'n'"}},
          {"float", R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", f, {"only integers"}},
          {"exponent", R"({"a":{"dtype":"F32","shape":[1e0],"data_offsets":[0,4]}})", f, {"only integers"}},
          {"leading zero", R"({"a":{"dtype":"F32","shape":[01],"data_offsets":[0,4]}})", f, {"leading zero"}},
          {"lone minus", R"({"a":{"dtype":"F32","shape":[-],"data_offsets":[0,4]}})", f,
           {"expected a digit"}},
          {"integer overflow",
           R"({"a":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,4]}})", f,
           {"out of the int64 range"}},
          {"deep nesting", "{\"a\":" + std::string(100000, '['), "", {"nested deeper than 64 levels"}},
          {"duplicate tensor name", R"({"a":)" + ok_entry + R"(,"a":)" + ok_entry + "}", f,
           {"duplicate key 'a'"}},
          {"duplicate field", R"({"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}})", f,
           {"duplicate key 'dtype'"}},
      });
}

TEST_F(SafetensorsTest, InconsistentTensorTableIsAnError) {
  const auto entry = [](const std::string& dtype, const std::string& shape, const std::string& offsets) {
    return R"({"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}";
  };
  const std::string f8 = raw<float>({1.0f, 2.0f});  // 8 bytes
  const std::string f12 = raw<float>({1.0f, 2.0f, 3.0f});
  expect_each_is_an_error(
      path("bad.safetensors"),
      {
          {"unknown dtype", R"({"w":)" + entry("F16", "[4]", "[0,8]") + "}", f8,
           {"tensor 'w' has unsupported dtype 'F16'"}},
          {"dtype not a string", R"({"w":{"dtype":4,"shape":[2],"data_offsets":[0,8]}})", f8,
           {"tensor 'w': dtype must be a string"}},
          {"wrong shape", R"({"w":)" + entry("F32", "[3]", "[0,8]") + "}", f8,
           {"tensor 'w' of shape [3] and dtype F32 needs 12 bytes, but data_offsets [0, 8] span 8"}},
          {"wrong dtype size", R"({"w":)" + entry("F64", "[2]", "[0,8]") + "}", f8, {"needs 16 bytes"}},
          {"overlapping offsets",
           R"({"a":)" + entry("F32", "[2]", "[0,8]") + R"(,"b":)" + entry("F32", "[2]", "[4,12]") + "}", f12,
           {"tensors 'a' and 'b' overlap", "[0, 8] and [4, 12]"}},
          {"gap between tensors",
           R"({"a":)" + entry("F32", "[1]", "[0,4]") + R"(,"b":)" + entry("F32", "[1]", "[8,12]") + "}", f12,
           {"data bytes [4, 8) are not covered by any tensor"}},
          {"trailing bytes", R"({"a":)" + entry("F32", "[1]", "[0,4]") + "}", f8,
           {"data bytes [4, 8) are not covered by any tensor"}},
          {"data but no tensors", "{}", f8, {"data bytes [0, 8) are not covered"}},
          {"offsets past the end", R"({"a":)" + entry("F32", "[100]", "[0,400]") + "}", f8,
           {"tensor 'a' has data_offsets [0, 400] past the end of the 8-byte data section"}},
          {"reversed offsets", R"({"a":)" + entry("F32", "[2]", "[8,0]") + "}", f8, {"begin after end"}},
          {"negative offset", R"({"a":)" + entry("F32", "[2]", "[-8,0]") + "}", f8,
           {"data_offsets holds the negative value -8"}},
          {"negative dimension", R"({"a":)" + entry("F32", "[-2]", "[0,8]") + "}", f8,
           {"shape holds the negative value -2"}},
          {"three offsets", R"({"a":)" + entry("F32", "[2]", "[0,4,8]") + "}", f8,
           {"data_offsets must be an array [begin, end]"}},
          {"shape not an array", R"({"a":)" + entry("F32", "2", "[0,8]") + "}", f8,
           {"shape must be an array"}},
          {"missing shape", R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", f8,
           {"tensor 'a' lacks 'shape'"}},
          {"unknown field", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", f8,
           {"tensor 'a' has an unknown field 'x'"}},
          {"entry not an object", R"({"a":[1,2]})", "", {"tensor 'a' must be an object"}},
          {"impossibly large shape",
           R"({"a":)" + entry("F32", "[4611686018427387904,4611686018427387904,0]", "[0,0]") + "}", "",
           {"impossibly large shape"}},
          {"metadata not an object", R"({"__metadata__":[1]})", "", {"__metadata__ must be an object"}},
          {"metadata value not a string", R"({"__metadata__":{"step":3}})", "",
           {"__metadata__ value for 'step' must be a string"}},
          {"bool byte not 0 or 1", R"({"m":)" + entry("BOOL", "[3]", "[0,3]") + "}",
           std::string("\x01\x00\x02", 3),
           {"BOOL tensor 'm' holds the byte 2 at element 2"}},
      });
}

// ============================================================================================
// checkpoints
// ============================================================================================

// What an AdamW would keep: moments per parameter and a step counter.
nn::StateDict optimizer_like_state() {
  return {{"exp_avg.embed.weight", counting({2, 3}, -0.125)},
          {"exp_avg_sq.embed.weight", tensor({1e-300, 2.5, 0.1, 0, 1, 2}, {2, 3}, DType::Float64)},
          {"step", scalar_tensor(int64_t{1234}, DType::Int64)},
          {"found_inf", tensor_bool({false}, {1})}};
}

class CheckpointTest : public FileTest {};

TEST_F(CheckpointTest, RoundTripRestoresModelOptimizerAndStep) {
  TinyNet trained(2, 0.5);
  {
    NoGradGuard no_grad;
    Tensor mean = trained.norm->running_mean;
    fill_(mean, -0.1);  // a value float32 cannot hold exactly: bits must survive anyway
  }
  nn::save_checkpoint(path("ckpt.safetensors"), trained, optimizer_like_state(), 1200);
  EXPECT_EQ(listing(), (std::vector<std::string>{"ckpt.safetensors"}));

  TinyNet resumed(2, -3.0);
  nn::StateDict optimizer = {{"stale", zeros({1})}};
  const int64_t step = nn::load_checkpoint(path("ckpt.safetensors"), resumed, &optimizer);
  EXPECT_EQ(step, 1200);
  expect_same_dict(resumed.state_dict(), trained.state_dict());
  expect_same_dict(optimizer, optimizer_like_state());  // replaced, "stale" gone
  // The non-persistent cache is not in the checkpoint and keeps the resumed model's value.
  EXPECT_EQ(resumed.norm->cache.at<double>({0, 0}), 100.0);
  // Loaded in place: parameters keep their identity and stay trainable.
  EXPECT_TRUE(resumed.named_parameters()[1].second.is_same(resumed.embed->weight));
  EXPECT_TRUE(resumed.embed->weight.requires_grad());
}

TEST_F(CheckpointTest, FileIsPlainSafetensorsWithPrefixedNames) {
  TinyNet net(1);
  nn::save_checkpoint(path("ckpt.safetensors"), net, optimizer_like_state(), 0);
  const nn::SafetensorsFile file = nn::load_safetensors(path("ckpt.safetensors"));
  EXPECT_EQ(keys_of(file.tensors),
            (std::vector<std::string>{"model.embed.bias", "model.embed.weight", "model.layers.0.bias",
                                      "model.layers.0.weight", "model.norm.gain", "model.norm.num_batches",
                                      "model.norm.running_mean", "model.scale",
                                      "optimizer.exp_avg.embed.weight", "optimizer.exp_avg_sq.embed.weight",
                                      "optimizer.found_inf", "optimizer.step"}));
  // The step and the format, and the checksum that covers them (the tensors' own are checked and dropped).
  EXPECT_EQ(file.metadata.size(), 3u);
  EXPECT_EQ(file.metadata.at("format"), "ropegrad-checkpoint-1");
  EXPECT_EQ(file.metadata.at("step"), "0");
  EXPECT_THAT(file.metadata.at("metadata_crc32"), ::testing::MatchesRegex("[0-9a-f]{8}"));
  expect_identical(file.tensors.at("model.layers.0.weight"), net.layers->operator[](0).weight.detach());
}

TEST_F(CheckpointTest, OptimizerStateMayBeIgnoredOrEmpty) {
  TinyNet trained(2, 0.5), resumed(2, 9.0);
  nn::save_checkpoint(path("a.safetensors"), trained, optimizer_like_state(), 5);
  EXPECT_EQ(nn::load_checkpoint(path("a.safetensors"), resumed, nullptr), 5);
  expect_same_dict(resumed.state_dict(), trained.state_dict());

  nn::save_checkpoint(path("b.safetensors"), trained, {}, nn::kMaxSteps);
  nn::StateDict optimizer = {{"stale", zeros({1})}};
  EXPECT_EQ(nn::load_checkpoint(path("b.safetensors"), resumed, &optimizer), nn::kMaxSteps);
  EXPECT_TRUE(optimizer.empty());
}

// A Linear(3, 2) and its AdamW after one step, saved as a checkpoint.
void save_stepped_linear(const std::string& file, const nn::AdamWOptions& options, bool with_settings = true) {
  Generator gen(0);
  nn::Linear model(3, 2, &gen);
  nn::AdamW opt(model.parameters(), options);
  backward(sum(model.forward(randn({4, 3}, kDefaultFloat, &gen))));
  opt.step();
  nn::StateDict state = opt.state_dict();
  if (!with_settings) {  // as checkpoints were written before the settings were saved
    for (auto it = state.begin(); it != state.end();) it = it->first.starts_with("settings.") ? state.erase(it) : ++it;
  }
  nn::save_checkpoint(file, model, state, 1);
}

TEST_F(CheckpointTest, TheOptimizerSettingsTravelInTheCheckpoint) {
  save_stepped_linear(path("ckpt.safetensors"), {.lr = 1e-3, .betas = {0.9, 0.95}, .weight_decay = 0.1});
  const nn::SafetensorsFile file = nn::load_safetensors(path("ckpt.safetensors"));
  EXPECT_EQ(file.tensors.at("optimizer.settings.beta2").item<double>(), 0.95);
  EXPECT_EQ(file.tensors.at("optimizer.settings.weight_decay").item<double>(), 0.1);

  nn::Linear model(3, 2);
  nn::AdamW other(model.parameters(), {.lr = 1e-3});  // betas (0.9, 0.999), weight decay 0.01
  nn::StateDict state;
  EXPECT_EQ(nn::load_checkpoint(path("ckpt.safetensors"), model, &state), 1);
  EXPECT_THAT(error_of([&] { other.load_state_dict(state); }),
              AllOf(HasSubstr("beta2 saved 0.95, this optimizer 0.999"),
                    HasSubstr("weight_decay saved 0.1, this optimizer 0.01")));
  other.load_state_dict(state, nn::OptimizerSettingsOnLoad::take_saved);
  EXPECT_EQ(other.betas().second, 0.95);
  EXPECT_EQ(other.weight_decay(), 0.1);
}

TEST_F(CheckpointTest, ACheckpointWithoutOptimizerSettingsStillLoads) {
  save_stepped_linear(path("old.safetensors"), {.lr = 1e-3, .betas = {0.9, 0.95}}, /*with_settings=*/false);
  nn::Linear model(3, 2);
  nn::AdamW opt(model.parameters(), {.lr = 1e-3});  // other betas: unknowable, so unchecked
  nn::StateDict state;
  EXPECT_EQ(nn::load_checkpoint(path("old.safetensors"), model, &state), 1);
  EXPECT_EQ(state.count("settings.beta2"), 0u);
  opt.load_state_dict(state);
  EXPECT_EQ(opt.step_count(), 1);
  EXPECT_EQ(opt.betas().second, 0.999) << "the optimizer keeps its own settings";
}

TEST_F(CheckpointTest, NegativeStepIsAnError) {
  TinyNet net;
  const std::string msg = error_of([&] { nn::save_checkpoint(path("c.safetensors"), net, {}, -1); });
  EXPECT_THAT(msg, HasSubstr("save_checkpoint"));
  EXPECT_THAT(msg, HasSubstr("-1"));
  EXPECT_FALSE(fs::exists(path("c.safetensors")));
  // Nor beyond the steps a run may have: what load_checkpoint would refuse is not written.
  EXPECT_RG_ERROR(nn::save_checkpoint(path("c.safetensors"), net, {}, nn::kMaxSteps + 1), "save_checkpoint",
                  "step must be in 0..1000000000000, got 1000000000001");
  EXPECT_FALSE(fs::exists(path("c.safetensors")));
}

// The metadata's checksum: any change to the step (or the format) is refused
// as an edit, naming the file; the checksum itself edited is refused too. A
// checkpoint without one (written before it) loads, its step range-checked.
TEST_F(CheckpointTest, TheMetadataHasAChecksum) {
  TinyNet net(2, 0.5), other(2, -1.0);
  nn::save_checkpoint(path("c.safetensors"), net, {}, 6);
  nn::SafetensorsFile file = nn::load_safetensors(path("c.safetensors"));
  const std::map<std::string, std::string> saved = file.metadata;
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"step", "3"}, {"step", "06"}, {"metadata_crc32", "12345678"}, {"extra", "1"}}) {
    SCOPED_TRACE(fmt::format("{}={}", key, value));
    std::map<std::string, std::string> edited = saved;
    edited[key] = value;
    nn::save_safetensors(path("e.safetensors"), file.tensors, edited);
    EXPECT_RG_ERROR(nn::load_checkpoint(path("e.safetensors"), other, nullptr), "load_checkpoint",
                    fmt::format("'{}': the metadata fails its checksum", path("e.safetensors")), "edited or is corrupt");
  }
  EXPECT_EQ(other.scale.to_vector<double>(), (std::vector<double>{-10.0, -9.75})) << "nothing loaded";
  std::map<std::string, std::string> old = saved;  // a checkpoint from before the checksum
  old.erase("metadata_crc32");
  old["step"] = "3";
  nn::save_safetensors(path("old.safetensors"), file.tensors, old);
  EXPECT_EQ(nn::load_checkpoint(path("old.safetensors"), other, nullptr), 3);
}

TEST_F(CheckpointTest, FileThatIsNotACheckpointIsAnError) {
  TinyNet net(2, 0.5);
  const nn::StateDict model_tensors = {{"model.scale", zeros({2})}};
  struct Case {
    std::string label;
    nn::StateDict tensors;
    std::map<std::string, std::string> metadata;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"no metadata", net.state_dict(), {}, {"is not a ropegrad checkpoint", "no 'format'"}},
      {"other format", model_tensors, {{"format", "pt"}, {"step", "1"}},
       {"is not a ropegrad checkpoint", "format 'pt'", "ropegrad-checkpoint-1"}},
      {"no step", model_tensors, {{"format", "ropegrad-checkpoint-1"}}, {"has no 'step'"}},
      {"step not a number", model_tensors, {{"format", "ropegrad-checkpoint-1"}, {"step", "12x"}},
       {"the metadata's step '12x' is not a number; expected a whole number of steps in 0..1000000000000"}},
      {"negative step", model_tensors, {{"format", "ropegrad-checkpoint-1"}, {"step", "-3"}},
       {"the metadata's step '-3' is outside the range"}},
      {"step overflow", model_tensors,
       {{"format", "ropegrad-checkpoint-1"}, {"step", "99999999999999999999"}},
       {"step '99999999999999999999' is outside the range"}},
      // int64's largest: step + 1 overflowed in train (the sanitizer blamed cosine_lr); refused as it is read.
      {"step INT64_MAX", model_tensors, {{"format", "ropegrad-checkpoint-1"}, {"step", "9223372036854775807"}},
       {"step '9223372036854775807' is outside the range; expected a whole number of steps in 0..1000000000000"}},
      {"fractional step", model_tensors, {{"format", "ropegrad-checkpoint-1"}, {"step", "2.5"}},
       {"step '2.5' is not a whole number"}},
      {"edited step", model_tensors,
       {{"format", "ropegrad-checkpoint-1"}, {"step", "3"}, {"metadata_crc32", "00000000"}},
       {"the metadata fails its checksum (CRC-32 00000000 stored", "step '3'", "edited or is corrupt"}},
      {"unprefixed tensor", {{"scale", zeros({2})}}, {{"format", "ropegrad-checkpoint-1"}, {"step", "1"}},
       {"tensor 'scale' is neither 'model.*' nor 'optimizer.*'"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    nn::save_safetensors(path("x.safetensors"), c.tensors, c.metadata);
    nn::StateDict optimizer = {{"kept", ones({1})}};
    const std::string msg = error_of([&] { nn::load_checkpoint(path("x.safetensors"), net, &optimizer); });
    EXPECT_THAT(msg, HasSubstr("load_checkpoint: '" + path("x.safetensors") + "'"));
    for (const std::string& s : c.expected) EXPECT_THAT(msg, HasSubstr(s));
    EXPECT_EQ(keys_of(optimizer), (std::vector<std::string>{"kept"}));  // untouched on error
  }
  EXPECT_EQ(net.scale.to_vector<double>(), (std::vector<double>{5.0, 5.25}));
  // A corrupt file reports the safetensors problem.
  write_bytes(path("junk.safetensors"), "junk");
  EXPECT_THAT(error_of([&] { nn::load_checkpoint(path("junk.safetensors"), net, nullptr); }),
              HasSubstr("shorter than the 8-byte header length"));
}

TEST_F(CheckpointTest, CheckpointOfAnotherModelNamesTheKeys) {
  nn::save_checkpoint(path("three.safetensors"), TinyNet(3, 0.5), optimizer_like_state(), 10);
  nn::save_checkpoint(path("wide.safetensors"), TinyNet(2, 0.5, /*d_in=*/5), {}, 10);
  nn::save_checkpoint(path("one.safetensors"), TinyNet(1, 0.5), {}, 10);
  TinyNet net(2, -1.0);
  nn::StateDict optimizer = {{"kept", ones({1})}};

  std::string msg = error_of([&] { nn::load_checkpoint(path("three.safetensors"), net, &optimizer); });
  EXPECT_THAT(msg, HasSubstr("load_checkpoint: '" + path("three.safetensors") + "'"));
  EXPECT_THAT(msg, HasSubstr("unexpected"));
  EXPECT_THAT(msg, HasSubstr("layers.2.weight"));

  msg = error_of([&] { nn::load_checkpoint(path("wide.safetensors"), net, &optimizer); });
  EXPECT_THAT(msg, HasSubstr("embed.weight"));
  EXPECT_THAT(msg, HasSubstr("[2, 5]"));
  EXPECT_THAT(msg, HasSubstr("[2, 3]"));

  msg = error_of([&] { nn::load_checkpoint(path("one.safetensors"), net, &optimizer); });
  EXPECT_THAT(msg, HasSubstr("missing"));
  EXPECT_THAT(msg, HasSubstr("layers.1.weight"));

  // Nothing changed on any failure.
  EXPECT_EQ(net.embed->weight.at<double>({0, 0}), -1.0);
  EXPECT_EQ(keys_of(optimizer), (std::vector<std::string>{"kept"}));
}

// Optimizer state holds int64 counters (steps, RNG offsets) that must survive
// exactly; torch.full((), 2**53 + 1, dtype=torch.int64) keeps every bit.
TEST_F(CheckpointTest, Int64ScalarAbove2To53SurvivesExactly) {
  constexpr int64_t kBig = (int64_t{1} << 53) + 1;  // not representable as a double
  const Tensor made = scalar_tensor(kBig, DType::Int64);
  EXPECT_EQ(made.item<int64_t>(), kBig) << "scalar_tensor(int64) went through double";
  const Tensor exact = reshape(tensor_i64({kBig, -kBig}), {2});
  nn::save_safetensors(path("i.safetensors"), {{"exact", exact}, {"made", made}});
  const nn::SafetensorsFile file = nn::load_safetensors(path("i.safetensors"));
  EXPECT_EQ(file.tensors.at("exact").to_vector<int64_t>(), (std::vector<int64_t>{kBig, -kBig}));
  EXPECT_EQ(file.tensors.at("made").item<int64_t>(), kBig);
}

// ============================================================================================
// .npy
// ============================================================================================

class NpyTest : public FileTest {};

const std::string kNpyFixtures = fixture_path("checkpoint/");

TEST_F(NpyTest, RoundTripIsBitIdenticalForEveryDtype) {
  for (const auto& [name, t] : every_kind_of_tensor()) {
    SCOPED_TRACE(name);
    nn::save_npy(path(name + ".npy"), t);
    expect_identical(nn::load_npy(path(name + ".npy")), t, name);
  }
  // A transposed view is written in its logical row-major order.
  const Tensor xt = transpose(tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float32), 0, 1);
  nn::save_npy(path("xt.npy"), xt);
  const Tensor back = nn::load_npy(path("xt.npy"));
  EXPECT_EQ(back.shape(), (Shape{3, 2}));
  EXPECT_EQ(back.to_vector<double>(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST_F(NpyTest, HeaderIsWhatNumpyWrites) {
  nn::save_npy(path("a.npy"), tensor({1.0, 2.0, 3.0}, DType::Float64));
  const std::string bytes = read_bytes(path("a.npy"));
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);  // data aligned as numpy does
  const std::string header = bytes.substr(10, header_len);
  EXPECT_THAT(header, HasSubstr("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"));
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes.substr(10 + header_len), raw<double>({1.0, 2.0, 3.0}));
}

TEST_F(NpyTest, ReadsFilesWrittenByNumpy) {
  Tensor t = nn::load_npy(kNpyFixtures + "f4_2x3.npy");
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{0, 0.25, 0.5, 0.75, 1.0, 1.25}));

  t = nn::load_npy(kNpyFixtures + "f8_3.npy");
  EXPECT_EQ(t.dtype(), DType::Float64);
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{-1.5, 0.0, std::ldexp(1.0, -30)}));

  t = nn::load_npy(kNpyFixtures + "i8_2x2.npy");
  EXPECT_EQ(t.dtype(), DType::Int64);
  EXPECT_EQ(t.shape(), (Shape{2, 2}));
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{-(int64_t{1} << 62), -1, 0, int64_t{1} << 62}));

  t = nn::load_npy(kNpyFixtures + "i4_4.npy");  // int32 is widened to int64
  EXPECT_EQ(t.dtype(), DType::Int64);
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{-2147483648LL, -1, 7, 2147483647}));

  t = nn::load_npy(kNpyFixtures + "b1_3.npy");
  EXPECT_EQ(t.dtype(), DType::Bool);
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1}));

  t = nn::load_npy(kNpyFixtures + "f8_scalar.npy");
  EXPECT_EQ(t.dim(), 0);
  EXPECT_EQ(t.item<double>(), 3.25);

  t = nn::load_npy(kNpyFixtures + "f4_empty_0x3.npy");
  EXPECT_EQ(t.shape(), (Shape{0, 3}));
  EXPECT_EQ(t.dtype(), DType::Float32);

  t = nn::load_npy(kNpyFixtures + "f8_2_v2.npy");  // version 2.0 header
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1.0, -2.0}));
}

TEST_F(NpyTest, UnsupportedLayoutsAreErrors) {
  std::string msg = error_of([] { nn::load_npy(kNpyFixtures + "f4_fortran_2x3.npy"); });
  EXPECT_THAT(msg, HasSubstr("load_npy"));
  EXPECT_THAT(msg, HasSubstr("f4_fortran_2x3.npy"));
  EXPECT_THAT(msg, HasSubstr("Fortran"));
  msg = error_of([] { nn::load_npy(kNpyFixtures + "f2_2.npy"); });
  EXPECT_THAT(msg, HasSubstr("load_npy"));
  EXPECT_THAT(msg, HasSubstr("f2_2.npy"));
  EXPECT_THAT(msg, HasSubstr("unsupported dtype '<f2'"));
  msg = error_of([] { nn::load_npy(kNpyFixtures + "f4_bigendian_2.npy"); });
  EXPECT_THAT(msg, HasSubstr("unsupported dtype '>f4'"));
}

TEST_F(NpyTest, BadMagicMissingFileAndTruncationAreErrors) {
  write_bytes(path("bad.npy"), "PK\x03\x04 this is a zip file, not an npy file at all......");
  std::string msg = error_of([&] { nn::load_npy(path("bad.npy")); });
  EXPECT_THAT(msg, HasSubstr("load_npy"));
  EXPECT_THAT(msg, HasSubstr(path("bad.npy")));
  EXPECT_THAT(msg, HasSubstr("bad magic"));

  msg = error_of([&] { nn::load_npy(path("absent.npy")); });
  EXPECT_THAT(msg, HasSubstr("load_npy"));
  EXPECT_THAT(msg, HasSubstr(path("absent.npy")));

  const std::string bytes = read_bytes(kNpyFixtures + "f4_2x3.npy");
  ASSERT_EQ(bytes.size(), 128u + 24u);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    SCOPED_TRACE(fmt::format("cut to {} bytes", cut));
    write_bytes(path("cut.npy"), bytes.substr(0, cut));
    msg = error_of([&] { nn::load_npy(path("cut.npy")); });
    EXPECT_THAT(msg, HasSubstr("load_npy"));
    EXPECT_THAT(msg, HasSubstr(path("cut.npy")));
    if (cut >= 10) {
      EXPECT_THAT(msg, HasSubstr("truncated"));
    }
  }
  // Extra bytes after the data are corrupt too.
  write_bytes(path("long.npy"), bytes + "xxxx");
  EXPECT_THAT(error_of([&] { nn::load_npy(path("long.npy")); }), HasSubstr("data has 28 bytes"));
}

TEST_F(NpyTest, ImpossiblyLargeShapeIsAnErrorNotACrash) {
  // shape (2^62, 2) of float32 needs 2^65 bytes; a wrapped size computation would think 0.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 2), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  write_bytes(path("huge.npy"),
              std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header);
  const std::string msg = error_of([&] { nn::load_npy(path("huge.npy")); });
  EXPECT_THAT(msg, HasSubstr("load_npy"));
  EXPECT_THAT(msg, HasSubstr("4611686018427387904"));
}

// A zero dimension beside huge ones holds no element, but its strides would
// overflow int64 (undefined behaviour in the stride computation, found by
// fuzzing): the header is refused with the file and the shape named.
TEST_F(NpyTest, ZeroDimensionBesideHugeOnesIsAnError) {
  for (const std::string shape : {"(0, 4611686018427387904, 4)", "(0, 0, 2305843009213693952, 8)"}) {
    SCOPED_TRACE(shape);
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    header.append(64 - (10 + header.size() + 1) % 64, ' ');
    header += '\n';
    write_bytes(path("zero_huge.npy"),
                std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header);
    const std::string msg = error_of([&] { nn::load_npy(path("zero_huge.npy")); });
    EXPECT_THAT(msg, HasSubstr("load_npy"));
    EXPECT_THAT(msg, HasSubstr(path("zero_huge.npy")));
    EXPECT_THAT(msg, HasSubstr(shape));
  }
}

// The same shapes built in memory: the stride computation refuses them too,
// so save_npy never loops over a wrapped stride.
TEST_F(NpyTest, TensorsWhoseStridesOverflowCannotBeCreated) {
  EXPECT_RG_ERROR(Tensor::empty({0, 0, int64_t{1} << 61, 8}, DType::Float32), "tensor",
                  "[0, 0, 2305843009213693952, 8]", "overflow");
  EXPECT_RG_ERROR(zeros({0, int64_t{1} << 62, 4}), "tensor", "overflow");
}

// A version 1.0 .npy of `dict` (padded as numpy pads it) and `data`.
std::string npy_bytes(std::string dict, const std::string& data = "") {
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(dict.size() & 0xFF) +
         static_cast<char>(dict.size() >> 8) + dict + data;
}

// Issue 20: (0, 2^61) of float64 holds no element and its span, 2^61
// elements, fits in int64; its span in bytes (2^61 * 8) does not. It loaded,
// and save_npy -> contiguous -> copy_into then overflowed computing the byte
// stride (UBSan: tensor/elementwise.h:34, 2305843009213693952 * 8). The file
// is refused when read, naming it, the shape and the dtype, for every dtype
// whose size in memory makes the bytes overflow ('<u2' becomes int64: 8 bytes).
TEST_F(NpyTest, ShapeWhoseSizeInBytesOverflowsInt64IsAnError) {
  for (const std::string descr : {"<f8", "<i8", "<u2", "<i4"}) {
    SCOPED_TRACE(descr);
    write_bytes(path("bytes.npy"),
                npy_bytes("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (0, 2305843009213693952), }"));
    EXPECT_RG_ERROR(nn::load_npy(path("bytes.npy")), "load_npy", path("bytes.npy"), "(0, 2305843009213693952)",
                    "more bytes than int64");
  }
  // 2^60 float32 elements of span, 2^62 bytes: within int64, so it loads, empty,
  // and the round trip through save_npy is exact.
  write_bytes(path("ok.npy"),
              npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 1152921504606846976), }"));
  const Tensor t = nn::load_npy(path("ok.npy"));
  EXPECT_EQ(t.shape(), (Shape{0, int64_t{1} << 60}));
  nn::save_npy(path("ok2.npy"), t);
  EXPECT_EQ(nn::load_npy(path("ok2.npy")).shape(), (Shape{0, int64_t{1} << 60}));
  // In memory too: such a tensor cannot be made.
  EXPECT_RG_ERROR(Tensor::empty({0, int64_t{1} << 61}, DType::Float64), "empty", "[0, 2305843009213693952]",
                  "float64", "bytes overflow int64");
  EXPECT_RG_ERROR(zeros({0, int64_t{1} << 61}, DType::Int64), "bytes overflow int64");
}

// Issue 20: the header is a Python literal and is read as numpy reads it;
// '(two 2 by 3 three)' was read as (2, 3) and 'Falsehood' as False.
TEST_F(NpyTest, HeaderIsReadAsStrictlyAsNumpyReadsIt) {
  const std::string data(24, '\0');  // six float32 zeros, right for (2, 3)
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (two 2 by 3 three), }", "expected an integer"},
      {"{'descr': '<f4', 'fortran_order': Falsehood, 'shape': (2, 3), }", "'Falsehood'"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (2, 3), }", "'false'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", "expected ',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, }", "expected an integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6), }", "not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (02, 3), }", "leading zero"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2.0, 3), }", "not an integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", "negative dimension -2"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 3), }", "does not fit in int64"},
      {"{'descr': '<f4', 'fortran_order': False, }", "no 'shape' key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1, }", "unexpected key 'extra'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "'descr' appears twice"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } trailing", "after the closing '}'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3), }", "expected ',' or '}'"},
      {"{'descr': <f4, 'fortran_order': False, 'shape': (2, 3), }", "must be a quoted string"},
      {"'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "expected '{'"},
      // A NUL and a CR in the header are shown as \x00 and \r, not cut off or printed raw.
      {std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2,") + '\0' + " 3), }", "\\x00 3)"},
      {"{'descr': '<f4', 'fortran_order': False,\r 'shape': (2, 3) x}", "False,\\r 'shape'"},
  };
  for (const auto& [dict, why] : bad) {
    SCOPED_TRACE(dict);
    write_bytes(path("strict.npy"), npy_bytes(dict, data));
    const std::string msg = error_of([&] { nn::load_npy(path("strict.npy")); });
    EXPECT_THAT(msg, HasSubstr("load_npy: '" + path("strict.npy") + "': malformed .npy header"));
    EXPECT_THAT(msg, HasSubstr(why));
    EXPECT_EQ(msg.find('\0'), std::string::npos);
    EXPECT_EQ(msg.find('\r'), std::string::npos);
  }
  // What Python's literal syntax allows and numpy accepts still loads.
  for (const std::string dict : {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,3)}",
                                 "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3,), }",
                                 "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}"}) {
    SCOPED_TRACE(dict);
    write_bytes(path("loose.npy"), npy_bytes(dict, data));
    EXPECT_EQ(nn::load_npy(path("loose.npy")).shape(), (Shape{2, 3}));
  }
  // A directory is said to be one.
  EXPECT_RG_ERROR(nn::load_npy(dir_.string()), "load_npy", "is a directory");
}

// ============================================================================================
// Python interop: numpy alone reads what ropegrad writes, and ropegrad reads what it writes
// ============================================================================================

const std::string kPython = "/usr/bin/python3";
const std::string kReader = fixture_path("../read_safetensors.py");

// Exit status of a shell command (stdout and stderr go to `log`).
int run(const std::string& command, const std::string& log) {
  const int status = std::system((command + " > '" + log + "' 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class PythonInterop : public FileTest {
 protected:
  void SetUp() override {
    FileTest::SetUp();
    ASSERT_EQ(run(kPython + " -c 'import numpy'", path("probe.log")), 0)
        << "these tests need /usr/bin/python3 with numpy (Debian: apt-get install python3-numpy)";
  }
};

TEST_F(PythonInterop, StateDictReadsWithNumpy) {
  TinyNet net(2, 0.5);
  nn::StateDict state = net.state_dict();
  // numpy reads every tensor as the same bytes that save_npy writes ...
  fs::create_directories(dir_ / "npy");
  for (const auto& [name, t] : state) nn::save_npy(path("npy/" + name + ".npy"), t);
  // ... and, for tensors checked by hand-written values instead:
  state.emplace("extra.mask", tensor_bool({true, false, false, true}, {2, 2}));
  state.emplace("extra.ids", reshape(tensor_i64({-9007199254740993}), {}));  // -(2^53 + 1), 0-d
  state.emplace("extra.empty", Tensor::empty({0, 2}, DType::Float64));
  state.emplace("extra.special", tensor({-0.0, 1e-310, std::numeric_limits<double>::infinity()}, {3},
                                        DType::Float64));
  nn::save_safetensors(path("state.safetensors"), state, {{"step", "3"}, {"note", "caf\xC3\xA9"}});

  const std::string base = kPython + " '" + kReader + "' '" + path("state.safetensors") + "' --npy-dir '" +
                           path("npy") + "' --metadata 'step=3' --metadata 'note=caf\xC3\xA9'";
  const std::string expects =
      " --expect 'extra.mask=bool[2,2]:1,0,0,1' --expect 'extra.ids=int64[]:-9007199254740993'"
      " --expect 'extra.empty=float64[0,2]:' --expect 'extra.special=float64[3]:-0.0,1e-310,inf'"
      " --expect 'embed.weight=float32[2,3]:0.5,0.75,1,1.25,1.5,1.75'";
  EXPECT_EQ(run(base + expects, path("ok.log")), 0) << read_bytes(path("ok.log"));

  // The checker can fail: one wrong value, a wrong sign of zero, a missing check.
  EXPECT_EQ(run(base + expects + " --expect 'embed.bias=float32[2]:-0.5,-0.24'", path("bad1.log")), 1)
      << read_bytes(path("bad1.log"));
  const std::string wrong_zero =
      " --expect 'extra.mask=bool[2,2]:1,0,0,1' --expect 'extra.ids=int64[]:-9007199254740993'"
      " --expect 'extra.empty=float64[0,2]:' --expect 'extra.special=float64[3]:0.0,1e-310,inf'";
  EXPECT_EQ(run(base + wrong_zero, path("bad2.log")), 1) << read_bytes(path("bad2.log"));
  EXPECT_EQ(run(base, path("bad3.log")), 1) << read_bytes(path("bad3.log"));
  EXPECT_THAT(read_bytes(path("bad3.log")), HasSubstr("FAIL extra.mask: not checked"));
}

TEST_F(PythonInterop, CheckpointReadsWithNumpy) {
  nn::save_checkpoint(path("ckpt.safetensors"), TinyNet(1, 0.5),
                      {{"step", scalar_tensor(int64_t{7}, DType::Int64)}}, 42);
  const std::string cmd =
      kPython + " '" + kReader + "' '" + path("ckpt.safetensors") +
      "' --metadata 'format=ropegrad-checkpoint-1' --metadata 'step=42'"
      " --expect 'optimizer.step=int64[]:7' --expect 'model.scale=float32[2]:5,5.25'"
      " --expect 'model.embed.weight=float32[2,3]:0.5,0.75,1,1.25,1.5,1.75'"
      " --expect 'model.embed.bias=float32[2]:-0.5,-0.25'"
      " --expect 'model.layers.0.weight=float32[2,2]:1.5,1.75,2,2.25'"
      " --expect 'model.layers.0.bias=float32[2]:-1.5,-1.25'"
      " --expect 'model.norm.gain=float32[2]:1,1.25' --expect 'model.norm.running_mean=float32[2]:-2,-1.75'"
      " --expect 'model.norm.num_batches=int64[]:41'";
  EXPECT_EQ(run(cmd, path("ckpt.log")), 0) << read_bytes(path("ckpt.log"));
}

TEST_F(PythonInterop, RopegradReadsAFileWrittenWithNumpy) {
  ASSERT_EQ(run(kPython + " '" + kReader + "' --write '" + path("np.safetensors") + "'", path("w.log")), 0)
      << read_bytes(path("w.log"));
  const nn::SafetensorsFile file = nn::load_safetensors(path("np.safetensors"));
  const std::string cafe = "caf\xC3\xA9 \"q\"";
  EXPECT_EQ(keys_of(file.tensors), (std::vector<std::string>{"a.count", "b.weight", cafe, "empty", "mask"}));
  expect_identical(file.tensors.at("b.weight"), tensor({0.5, -1.0, 2.0, 0.0}, {2, 2}, DType::Float32));
  expect_identical(file.tensors.at("a.count"), scalar_tensor(int64_t{7}, DType::Int64));
  expect_identical(file.tensors.at(cafe),
                   tensor({1.0, -0.0, std::numeric_limits<double>::infinity()}, {3}, DType::Float64));
  expect_identical(file.tensors.at("mask"), tensor_bool({true, false, false, true}, {4}));
  EXPECT_EQ(file.tensors.at("empty").shape(), (Shape{2, 0}));
  EXPECT_EQ(file.metadata, (std::map<std::string, std::string>{{"writer", "numpy"}, {"note", "tab\there"}}));
  // And the same file read back by the checker, through --expect.
  EXPECT_EQ(run(kPython + " '" + kReader + "' '" + path("np.safetensors") +
                    "' --expect 'a.count=int64[]:7' --expect 'b.weight=float32[2,2]:0.5,-1,2,0'"
                    " --expect 'caf\xC3\xA9 \"q\"=float64[3]:1,-0.0,inf' --expect 'empty=float32[2,0]:'"
                    " --expect 'mask=bool[4]:1,0,0,1' --metadata writer=numpy",
                path("r.log")),
            0)
      << read_bytes(path("r.log"));
}

}  // namespace
