// ex18-train-step: one optimisation step (train/trainer.cpp, train_step): the
// schedule's learning rate, zero_grad, forward, cross-entropy, backward,
// clipping, the AdamW update.
#include <cmath>
#include <memory>

#include "course/checks/check_util.h"
#include "optim/schedule.h"
#include "train/trainer.h"

namespace ropegrad::course {
namespace {

// A tiny float64 model (V 11, context 8, D 8, 1 layer, 2 heads, d_ff 16,
// initialised from seed 18) and its AdamW, as train() builds them.
struct TinyRun {
  tasks::TrainConfig config;
  std::unique_ptr<nn::TransformerLM> model;
  std::unique_ptr<nn::AdamW> opt;
  tasks::Batch batch;
};

TinyRun tiny_run(double clip = 1.0) {
  TinyRun s;
  tasks::TrainConfig& c = s.config;
  c.steps = 10, c.warmup = 2, c.lr = 1e-2, c.min_lr = 1e-3, c.clip = clip;
  c.model.vocab_size = 11, c.model.context_length = 8, c.model.d_model = 8, c.model.num_layers = 1;
  c.model.num_heads = 2, c.model.d_ff = 16;
  Generator init(18);
  s.model = std::make_unique<nn::TransformerLM>(c.model, &init, DType::Float64);
  s.model->train();
  s.opt = std::make_unique<nn::AdamW>(
      s.model->parameters(),
      nn::AdamWOptions{.lr = c.lr, .betas = {c.beta1, c.beta2}, .eps = 1e-8, .weight_decay = c.weight_decay});
  // Two sequences of 6 tokens; the targets are the next tokens, one ignored.
  s.batch.inputs = tensor_i64({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 1}, {2, 6});
  s.batch.targets = tensor_i64({2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 1, tasks::kIgnore}, {2, 6});
  return s;
}

// One step written out here from the library's pieces, in the order the
// chapter gives: the expected loss and gradient norm of each step, computed
// on a second, identically initialised model (float64 throughout, so the two
// agree to rounding unless the learner's step does something else).
tasks::StepRecord step_by_hand(TinyRun& s, int64_t step) {
  const tasks::TrainConfig& c = s.config;
  s.opt->set_lr(nn::cosine_lr(step, c.lr, c.min_lr, c.warmup, c.steps));
  s.opt->zero_grad();
  const Tensor loss = nn::cross_entropy(s.model->forward(s.batch.inputs), s.batch.targets, tasks::kIgnore);
  backward(loss);
  const double norm = nn::clip_grad_norm_(s.model->parameters(), c.clip);
  s.opt->step();
  return {step, loss.item<double>(), s.opt->lr(), norm};
}

bool loss_near(double a, double b) { return std::abs(a - b) <= 1e-10 * std::max(1.0, std::abs(b)); }

TEST(ex18_train_step, four_steps_give_the_losses_and_gradient_norms_of_the_steps_written_out) {
  TinyRun s = tiny_run(), by_hand = tiny_run();
  for (int64_t step = 1; step <= 4; ++step) {
    const tasks::StepRecord r = tasks::train_step(*s.model, *s.opt, s.batch, step, s.config);
    const tasks::StepRecord want = step_by_hand(by_hand, step);
    if (!loss_near(r.loss, want.loss) || !loss_near(r.grad_norm, want.grad_norm)) {
      if (step == 1) {
        ADD_FAILURE() << "step 1 does not give the expected loss and gradient norm";
      } else {
        ADD_FAILURE() << "step 1 matches, but step " << step
                      << " does not: do gradients accumulate across steps? (zero_grad before backward)";
      }
      ADD_FAILURE() << "step " << step << ": loss " << fmt::format("{:.17g}", r.loss) << " and gradient norm "
                    << fmt::format("{:.17g}", r.grad_norm) << ", expected " << fmt::format("{:.17g}", want.loss)
                    << " and " << fmt::format("{:.17g}", want.grad_norm);
      return;
    }
  }
}

TEST(ex18_train_step, a_few_steps_on_one_batch_reduce_its_loss) {
  TinyRun s = tiny_run();
  double first = 0, last = 0;
  for (int64_t step = 1; step <= 6; ++step) {
    last = tasks::train_step(*s.model, *s.opt, s.batch, step, s.config).loss;
    if (step == 1) first = last;
  }
  if (!(last < first - 0.05)) ADD_FAILURE() << "six steps on one batch take its loss from " << first << " to " << last;
}

TEST(ex18_train_step, the_learning_rate_follows_the_schedule) {
  TinyRun s = tiny_run();
  for (int64_t step = 1; step <= 3; ++step) {
    const tasks::StepRecord r = tasks::train_step(*s.model, *s.opt, s.batch, step, s.config);
    const double want = nn::cosine_lr(step, s.config.lr, s.config.min_lr, s.config.warmup, s.config.steps);
    if (r.lr != want || s.opt->lr() != want) {
      ADD_FAILURE() << "step " << step << " uses lr " << s.opt->lr() << " (returns " << r.lr
                    << "), expected cosine_lr(step) = " << want;
      return;
    }
  }
}

TEST(ex18_train_step, gradients_are_clipped_to_the_configured_norm_before_the_update) {
  TinyRun s = tiny_run(/*clip=*/1e-3);
  const tasks::StepRecord r = tasks::train_step(*s.model, *s.opt, s.batch, 1, s.config);
  double sq = 0;
  for (const Tensor& p : s.model->parameters())
    if (p.grad().defined())
      for (double g : p.grad().to_vector<double>()) sq += g * g;
  if (!(r.grad_norm > 1e-3)) ADD_FAILURE() << "the returned norm " << r.grad_norm << " is not the norm before clipping";
  if (std::sqrt(sq) > 1e-3 * (1 + 1e-6))
    ADD_FAILURE() << "after the step the gradients have norm " << std::sqrt(sq) << ", more than clip = 0.001";
}

}  // namespace
}  // namespace ropegrad::course
