#include "course/final_options.h"

#include "tensor/error.h"

namespace ropegrad::course {

const flags::Command& final_command() {
  static const flags::Command c = [] {
    using namespace flags;
    return Command{
        "course final",
        "usage: course-final --corpus FILE --out DIR [--reference TRACE | --write-reference TRACE] [--steps N]\n",
        "The learner's whole LM, trained on real text with the learner's own tokenizer, against the\n"
        "reference at the same seed (scripts/dev.sh course final runs it).",
        {required(path("corpus", "FILE", "the text to train on")),
         required(path("out", "DIR", "where the trace, the curves and the tokenizer go")),
         path("reference", "TRACE", "the reference's trace to compare with"),
         path("write-reference", "TRACE", "write this run's trace as the reference instead"),
         whole("steps", 1, 5000, "150", "training steps (the reference trace has 150)")}};
  }();
  return c;
}

std::optional<FinalOptions> read_final_options(const std::vector<std::string>& words) {
  const std::optional<flags::Values> v = flags::read(final_command(), words);
  if (!v) return std::nullopt;
  FinalOptions o;
  o.corpus = v->text("corpus");
  o.out = v->text("out");
  o.reference = v->text("reference");
  o.write_reference = v->text("write-reference");
  RG_CHECK(o.reference.empty() || o.write_reference.empty(), final_command().name,
           "--reference and --write-reference go one at a time");
  o.steps = v->whole("steps");
  return o;
}

}  // namespace ropegrad::course
