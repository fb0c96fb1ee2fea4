// The outputs chapter 14 (checkpoints) shows, printed by the library itself.
// Every mode writes its files into DIR (created if missing) and names them
// relative to it, so the messages do not depend on where the build lives.
//   snippet_ch14_checkpoints format DIR       tiny.safetensors: size and header
//   snippet_ch14_checkpoints errors DIR       a truncated checkpoint, a missing file
//   snippet_ch14_checkpoints checkpoint DIR   ckpt.safetensors: Linear(3, 2) after one AdamW step
//   snippet_ch14_checkpoints resume DIR       load_checkpoint into a fresh model and optimizer
//   snippet_ch14_checkpoints load-errors DIR  another model's shape; a file that is not a checkpoint
//   snippet_ch14_checkpoints npy DIR          w.npy: size and header
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "autograd/ops.h"
#include "io/checkpoint.h"
#include "nn/layers.h"
#include "io/npy.h"
#include "optim/optim.h"
#include "io/safetensors.h"

using namespace ropegrad;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The 8-byte little-endian header length N, then N bytes of JSON.
uint64_t header_length(const std::string& bytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<unsigned char>(bytes[i]);
  return n;
}

// tiny.safetensors: a float32 w (2, 3) = 1..6 and an int64 ids (2) = 7, 8, metadata step = 100.
void write_tiny() {
  nn::save_safetensors("tiny.safetensors",
                       {{"w", tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float32)}, {"ids", tensor_i64({7, 8}, {2})}},
                       {{"step", "100"}});
}

// ckpt.safetensors: a Linear(3, 2) after one AdamW step on sum(model(x)).
void write_checkpoint() {
  Generator gen(0);
  nn::Linear model(3, 2, &gen);
  nn::AdamW opt(model.parameters(), {.lr = 1e-3});
  const Tensor x = randn({4, 3}, kDefaultFloat, &gen);
  backward(sum(model.forward(x)));
  opt.step();
  nn::save_checkpoint("ckpt.safetensors", model, opt.state_dict(), opt.step_count());
}

void print_error(void (*load)()) {
  try {
    load();
    std::cout << "(no error)\n";
  } catch (const Error& e) {
    std::cout << e.what() << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 2 ? argv[1] : "";
  if (what.empty()) {
    std::cerr << "usage: snippet_ch14_checkpoints format|errors|checkpoint|resume|load-errors|npy DIR\n";
    return 2;
  }
  std::filesystem::create_directories(argv[2]);
  std::filesystem::current_path(argv[2]);

  if (what == "format") {
    write_tiny();
    const std::string bytes = read_bytes("tiny.safetensors");
    const uint64_t n = header_length(bytes);
    std::cout << "file " << bytes.size() << " bytes, header length " << n << "\n";
    std::cout << "header: [" << bytes.substr(8, n) << "]\n";
  } else if (what == "errors") {
    write_checkpoint();
    const std::string bytes = read_bytes("ckpt.safetensors");
    std::ofstream("trunc.safetensors", std::ios::binary) << bytes.substr(0, bytes.size() - 4);  // the last 4 bytes cut off
    std::ofstream("trunc2.safetensors", std::ios::binary) << bytes.substr(0, 40);               // the first 40 bytes only
    std::filesystem::remove("nope.safetensors");
    print_error([] { nn::load_safetensors("trunc.safetensors"); });
    print_error([] { nn::load_safetensors("trunc2.safetensors"); });
    print_error([] { nn::load_safetensors("nope.safetensors"); });
  } else if (what == "checkpoint") {
    write_checkpoint();
    const std::string bytes = read_bytes("ckpt.safetensors");
    std::cout << "checkpoint " << bytes.size() << " bytes, header: [" << bytes.substr(8, header_length(bytes))
              << "]\n";
  } else if (what == "resume") {
    write_checkpoint();
    Generator gen(1);
    nn::Linear model(3, 2, &gen);
    nn::AdamW opt2(model.parameters(), {.lr = 1e-3});
    nn::StateDict optimizer_state;
    const int64_t step = nn::load_checkpoint("ckpt.safetensors", model, &optimizer_state);
    opt2.load_state_dict(optimizer_state);
    std::cout << "loaded step " << step << ", optimizer keys:";
    for (const auto& [name, t] : optimizer_state) std::cout << " " << name;
    std::cout << "\nopt2 step_count " << opt2.step_count() << "\n";
  } else if (what == "load-errors") {
    write_checkpoint();
    write_tiny();
    print_error([] {
      nn::Linear other(4, 2);
      nn::StateDict optimizer_state;
      nn::load_checkpoint("ckpt.safetensors", other, &optimizer_state);
    });
    print_error([] {
      nn::Linear model(3, 2);
      nn::StateDict optimizer_state;
      nn::load_checkpoint("tiny.safetensors", model, &optimizer_state);
    });
  } else if (what == "npy") {
    nn::save_npy("w.npy", tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float32));
    const std::string bytes = read_bytes("w.npy");
    const size_t n = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;  // version 1.0
    std::cout << "npy " << bytes.size() << " bytes, header: [" << bytes.substr(10, n) << "]\n";
  } else {
    std::cerr << "unknown mode '" << what << "'\n";
    return 2;
  }
  return 0;
}
