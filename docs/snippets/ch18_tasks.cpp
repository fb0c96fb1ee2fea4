// Chapter 18 (docs/18-training.md), "The tasks": one sequence of each task,
// drawn by the task's own batch() from Generator(3), with small sizes.
// Usage: snippet_ch18_tasks copy | recall | entailment | text FILE
#include <iostream>
#include <string>

#include "nn/functional.h"
#include "tasks/synthetic.h"

using namespace ropegrad;
using namespace ropegrad::tasks;

namespace {

// The first sequence of a batch: inputs, targets ("." for kIgnore) and "^"
// under the positions the metric scores.
void show(const Task& task, const Batch& b) {
  const int64_t t = task.seq_len();
  std::cout << task.name() << ": vocab " << task.vocab_size() << ", T " << t << ", metric \"" << task.metric_name()
            << "\"\n";
  const auto inputs = b.inputs.to_vector<int64_t>(), targets = b.targets.to_vector<int64_t>();
  const auto scored = b.scored.to_vector<int64_t>();
  std::string in = "  inputs : ", tg = "  targets: ", sc = "  scored : ";
  for (int64_t j = 0; j < t; ++j) {
    in += fmt::format("{:>4}", inputs[j]);
    tg += targets[j] == kIgnore ? "   ." : fmt::format("{:>4}", targets[j]);
    sc += scored[j] ? "   ^" : "    ";
  }
  while (!sc.empty() && sc.back() == ' ') sc.pop_back();
  std::cout << in << "\n" << tg << "\n" << sc << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  Generator gen(3);
  if (what == "copy") {
    const CopyTask task(/*vocab_size=*/16, /*length=*/16);
    show(task, task.batch(1, gen));
  } else if (what == "recall") {
    const AssociativeRecallTask task(/*num_keys=*/8, /*num_values=*/8, /*num_pairs=*/4, /*num_queries=*/2);
    show(task, task.batch(1, gen));
  } else if (what == "entailment") {
    const EntailmentTask task(/*num_concepts=*/6);
    show(task, task.batch(1, gen));
  } else if (what == "text" && argc > 2) {
    const TextTask task(argv[2], /*context_length=*/12);
    const Batch b = task.batch(1, gen);
    show(task, b);
    std::string text;
    for (int64_t byte : b.inputs.to_vector<int64_t>()) text += static_cast<char>(byte);
    std::cout << "  as text: \"" << text << "\"\n";
    // Uniform logits: every byte gets probability 1/256, so 8 bits per byte.
    std::cout << fmt::format("  uniform logits: {:.4f} bits/byte\n", task.metric(zeros({1, 12, 256}), b));
  } else {
    std::cerr << "usage: snippet_ch18_tasks copy | recall | entailment | text FILE\n";
    return 2;
  }
  return 0;
}
