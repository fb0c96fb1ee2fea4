// The outputs chapter 5 (docs/05-modules-and-init.md) shows; the docs test
// compares them with the chapter. Usage: snippet_ch05_modules MODE:
//   names        named_parameters, num_parameters, state_dict keys, named_buffers of a small model
//   load-errors  load_state_dict's errors: missing/unexpected keys, a size mismatch
//   to-int       to(int64) is refused
//   init         truncated-normal initialisers: measured std against sigma (float64, seed 42)
#include <cmath>
#include <functional>
#include <iostream>
#include <memory>
#include <numbers>
#include <string>

#include <fmt/format.h>

#include "autograd/ops.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/module.h"

using namespace ropegrad;

namespace {

// One block: a norm, a projection and a scratch buffer that is not state.
struct Block : nn::Module {
  std::shared_ptr<nn::RMSNorm> norm;
  std::shared_ptr<nn::Linear> proj;
  Block() {
    norm = register_module("norm", std::make_shared<nn::RMSNorm>(4));
    proj = register_module("proj", std::make_shared<nn::Linear>(4, 4));
    register_buffer("scratch", zeros({4}), /*persistent=*/false);
  }
  std::string type_name() const override { return "Block"; }
};

// An LM head whose weight is another module's tensor (weight tying).
struct Head : nn::Module {
  Tensor weight;
  explicit Head(const Tensor& tied) { weight = register_parameter("weight", tied); }
  std::string type_name() const override { return "Head"; }
};

struct Tiny : nn::Module {
  std::shared_ptr<nn::Embedding> emb;
  std::shared_ptr<nn::ModuleList<Block>> layers;
  std::shared_ptr<Head> head;
  Tiny() {
    emb = register_module("emb", std::make_shared<nn::Embedding>(10, 4));
    layers = register_module("layers", std::make_shared<nn::ModuleList<Block>>());
    for (int i = 0; i < 2; ++i) layers->push_back(std::make_shared<Block>());
    head = register_module("head", std::make_shared<Head>(emb->weight));
  }
  std::string type_name() const override { return "Tiny"; }
};

void print_error(const std::function<void()>& f) {
  try {
    f();
    std::cout << "no error\n";
  } catch (const Error& e) {
    std::cout << e.what() << "\n";
  }
}

// Standard deviation of all elements (float64).
double std_of(const Tensor& w) {
  const Tensor centred = w - mean(w);
  return std::sqrt(mean(centred * centred).item<double>());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "names") {
    Tiny model;
    std::cout << "named_parameters:\n";
    for (const auto& [name, t] : model.named_parameters()) std::cout << "  " << name << " " << shape_str(t.shape()) << "\n";
    std::cout << "num_parameters: " << model.num_parameters() << "\n";
    std::cout << "state_dict keys:";
    for (const auto& [name, t] : model.state_dict()) std::cout << " " << name;
    std::cout << "\nnamed_buffers:";
    for (const auto& [name, t] : model.named_buffers()) std::cout << " " << name;
    std::cout << "\n";
  } else if (what == "load-errors") {
    Tiny model;
    print_error([&] {
      nn::StateDict state = model.state_dict();
      state.erase("layers.1.norm.weight");
      state["layers.9.proj.weight"] = zeros({4, 4});
      model.load_state_dict(state);
    });
    print_error([&] {
      nn::StateDict state = model.state_dict();
      state["layers.0.proj.weight"] = zeros({4, 5});
      model.load_state_dict(state);
    });
  } else if (what == "to-int") {
    Tiny model;
    print_error([&] { model.to(DType::Int64); });
  } else if (what == "init") {
    for (const auto& [d_out, d_in] : {std::pair<int64_t, int64_t>{1024, 1024}, {4096, 1024}}) {
      Generator gen(42);
      const Tensor w = nn::init::linear_weight(d_out, d_in, &gen, DType::Float64);
      const double sigma = std::sqrt(2.0 / static_cast<double>(d_in + d_out));
      const double measured = std_of(w);
      std::cout << fmt::format("linear_weight({}, {}): sigma {:.6f}  measured std {:.6f}  ratio {:.5f}  max|w|/sigma {:.4f}\n",
                               d_out, d_in, sigma, measured, measured / sigma, amax(abs(w)).item<double>() / sigma);
    }
    Generator gen(42);
    const Tensor e = nn::init::embedding_weight(50000, 64, &gen, DType::Float64);
    std::cout << fmt::format("embedding_weight(50000, 64): measured std {:.5f}\n", std_of(e));
    // Var of N(0, 1) cut at +-a: 1 - 2 a phi(a) / (Phi(a) - Phi(-a)).
    const double a = 3.0;
    const double phi = std::exp(-a * a / 2) / std::sqrt(2 * std::numbers::pi);
    const double mass = std::erf(a / std::numbers::sqrt2);
    std::cout << fmt::format("exact std of N(0,1) cut at +-3: {:.6f}\n", std::sqrt(1 - 2 * a * phi / mass));
  } else {
    std::cerr << "usage: snippet_ch05_modules names | load-errors | to-int | init\n";
    return 2;
  }
  return 0;
}
