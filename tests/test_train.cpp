// The training loop (train/trainer.h) on tiny models (D 16, one layer, a few
// dozen steps, well under a second each):
// - determinism: same seed -> the same losses, bit for bit;
// - exact resume: stop at step k, resume from the checkpoint, and the resumed
//   steps' losses equal an uninterrupted run's bit for bit (every variant);
// - the files of --out DIR: metrics.csv columns and rows, summary.json keys,
//   config.txt round trip through read_model_config (and the checkpoint
//   loads into the model it describes);
// - learning: the copy task's loss falls well below its start;
// - the SVG plot of `ropegrad compare`;
// - bad configurations: an Error naming the problem.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "nn/layers.h"
#include "optim/optim.h"
#include "io/safetensors.h"
#include "nn/attention_variants.h"
#include "nn/transformer.h"
#include "train/plot.h"
#include "train/dp_simulate.h"
#include "train/run_files.h"
#include "train/sweep.h"
#include "tasks/token_text_task.h"
#include "train/trainer.h"
#include "tensor/printable.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_train.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::tasks;
using namespace ropegrad::testing;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

// Copy task over 8 token kinds, sequences of 8 (inputs of 7); D 16, 1 layer.
TrainConfig tiny_config(nn::AttentionKind kind = nn::AttentionKind::Standard) { return tiny_train_config(kind); }

const std::vector<nn::AttentionKind> kAllKinds = nn::attention_kinds();

std::vector<double> losses(const TrainResult& r) {
  std::vector<double> out;
  for (const StepRecord& s : r.steps) out.push_back(s.loss);
  return out;
}

// `  "key": value,` with a lower-case key and a string or number value.
bool is_json_pair_line(const std::string& line) {
  if (line.rfind("  \"", 0) != 0) return false;
  const size_t key_end = line.find('"', 3);
  if (key_end == std::string::npos || key_end == 3) return false;
  for (size_t i = 3; i < key_end; ++i) {
    if (!(std::islower(static_cast<unsigned char>(line[i])) || line[i] == '_')) return false;
  }
  if (line.compare(key_end, 3, "\": ") != 0) return false;
  std::string value = line.substr(key_end + 3);
  if (!value.empty() && value.back() == ',') value.pop_back();
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    return value.find('"', 1) == value.size() - 1;
  }
  size_t used = 0;
  try {
    std::stod(value, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == value.size() && value.find_first_of("eEnN") == std::string::npos;  // plain decimals only
}

// The points="..." attribute of every <polyline>.
std::vector<std::string> polyline_points(const std::string& svg) {
  std::vector<std::string> out;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) {
    const size_t begin = svg.find("points=\"", at);
    if (begin == std::string::npos) break;
    out.push_back(svg.substr(begin + 8, svg.find('"', begin + 8) - (begin + 8)));
  }
  return out;
}

// ---- determinism and resume --------------------------------------------------------------------------

TEST(Train, SameSeedSameLossesDifferentSeedDifferentLosses) {
  const TrainConfig c = tiny_config();
  const TrainResult a = train(c, nullptr);
  const TrainResult b = train(c, nullptr);
  ASSERT_EQ(a.steps.size(), 12u);
  EXPECT_EQ(losses(a), losses(b));  // bit for bit
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].step, static_cast<int64_t>(i) + 1);
    EXPECT_EQ(a.steps[i].grad_norm, b.steps[i].grad_norm);
    EXPECT_EQ(a.steps[i].lr, b.steps[i].lr);
  }
  ASSERT_EQ(a.evals.size(), 3u);  // steps 4, 8, 12
  EXPECT_EQ(a.evals[2].step, 12);
  EXPECT_EQ(a.final_loss, b.final_loss);
  EXPECT_EQ(a.final_metric, b.final_metric);
  EXPECT_EQ(a.final_loss, a.evals.back().loss);

  TrainConfig other = c;
  other.seed = 6;
  EXPECT_NE(losses(train(other, nullptr)), losses(a));
}

TEST(Train, LearningRateFollowsWarmupAndCosine) {
  TrainConfig c = tiny_config();
  c.lr = 1e-2;
  c.min_lr = 1e-3;
  const TrainResult r = train(c, nullptr);
  // Step t uses lr(t): warmup t/3 * lr for t < 3, then cosine down to min_lr at step 12.
  EXPECT_DOUBLE_EQ(r.steps[0].lr, 1e-2 / 3);
  EXPECT_DOUBLE_EQ(r.steps[1].lr, 2e-2 / 3);
  EXPECT_DOUBLE_EQ(r.steps[2].lr, 1e-2);
  EXPECT_NEAR(r.steps[11].lr, 1e-3, 1e-15);
  const double mid = 1e-3 + 0.5 * (1 + std::cos(M_PI * (7.0 - 3.0) / 9.0)) * (1e-2 - 1e-3);
  EXPECT_NEAR(r.steps[6].lr, mid, 1e-15);
  // Clipping at 1.0: every recorded pre-clip norm is positive and finite.
  for (const StepRecord& s : r.steps) EXPECT_TRUE(std::isfinite(s.grad_norm) && s.grad_norm > 0);
}

TEST(Train, ResumeFromCheckpointReproducesTheUninterruptedRunExactly) {
  for (const nn::AttentionKind kind : kAllKinds) {
    SCOPED_TRACE(nn::attention_kind_name(kind));
    const TrainConfig base = tiny_config(kind);
    const TrainResult whole = train(base, nullptr);
    ASSERT_EQ(whole.steps.size(), 12u);

    const TempDir dir("resume");
    TrainConfig first = base;
    first.out_dir = dir.path();
    first.stop_after = 5;
    const TrainResult head = train(first, nullptr);
    ASSERT_EQ(head.steps.size(), 5u);
    ASSERT_TRUE(fs::exists(dir.file("checkpoint.safetensors")));
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(head.steps[i].loss, whole.steps[i].loss) << "step " << i + 1;

    TrainConfig rest = base;
    rest.out_dir = dir.path();
    rest.resume = true;
    const TrainResult tail = train(rest, nullptr);
    ASSERT_EQ(tail.steps.size(), 7u);
    for (size_t i = 0; i < 7; ++i) {
      const StepRecord& got = tail.steps[i];
      const StepRecord& want = whole.steps[i + 5];
      EXPECT_EQ(got.step, want.step);
      EXPECT_EQ(got.loss, want.loss) << "step " << want.step;  // bit for bit
      EXPECT_EQ(got.lr, want.lr) << "step " << want.step;
      EXPECT_EQ(got.grad_norm, want.grad_norm) << "step " << want.step;
    }
    ASSERT_EQ(tail.evals.size(), 2u);  // steps 8 and 12
    EXPECT_EQ(tail.evals[1].loss, whole.evals[2].loss);
    EXPECT_EQ(tail.final_metric, whole.final_metric);

    // metrics.csv holds each of the 12 steps once, in order, across both calls.
    const std::vector<std::string> lines = split(read_text(dir.file("metrics.csv")), '\n');
    ASSERT_EQ(lines.size(), 14u);  // header, 12 rows, "" after the final newline
    EXPECT_EQ(lines[0], "step,loss,lr,grad_norm,eval_loss,eval_metric");
    for (int64_t s = 1; s <= 12; ++s) {
      const std::vector<std::string> f = split(lines[static_cast<size_t>(s)], ',');
      ASSERT_EQ(f.size(), 6u) << lines[static_cast<size_t>(s)];
      EXPECT_EQ(f[0], std::to_string(s));
      EXPECT_EQ(f[1], fmt::format("{:.6f}", whole.steps[static_cast<size_t>(s - 1)].loss));
    }
    EXPECT_EQ(lines[13], "");
  }
}

TEST(Train, ResumeWithAttentionDropoutRepeatsTheSameMasks) {
  // Dropout draws from the default generator, which the trainer reseeds from
  // (seed, step) every step: a resumed run draws the masks it would have drawn.
  TrainConfig base = tiny_config();
  base.model.dropout = 0.2;
  const TrainResult whole = train(base, nullptr);
  TrainConfig nodrop = tiny_config();
  EXPECT_NE(losses(train(nodrop, nullptr)), losses(whole));  // the dropout really acts

  const TempDir dir("resume_dropout");
  TrainConfig first = base;
  first.out_dir = dir.path();
  first.stop_after = 5;
  train(first, nullptr);
  TrainConfig rest = base;
  rest.out_dir = dir.path();
  rest.resume = true;
  const TrainResult tail = train(rest, nullptr);
  ASSERT_EQ(tail.steps.size(), 7u);
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(tail.steps[i].loss, whole.steps[i + 5].loss) << "step " << i + 6;
}

// A run killed after its last checkpoint has logged steps the resume computes
// again: the resumed metrics.csv keeps only the rows before the checkpoint.
TEST(Train, ResumeDropsLoggedStepsPastTheCheckpoint) {
  const TempDir dir("resume_stale_rows");
  TrainConfig first = tiny_config();
  first.out_dir = dir.path();
  first.checkpoint_every = 4;
  first.stop_after = 4;
  train(first, nullptr);
  {  // pretend the killed run had also logged steps 5 and 6
    std::ofstream csv(dir.file("metrics.csv"), std::ios::app);
    csv << "5,9.0,0.1,1.0,,\n6,9.0,0.1,1.0,,\n";
  }
  TrainConfig rest = tiny_config();
  rest.out_dir = dir.path();
  rest.resume = true;
  train(rest, nullptr);
  const std::vector<std::string> lines = split(read_text(dir.file("metrics.csv")), '\n');
  ASSERT_EQ(lines.size(), 14u);  // header, steps 1..12 once each, "" after the last newline
  for (int64_t s = 1; s <= 12; ++s) EXPECT_EQ(split(lines[static_cast<size_t>(s)], ',')[0], std::to_string(s));
  EXPECT_EQ(read_text(dir.file("metrics.csv")).find("9.0,0.1"), std::string::npos);  // the stale rows are gone
}

TEST(Train, ResumeWithoutACheckpointNamesTheFile) {
  const TempDir dir("nockpt");
  TrainConfig c = tiny_config();
  c.out_dir = dir.path();
  c.resume = true;
  const std::string msg = error_of([&] { train(c, nullptr); });
  EXPECT_THAT(msg, HasSubstr("checkpoint.safetensors"));
}

// ---- runs that are repeated, interrupted or diverge -------------------------------------------------

TEST(Train, ResumingAFinishedRunSaysSoAndChangesNothing) {
  const TempDir dir("finished");
  TrainConfig c = tiny_config();
  c.out_dir = dir.path();
  train(c, nullptr);
  const std::string summary = read_text(dir.file("summary.json")), metrics = read_text(dir.file("metrics.csv"));
  for (int64_t steps : {12, 8}) {  // the same --steps, or fewer than the checkpoint's
    TrainConfig again = c;
    again.resume = true;
    again.steps = steps;
    again.warmup = 3;
    const TrainResult r = train(again, nullptr);
    EXPECT_EQ(r.already_finished_at, 12) << "steps " << steps;
    EXPECT_TRUE(r.steps.empty());
    EXPECT_EQ(read_text(dir.file("summary.json")), summary) << "summary.json must not be overwritten";
    EXPECT_EQ(read_text(dir.file("metrics.csv")), metrics);
  }
}

TEST(Train, ResumeWithOtherSettingsIsAnErrorListingThem) {
  const TempDir dir("othersettings");
  TrainConfig c = tiny_config();
  c.out_dir = dir.path();
  c.stop_after = 4;
  c.checkpoint_every = 2;
  train(c, nullptr);
  TrainConfig other = c;
  other.resume = true;
  other.stop_after = 0;
  other.seed = 6;
  other.lr = 0.01;
  std::string msg = error_of([&] { train(other, nullptr); });
  EXPECT_THAT(msg, HasSubstr("--resume"));
  EXPECT_THAT(msg, HasSubstr("seed 6 (was 5)"));
  EXPECT_THAT(msg, HasSubstr("lr 0.01 (was 0.003)"));
  other = c;
  other.resume = true;
  other.task = "recall";
  other.task_options = {};
  msg = error_of([&] { train(other, nullptr); });
  EXPECT_THAT(msg, HasSubstr("task recall (was copy)"));
  other = c;  // more steps than before: the run goes on
  other.resume = true;
  other.stop_after = 0;
  other.steps = 14;
  EXPECT_EQ(train(other, nullptr).steps.size(), 10u);  // steps 5..14
}

// AdamW's beta1, beta2 and weight decay are in the checkpoint: resuming with
// other values is refused naming the flag, unless --allow-changed-optimizer.
TEST(Train, ResumeWithOtherOptimizerFlagsNeedsAllowChangedOptimizer) {
  const TempDir dir("otheroptimizer");
  TrainConfig c = tiny_config();
  c.out_dir = dir.path();
  c.stop_after = 4;
  train(c, nullptr);
  TrainConfig other = c;
  other.resume = true;
  other.stop_after = 8;
  other.beta2 = 0.95;
  std::string msg = error_of([&] { train(other, nullptr); });
  EXPECT_THAT(msg, HasSubstr("--beta2 0.95 (was 0.98)"));
  EXPECT_THAT(msg, HasSubstr("--allow-changed-optimizer"));
  other.allow_changed_optimizer = true;
  const TrainResult r = train(other, nullptr);
  EXPECT_EQ(r.steps.size(), 4u);  // steps 5..8
  EXPECT_THAT(r.notices, HasSubstr("--allow-changed-optimizer: continuing the run in"));
  EXPECT_THAT(r.notices, HasSubstr("--beta2 0.95 (was 0.98)"));
  EXPECT_THAT(read_text(dir.file("config.txt")), HasSubstr("beta2=0.95\n"));
  const nn::SafetensorsFile saved = nn::load_safetensors(dir.file("checkpoint.safetensors"));
  EXPECT_EQ(saved.tensors.at("optimizer.settings.beta2").item<double>(), 0.95) << "the new value is saved";
  // The flag changes only the optimizer's settings: another --lr is still refused.
  other.lr = 0.01;
  other.stop_after = 0;
  msg = error_of([&] { train(other, nullptr); });
  EXPECT_THAT(msg, HasSubstr("--lr 0.01 (was 0.003)"));
}

// config.txt edited by hand to the new value: the checkpoint still holds the
// old one, and says so.
TEST(Train, ResumeChecksTheCheckpointsOptimizerSettingsToo) {
  const TempDir dir("editedconfig");
  TrainConfig c = tiny_config();
  c.out_dir = dir.path();
  c.stop_after = 4;
  train(c, nullptr);
  std::string config = read_text(dir.file("config.txt"));
  const size_t at = config.find("weight_decay=0.01\n");
  ASSERT_NE(at, std::string::npos);
  config.replace(at, 18, "weight_decay=0.1\n");
  std::ofstream(dir.file("config.txt")) << config;
  TrainConfig other = c;
  other.resume = true;
  other.stop_after = 0;
  other.weight_decay = 0.1;
  const std::string msg = error_of([&] { train(other, nullptr); });
  EXPECT_THAT(msg, HasSubstr("--resume: '" + dir.file("checkpoint.safetensors") + "'"));
  // The command line's words: its flag and the way out, not the library's C++ enum.
  EXPECT_THAT(msg, HasSubstr("--weight-decay 0.1 (the checkpoint has 0.01)"));
  EXPECT_THAT(msg, HasSubstr("pass --allow-changed-optimizer to continue with the command line's"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("OptimizerSettingsOnLoad")));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("keep_mine")));
  // The library's own message, for a C++ caller, names its choices.
  nn::Linear model(3, 2);
  nn::AdamW saved(model.parameters(), {.lr = 1e-3, .weight_decay = 0.1}), mine(model.parameters(), {.lr = 1e-3});
  const std::string library = error_of([&] { mine.load_state_dict(saved.state_dict()); });
  EXPECT_THAT(library, HasSubstr("OptimizerSettingsOnLoad::keep_mine"));
  other.allow_changed_optimizer = true;  // the way out it names works
  EXPECT_EQ(train(other, nullptr).last_step, 12);
}

// The checkpoint's step edited by hand (6 -> 3): resumed, it continued at
// step 4 with step 6's optimizer state and ended on other weights, exit 0.
// With the metadata's checksum the edit is refused as such; a checkpoint
// without one (written before it) has its step cross-checked against the
// optimizer's own count, AdamW's t; a consistent one resumes exactly.
TEST(Train, ACheckpointWhoseStepWasEditedIsRefused) {
  const TempDir whole("stepwhole"), dir("stepedited");
  TrainConfig c = tiny_config();
  c.out_dir = whole.path();
  train(c, nullptr);
  c.out_dir = dir.path();
  c.stop_after = 6;
  train(c, nullptr);
  const std::string ckpt = dir.file("checkpoint.safetensors");
  const nn::SafetensorsFile file = nn::load_safetensors(ckpt);
  ASSERT_EQ(file.metadata.at("step"), "6");
  ASSERT_EQ(file.metadata.count("metadata_crc32"), 1u);
  const auto rewrite = [&](const std::map<std::string, std::string>& metadata) {
    nn::save_safetensors(ckpt, file.tensors, metadata);
  };
  TrainConfig resume = c;
  resume.stop_after = 0;
  resume.resume = true;

  std::map<std::string, std::string> edited = file.metadata;
  edited["step"] = "3";
  rewrite(edited);
  EXPECT_RG_ERROR(train(resume, nullptr), "load_checkpoint", "'" + ckpt + "': the metadata fails its checksum",
                  "step '3'", "edited or is corrupt");

  edited.erase("metadata_crc32");  // as a checkpoint written before the checksum
  rewrite(edited);
  EXPECT_RG_ERROR(train(resume, nullptr), "train", "--resume: '" + ckpt + "'", "its metadata says step 3",
                  "its optimizer state has taken 6 steps (AdamW's t)");

  edited["step"] = "6";  // without a checksum but consistent: it resumes, exactly
  rewrite(edited);
  EXPECT_EQ(train(resume, nullptr).steps.size(), 6u);
  EXPECT_EQ(read_text(dir.file("metrics.csv")), read_text(whole.file("metrics.csv")));
  EXPECT_EQ(nn::load_safetensors(ckpt).tensors.at("model.lm_head.weight").to_vector<float>(),
            nn::load_safetensors(whole.file("checkpoint.safetensors")).tensors.at("model.lm_head.weight").to_vector<float>());
}

// A checkpoint's step of int64's largest made step + 1 overflow (the
// sanitizer blamed cosine_lr): refused as it is read, naming the file.
TEST(Train, ACheckpointStepOutOfRangeIsRefusedWhenRead) {
  const TempDir dir("stepmax");
  TrainConfig c = tiny_config();
  c.out_dir = dir.path();
  c.stop_after = 4;
  train(c, nullptr);
  const std::string ckpt = dir.file("checkpoint.safetensors");
  const nn::SafetensorsFile file = nn::load_safetensors(ckpt);
  nn::save_safetensors(ckpt, file.tensors, {{"format", "ropegrad-checkpoint-1"}, {"step", "9223372036854775807"}});
  c.stop_after = 0;
  c.resume = true;
  EXPECT_RG_ERROR(train(c, nullptr), "load_checkpoint", "'" + ckpt + "'",
                  "the metadata's step '9223372036854775807' is outside the range",
                  "expected a whole number of steps in 0..1000000000000");
  nn::TransformerLM model(read_model_config(dir.file("config.txt")));
  EXPECT_RG_ERROR(nn::load_checkpoint(ckpt, model, nullptr), "load_checkpoint", "'" + ckpt + "'", "outside the range");
}

// config.txt's tokenizer_vocab=abc made --resume and generate say "not the
// run's tokenizer" while printing two identical checksums. The entry is named
// as config.txt is read; a number that disagrees with the same files is named too.
TEST(Train, ABadTokenizerVocabEntryIsNamed) {
  const std::string good =
      "task=text\nvocab_size=300\ncontext_length=16\nd_model=16\nnum_layers=1\nnum_heads=2\nd_ff=32\n"
      "rope_theta=10000\nattention=standard\nsigma=scalar\ntie_embeddings=0\ntokenizer_checksum=fnv1a64:00\n"
      "tokenizer_vocab=300\n";
  EXPECT_EQ(parse_run_config(good, "run/config.txt").settings.at("tokenizer_vocab"), "300");
  std::string bad = good;
  bad.replace(bad.find("tokenizer_vocab=300"), 19, "tokenizer_vocab=abc");
  EXPECT_RG_ERROR(parse_run_config(bad, "run/config.txt"), "config",
                  "run/config.txt:13: tokenizer_vocab 'abc' is not a number",
                  "expected a whole number of tokens in 1..16777216");
  // A number, but not the tokenizer's size: the same checksum, so the entry is what is wrong.
  const std::map<std::string, std::string> before = {{"tokenizer_checksum", "fnv1a64:00"}, {"tokenizer_vocab", "299"}},
                                           now = {{"tokenizer", "/t"}, {"tokenizer_checksum", "fnv1a64:00"},
                                                  {"tokenizer_vocab", "300"}};
  EXPECT_RG_ERROR(check_run_inputs("run", before, now, false), "train",
                  "'run/config.txt' records tokenizer_vocab=299, but the tokenizer '/t' it records (checksum "
                  "fnv1a64:00, the same files) has 300 tokens");
}

TEST(Train, ASecondRunIntoTheSameDirectoryIsRefusedNamingTheHolder) {
  const TempDir dir("locked");
  fs::create_directories(dir.path());
  {
    const RunLock held(dir.path());
    TrainConfig c = tiny_config();
    c.out_dir = dir.path();
    const std::string msg = error_of([&] { train(c, nullptr); });
    EXPECT_THAT(msg, HasSubstr("in use by another run"));
    EXPECT_THAT(msg, HasSubstr("pid " + std::to_string(::getpid())));
    EXPECT_FALSE(fs::exists(dir.file("metrics.csv"))) << "the refused run wrote nothing";
  }
  TrainConfig c = tiny_config();  // released: the next run goes ahead
  c.out_dir = dir.path();
  EXPECT_EQ(train(c, nullptr).steps.size(), 12u);
}

// train writes config.txt, metrics.csv, ... into --out: never into a
// directory holding files of those names that no run wrote, and never into
// a directory that holds (or is inside) the run's own input.
TEST(Train, OutNeverReplacesTheUsersFilesNorTouchesAnInput) {
  const TempDir dir("owned");
  fs::create_directories(dir.path());
  std::ofstream(dir.file("metrics.csv")) << "my own numbers\n";
  TrainConfig c = tiny_config();
  c.out_dir = dir.path();
  EXPECT_RG_ERROR(train(c, nullptr), "train", "holds a metrics.csv but no config.txt");
  std::ifstream in(dir.file("metrics.csv"));
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "my own numbers");
  EXPECT_FALSE(fs::exists(dir.file("config.txt")));

  const TempDir text_dir("textin");
  fs::create_directories(text_dir.path());
  std::ofstream(text_dir.file("book.txt")) << std::string(4000, 'a');
  TrainConfig t = tiny_config();
  t.task = "text";
  t.task_options = {};
  t.task_options.text_path = text_dir.file("book.txt");
  t.out_dir = text_dir.path();
  EXPECT_RG_ERROR(train(t, nullptr), "train", "--out '" + text_dir.path() + "' contains the input", "book.txt");
  t.out_dir = text_dir.file("book.txt") + "/run";
  EXPECT_RG_ERROR(train(t, nullptr), "train", "lies inside the input", "book.txt");
  EXPECT_EQ(fs::file_size(text_dir.file("book.txt")), 4000u);
  // A run's own directory (config.txt there) is trained into again, as before.
  c.out_dir = dir.path() + "/run";
  ASSERT_EQ(train(c, nullptr).steps.size(), 12u);
  EXPECT_EQ(train(c, nullptr).steps.size(), 12u);
}

// One NaN weight (a corrupted checkpoint, or an update that overflowed) stops
// training at once, naming the step and the tensor; generate refuses it.
TEST(Train, ANonFiniteWeightIsNamedByTrainingAndRefusedByGenerate) {
  const TempDir dir("nan");
  TrainConfig c = tiny_config();
  c.out_dir = dir.path();
  c.stop_after = 4;
  c.checkpoint_every = 4;
  train(c, nullptr);
  nn::TransformerLM model(read_model_config(dir.file("config.txt")));
  nn::StateDict opt_state;
  const int64_t step = nn::load_checkpoint(dir.file("checkpoint.safetensors"), model, &opt_state);
  for (const auto& [name, p] : model.named_parameters()) {
    if (name != "layers.0.ffn.w2.weight") continue;
    Tensor w = p;
    w.data_ptr<float>()[3] = NAN;
  }
  nn::save_checkpoint(dir.file("checkpoint.safetensors"), model, opt_state, step);
  std::string msg = error_of([&] { check_finite_weights(model, "ckpt"); });
  EXPECT_THAT(msg, HasSubstr("layers.0.ffn.w2.weight"));
  TrainConfig resume = c;
  resume.resume = true;
  resume.stop_after = 0;
  // Resumed, the NaN is the checkpoint's (issue 20: the message blamed --lr).
  msg = error_of([&] { train(resume, nullptr); });
  EXPECT_THAT(msg, HasSubstr("train: " + dir.file("checkpoint.safetensors") +
                             ": the checkpoint holds a non-finite value (NaN or infinity) in the weight "
                             "'layers.0.ffn.w2.weight'"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("--lr")));
  // A weight that goes non-finite while training is named with its step.
  const auto task = make_task(c.task, c.task_options);
  Generator gen(5);
  nn::AdamW opt(model.parameters(), {.lr = c.lr});
  msg = error_of([&] { train_step(model, opt, task->batch(4, gen), 5, c); });
  EXPECT_THAT(msg, HasSubstr("layers.0.ffn.w2.weight"));
  EXPECT_THAT(msg, HasSubstr("step 5"));
}

// SIGKILL at random moments of a run with --checkpoint-every 2, then resume:
// every time, the finished run's metrics.csv and checkpoint are byte for byte
// those of an uninterrupted run (rows are flushed to disk before the
// checkpoint that covers them; resume rewrites metrics.csv atomically).
// ROPEGRAD_KILL_TRIALS raises the number of trials (default 6).
// The rows of metrics.csv, time.csv, dp.csv and dp_buckets.csv go through a
// buffer that may reach the disk mid-row: a run killed then leaves a last
// row without its newline, past its checkpoint. Every field of the files is
// checked (run_file_fields), but that row is left out, so the run resumes as
// a kill anywhere else lets it (it stopped once the rows were checked whole).
TEST(Train, ARowCutByAKillIsLeftOutOnResume) {
  const TempDir whole("cutwhole"), dir("cut");
  TrainConfig c = tiny_config();
  c.micro_batch = 4;
  c.out_dir = whole.path();
  train(c, nullptr);
  c.out_dir = dir.path();
  c.stop_after = 6;
  train(c, nullptr);
  for (const auto& [file, cut] : std::vector<std::pair<std::string, std::string>>{
           {"metrics.csv", "7,2.07"}, {"time.csv", "7,0.0"}, {"dp.csv", "7,1,0.00"}, {"dp_buckets.csv", "7,0,44"}}) {
    std::ofstream(dir.file(file), std::ios::app) << cut;
  }
  EXPECT_EQ(profile_from_run(dir.path()).buckets.size(), 1u) << "dp-simulate leaves the cut row out too";
  TrainConfig resume = c;
  resume.stop_after = 0;
  resume.resume = true;
  EXPECT_EQ(train(resume, nullptr).steps.size(), 6u);
  EXPECT_EQ(read_text(dir.file("metrics.csv")), read_text(whole.file("metrics.csv")));
  EXPECT_EQ(read_text(dir.file("checkpoint.safetensors")), read_text(whole.file("checkpoint.safetensors")));
  // A whole row with a bad number is still refused, wherever it is.
  std::ofstream(dir.file("time.csv"), std::ios::app) << "13,-1\n";
  EXPECT_RG_ERROR(read_run_csv(dir.file("time.csv"), "test"), "test", dir.file("time.csv") + ":14: seconds '-1'");
}

TEST(Train, KilledAtAnyMomentAndResumedLosesNothing) {
  const char* env = std::getenv("ROPEGRAD_KILL_TRIALS");
  const int trials = env != nullptr ? std::atoi(env) : 6;
  const std::vector<std::string> base = {ROPEGRAD_CLI, "train", "--quiet", "--steps", "16", "--batch", "8",
                                         "--d-model", "16", "--layers", "1", "--heads", "2", "--vocab", "8",
                                         "--length", "8", "--warmup", "2", "--eval-every", "4", "--checkpoint-every",
                                         "2"};
  const auto run = [&](const std::string& out, bool resume, int kill_after_us) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--out", out});
    if (resume) args.push_back("--resume");
    const pid_t pid = ::fork();
    if (pid == 0) {
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    if (kill_after_us >= 0) {
      ::usleep(static_cast<useconds_t>(kill_after_us));
      ::kill(pid, SIGKILL);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  };
  const TempDir whole("whole");
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(run(whole.path(), false, -1), 0);
  const auto whole_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  const std::string want_metrics = read_text(whole.file("metrics.csv"));
  const std::string want_ckpt = read_text(whole.file("checkpoint.safetensors"));
  Generator gen(11);
  int killed = 0;
  for (int t = 0; t < trials; ++t) {
    const TempDir dir("killed");
    // Anywhere from the start to a little past the end of an uninterrupted run.
    const int delay = static_cast<int>(gen.integer(0, whole_us.count() * 11 / 10 + 1));
    const int status = run(dir.path(), false, delay);
    killed += WIFSIGNALED(status);
    // Resume while a checkpoint exists (start over when the kill came before the first).
    const bool has_ckpt = fs::exists(dir.file("checkpoint.safetensors"));
    ASSERT_EQ(run(dir.path(), has_ckpt, -1), 0) << "trial " << t << ", killed after " << delay << " us";
    EXPECT_EQ(read_text(dir.file("metrics.csv")), want_metrics) << "trial " << t << ", killed after " << delay << " us";
    EXPECT_TRUE(read_text(dir.file("checkpoint.safetensors")) == want_ckpt) << "trial " << t;
  }
  std::printf("[ kill -9 ] %d trials, %d killed mid-run, all resumed to identical files\n", trials, killed);
}

// ---- the command line ---------------------------------------------------------------------------------

// Runs the ropegrad program with `args` (a shell word list); returns the exit
// status and what it printed on stdout and stderr.
std::pair<int, std::string> run_cli(const std::string& args) {
  const std::string command = std::string(ROPEGRAD_CLI) + " " + args + " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Bad command lines end with exit status 1 and a message that names the
// option and the value (they were ignored silently, truncated, or ended in
// std::bad_alloc or basic_filebuf::underflow).
TEST(Cli, BadCommandLinesGetAClearError) {
  const TempDir dir("cli");
  ASSERT_EQ(run_cli("train --quiet --steps 4 --warmup 1 --batch 4 --d-model 16 --heads 2 --layers 1 --out " + dir.path()).first, 0);
  const std::string gen = "generate --checkpoint " + dir.path() + " ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train --clip -1", "--clip must be a real number in [0, 1e30], got -1"},
      {"train --clip nan", "--clip must be a real number in [0, 1e30], got nan"},
      {"train --vocab -3", "--vocab must be a whole number in 0..100000000, got -3"},
      {"train --length -1", "--length must be a whole number in 0..1048576, got -1"},
      {"train --checkpoint-every -1", "--checkpoint-every must be a whole number in 0..1000000000, got -1"},
      {"train --stop-after -2", "--stop-after must be a whole number in 0..1000000000, got -2"},
      {"train --batch 1000000000", "batch 1000000000"},
      {"train --d-model 100000", "--d-model 100000 is outside the range of a run's config.txt: a whole number in 1..65536"},
      {"train --layers 100000000", "--layers must be a whole number in 1..100000, got 100000000"},
      {"train --steps 0", "--steps must be a whole number in 1..1000000000, got 0"},
      {"train --lr 0", "--lr must be a real number in (0, 1000], got 0"},
      {"train --lr 1e9", "--lr must be a real number in (0, 1000], got 1e9"},
      {"train --beta2 1", "--beta2 must be a real number in [0, 0.999999], got 1"},
      {"train --d-model 64abc", "--d-model must be a whole number in 1..1000000, got '64abc'"},
      {"train --sigma bogus", "--sigma must be one of scalar | vector, got 'bogus'"},
      {"train --task text --text /tmp", "'/tmp' is a directory"},
      {"train --task text --text /nonexistent/file", "cannot open '/nonexistent/file'"},
      {"train --bogus 1", "unknown argument '--bogus'"},
      {"train --steps", "--steps needs a value"},
      {gen + "--prompt '1 2 x 3'", "--prompt must be whole numbers in 0..99999999 separated by spaces, got 'x' in '1 2 x 3'"},
      {gen + "--prompt 1.9", "--prompt must be whole numbers in 0..99999999 separated by spaces, got 1.9 in '1.9'"},
      {gen + "--prompt 99", "id 99, outside the model's vocabulary"},
      {gen + "--max-new-tokens 1000000000", "--max-new-tokens must be a whole number in 0..1000000, got 1000000000"},
      {gen + "--top-p 0", "--top-p must be a real number in (0, 1], got 0"},
      {gen + "--temperature nan", "--temperature must be a real number in [0, 1e6], got nan"},
      {"generate --checkpoint /nonexistent", "cannot read '/nonexistent/config.txt'"},
      {"generate", "--checkpoint DIR is required"},
      // Issue 20: silently ignored before.
      {"train --task text --text /etc/hostname --tokenizer /tmp/t --data /tmp/d_train.npy", "not both"},
      {"train --task text --data /tmp/d_train.npy", "--data /tmp/d_train.npy needs --tokenizer DIR"},
      {"train --task copy --tokenizer /tmp/t --data /tmp/d_train.npy", "are for --task text, not --task copy"},
      {"train --task recall --text /etc/hostname", "--text is for --task text, not --task recall"},
      {"compare --task copy --data /tmp/d_train.npy", "are for --task text, not --task copy"},
      {"train --allow-changed-data", "--allow-changed-data goes with --resume"},
      {"train --allow-changed-optimizer", "--allow-changed-optimizer goes with --resume"},
      {"tokenize train --input /tmp --vocab-size 300 --out /tmp/never", "--input '/tmp' is a directory"},
      {"tokenize train --input /etc/hostname --vocab-size -5 --out /tmp/never", "--vocab-size must be a whole number in 256..100000000, got -5"},
  };
  for (const auto& [args, words] : cases) {
    const auto [status, out] = run_cli(args);
    EXPECT_EQ(status, 1) << args << "\n" << out;
    EXPECT_THAT(out, HasSubstr(words)) << args;
    EXPECT_THAT(out, ::testing::StartsWith("error: ")) << args;
  }
}

// A default that does not fit the flags given adapts: warmup's 20 became an
// error naming a flag the user never set (`--steps 12`). A value given must fit.
TEST(Cli, DefaultWarmupFitsAShortRunAndAGivenOneMustFit) {
  const TempDir dir("warm");
  const auto [status, out] = run_cli("train --quiet --task copy --steps 12 --batch 4 --d-model 16 --heads 2 "
                                     "--layers 1 --out " + dir.path());
  ASSERT_EQ(status, 0) << out;
  EXPECT_THAT(read_text(dir.file("config.txt")), HasSubstr("\nwarmup=12\n"));  // min(20, 12)
  const auto [refused, said] = run_cli("train --quiet --steps 12 --warmup 20");
  EXPECT_EQ(refused, 1);
  EXPECT_THAT(said, HasSubstr("warmup (20) must be between 0 and steps (12)"));
}

// Issue 20, as a user meets it: retraining a run's tokenizer in place made
// `generate` print other text, exit 0; a 350-token tokenizer was taken for a
// 400-token model. Now both are refused, naming both checksums and sizes, and
// `tokenize train --help` prints the help.
TEST(Cli, GenerateRefusesATokenizerRetrainedInPlace) {
  const TempDir dir("gentok");
  const std::string corpus = std::string(ROPEGRAD_FIXTURES) + "/bpe/corpus.txt";
  const std::string tok = dir.file("tok"), data = dir.file("d_train.npy");
  fs::create_directories(dir.path());
  ASSERT_EQ(run_cli("tokenize train --input " + corpus + " --vocab-size 400 --out " + tok).first, 0);
  ASSERT_EQ(run_cli("tokenize encode --tokenizer " + tok + " --input " + corpus + " --out " + data).first, 0);
  fs::copy_file(data, dir.file("d_valid.npy"));
  ASSERT_EQ(run_cli("train --quiet --task text --tokenizer " + tok + " --data " + data +
                    " --length 16 --steps 2 --warmup 1 --batch 2 --d-model 16 --heads 2 --layers 1 --out " + dir.file("run"))
                .first,
            0);
  const std::string gen = "generate --checkpoint " + dir.file("run") + " --text 'The ' --max-new-tokens 4";
  const auto [ok, text] = run_cli(gen);
  EXPECT_EQ(ok, 0) << text;
  const auto [usage_status, usage] = run_cli("tokenize train --help");
  EXPECT_EQ(usage_status, 0);
  EXPECT_THAT(usage, ::testing::StartsWith("usage: ropegrad tokenize train"));
  ASSERT_EQ(run_cli("tokenize train --input " + corpus + " --vocab-size 350 --out " + tok).first, 0);
  const auto [status, out] = run_cli(gen);
  EXPECT_EQ(status, 1) << out;
  EXPECT_THAT(out, HasSubstr("error: generate: the tokenizer in '" + tok + "'"));
  EXPECT_THAT(out, HasSubstr(", 350 tokens) is not the one the run in"));
  EXPECT_THAT(out, HasSubstr(", 400 tokens)"));
}

// ---- files of --out DIR ----------------------------------------------------------------------------

// ---- every number of a run's files, one rule each (train/run_files.h run_file_fields) -------------

namespace {

// The texts a field's rule refuses, each with the words of its error:
// negative, huge, 1e300, NaN, inf, fractional where whole, empty, junk.
std::vector<std::pair<std::string, std::string>> hostile_values(const nn::FieldRule& rule) {
  const bool whole = rule.type == nn::FieldRule::Type::Whole;
  std::vector<std::pair<std::string, std::string>> v = {
      {"junk", "is not a number"}, {"12abc", "is not a number"}, {" 1", "is not a number"}, {"0x10", "is not a number"}};
  if (!rule.empty_ok) v.push_back({"", "is empty"});
  if (!rule.non_finite_ok) {
    for (const char* text : {"nan", "inf", "-inf", "NaN"}) v.push_back({text, "is not a finite number"});
  }
  const std::string below = rule.min > 0 ? (whole ? fmt::format("{:.0f}", rule.min - 1) : fmt::format("{:g}", rule.min / 2))
                            : rule.min == 0 ? "-1"
                                            : fmt::format("{:g}", rule.min * 10);
  v.push_back({below, "is outside the range"});
  const std::string above = whole ? (rule.max < 1e15 ? fmt::format("{:.0f}", rule.max + 1) : "99999999999999999999")
                                  : fmt::format("{:g}", rule.max * 10);
  v.push_back({above, "is outside the range"});
  if (rule.max < 1e300) v.push_back({"1e300", "is outside the range"});
  if (rule.max < 9e18) v.push_back({"9223372036854775807", "is outside the range"});
  if (whole) v.push_back({fmt::format("{}", rule.min + 0.5), "is not a whole number"});
  return v;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines = split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

}  // namespace

// Every numeric field of every file of a run that ropegrad reads back, walked
// from the one declaration of their rules: each hostile value, put in a run's
// real file, is refused by every reader of that file with an error naming the
// file, the field and the range. A field declared in run_file_fields() is
// walked here without a case written for it.
TEST(RunFiles, EveryNumericFieldOfEveryRunFileRefusesHostileValues) {
  const TempDir dir("hostile");
  TrainConfig c = tiny_config();
  c.micro_batch = 4;  // dp.csv and dp_buckets.csv too
  c.checkpoint_every = 4;
  c.stop_after = 8;
  c.out_dir = dir.path();
  train(c, nullptr);
  SweepPoint point;  // the run as a sweep's point: its outcome.txt
  point.index = 1;
  point.label = "lr=0.003";
  point.dir = dir.path();
  TrainResult outcome;
  outcome.metric_name = "accuracy";
  write_outcome(point, outcome, 8);
  TrainConfig resume = c;
  resume.stop_after = 0;
  resume.resume = true;
  const std::string ckpt = dir.file("checkpoint.safetensors");
  const nn::SafetensorsFile checkpoint = nn::load_safetensors(ckpt);
  const auto load = [&] {
    nn::TransformerLM model(read_model_config(dir.file("config.txt")));
    nn::load_checkpoint(ckpt, model, nullptr);
  };
  // Every reader of each file: the direct one and the commands that read it.
  const std::map<std::string, std::vector<std::pair<std::string, std::function<void()>>>> readers = {
      {"config.txt", {{"read_run_config", [&] { read_run_config(dir.file("config.txt")); }},
                      {"train --resume", [&] { train(resume, nullptr); }}}},
      {"checkpoint.safetensors", {{"load_checkpoint", load}, {"train --resume", [&] { train(resume, nullptr); }}}},
      {"outcome.txt", {{"the sweep's row", [&] { read_sweep_row(point); }}}},
      {"metrics.csv", {{"read_run_csv", [&] { read_run_csv(dir.file("metrics.csv"), "test"); }},
                       {"train --resume", [&] { train(resume, nullptr); }},
                       {"the sweep's row", [&] { read_sweep_row(point); }}}},
      {"time.csv", {{"read_run_csv", [&] { read_run_csv(dir.file("time.csv"), "test"); }},
                    {"train --resume", [&] { train(resume, nullptr); }}}},
      {"dp.csv", {{"read_run_csv", [&] { read_run_csv(dir.file("dp.csv"), "test"); }},
                  {"dp-simulate", [&] { profile_from_run(dir.path()); }},
                  {"train --resume", [&] { train(resume, nullptr); }}}},
      {"dp_buckets.csv", {{"read_run_csv", [&] { read_run_csv(dir.file("dp_buckets.csv"), "test"); }},
                          {"dp-simulate", [&] { profile_from_run(dir.path()); }},
                          {"train --resume", [&] { train(resume, nullptr); }}}},
  };
  // The files as written read without an error.
  load();
  read_sweep_row(point);
  profile_from_run(dir.path());
  int cases = 0;
  for (const RunFileFields& file : run_file_fields()) {
    const std::string name(file.file), path = dir.file(name);
    ASSERT_TRUE(readers.count(name)) << "a run file without a reader in this test: " << name;
    ASSERT_TRUE(fs::exists(path)) << path;
    const std::string original = read_text(path);
    for (const RunField& field : file.fields) {
      for (const auto& [value, words] : hostile_values(field.rule)) {
        SCOPED_TRACE(fmt::format("{} {}='{}'", name, field.name, value));
        // The value in the file, where the field is.
        if (name == "checkpoint.safetensors") {
          nn::save_safetensors(path, checkpoint.tensors, {{"format", "ropegrad-checkpoint-1"}, {"step", value}});
        } else if (name.ends_with(".csv")) {
          std::vector<std::string> lines = lines_of(original);
          const std::vector<std::string> names = split(lines[0], ',');
          std::vector<std::string> cells = split(lines[1], ',');
          const auto at = std::find(names.begin(), names.end(), field.name);
          ASSERT_NE(at, names.end()) << "no column " << field.name;
          cells[static_cast<size_t>(at - names.begin())] = value;
          lines[1] = fmt::format("{}", fmt::join(cells, ","));
          std::ofstream(path) << joined(lines);
        } else {  // key=value: the key's line, or a new one (a key this run does not write)
          std::vector<std::string> lines = lines_of(original);
          const std::string key = std::string(field.name) + "=";
          auto line = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.starts_with(key); });
          if (line == lines.end()) line = lines.insert(lines.end(), "");
          *line = key + value;
          std::ofstream(path) << joined(lines);
        }
        for (const auto& [reader, read] : readers.at(name)) {
          SCOPED_TRACE(reader);
          const std::string msg = error_of(read);
          EXPECT_THAT(msg, HasSubstr(path)) << "the file";
          const std::string named = value.empty() ? fmt::format("{} is empty", field.name)
                                                  : fmt::format("{} {}", field.name, quote_bytes(value, 40));
          EXPECT_THAT(msg, HasSubstr(named)) << "the field and the value";
          EXPECT_THAT(msg, HasSubstr(words));
          EXPECT_THAT(msg, HasSubstr("expected " + nn::describe_field_rule(field.rule))) << "the range";
          ++cases;
        }
        std::ofstream(path, std::ios::binary) << original;
      }
    }
  }
  EXPECT_GT(cases, 600);
  // Put back, the run resumes and ends where an uninterrupted one does.
  EXPECT_EQ(train(resume, nullptr).last_step, 12);
}

TEST(Train, WritesMetricsSummaryConfigAndCheckpoint) {
  const TempDir dir("files");
  TrainConfig c = tiny_config();
  c.out_dir = dir.path();
  const TrainResult r = train(c, nullptr);

  // Parameters by hand: embedding 8*16, attention 4*16^2, SwiGLU 3*16*32, norms 3*16, head 8*16.
  EXPECT_EQ(r.parameters, 128 + 1024 + 1536 + 48 + 128);
  EXPECT_EQ(r.task, "copy");
  EXPECT_EQ(r.attention, "standard");
  EXPECT_EQ(r.metric_name, "accuracy (second half)");
  EXPECT_GT(r.peak_bytes, 0);
  EXPECT_GT(r.tokens_per_second, 0);

  // metrics.csv: eval columns only on eval steps (4, 8, 12).
  const std::vector<std::string> lines = split(read_text(dir.file("metrics.csv")), '\n');
  ASSERT_EQ(lines.size(), 14u);
  EXPECT_EQ(lines[0], "step,loss,lr,grad_norm,eval_loss,eval_metric");
  for (size_t s = 1; s <= 12; ++s) {
    const std::vector<std::string> f = split(lines[s], ',');
    ASSERT_EQ(f.size(), 6u);
    EXPECT_EQ(std::stod(f[1]), std::stod(fmt::format("{:.6f}", r.steps[s - 1].loss)));
    EXPECT_EQ(f[4].empty(), s % 4 != 0) << lines[s];
    EXPECT_EQ(f[5].empty(), s % 4 != 0) << lines[s];
  }
  const std::vector<std::string> last = split(lines[12], ',');
  EXPECT_EQ(last[4], fmt::format("{:.6f}", r.final_loss));
  EXPECT_EQ(last[5], fmt::format("{:.6f}", r.final_metric));

  // summary.json: every key, with the run's values.
  const std::string json = read_text(dir.file("summary.json"));
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.substr(json.size() - 2), "}\n");
  for (const char* key : {"task", "attention", "parameters", "steps", "final_eval_loss", "metric", "final_metric",
                          "peak_bytes", "tokens_per_second", "seconds_per_step", "seed"}) {
    EXPECT_THAT(json, HasSubstr(fmt::format("\"{}\": ", key))) << key;
  }
  EXPECT_THAT(json, HasSubstr("\"task\": \"copy\""));
  EXPECT_THAT(json, HasSubstr("\"attention\": \"standard\""));
  EXPECT_THAT(json, HasSubstr("\"parameters\": 2864"));
  EXPECT_THAT(json, HasSubstr("\"steps\": 12"));
  EXPECT_THAT(json, HasSubstr("\"seed\": 5"));
  EXPECT_THAT(json, HasSubstr("\"metric\": \"accuracy (second half)\""));
  EXPECT_THAT(json, HasSubstr(fmt::format("\"final_eval_loss\": {:.6f}", r.final_loss)));
  // Well-formed enough for a JSON reader: "key": value pairs separated by commas.
  const std::vector<std::string> json_lines = split(json, '\n');
  for (size_t i = 1; i + 2 < json_lines.size(); ++i) {
    EXPECT_TRUE(is_json_pair_line(json_lines[i])) << json_lines[i];
    EXPECT_EQ(json_lines[i].back() == ',', i + 3 < json_lines.size()) << "commas between pairs only";
  }

  // config.txt rebuilds the model, and the checkpoint loads into it strictly.
  const nn::TransformerConfig mc = read_model_config(dir.file("config.txt"));
  EXPECT_EQ(mc.vocab_size, 8);
  EXPECT_EQ(mc.context_length, 7);
  nn::TransformerLM model(mc);
  EXPECT_EQ(model.num_parameters(), r.parameters);
  EXPECT_EQ(nn::load_checkpoint(dir.file("checkpoint.safetensors"), model, nullptr), 12);
  // The loaded model reproduces the final evaluation.
  const auto task = make_task("copy", c.task_options);
  const EvalRecord ev = evaluate(model, *task, c.eval_batches, c.batch_size, c.seed);
  EXPECT_NEAR(ev.loss, r.final_loss, 1e-12);
  EXPECT_NEAR(ev.metric, r.final_metric, 1e-12);
}

TEST(Train, ModelConfigRoundTrip) {
  const TempDir dir("config");
  fs::create_directories(dir.path());
  TrainConfig c = tiny_config(nn::AttentionKind::W2);
  c.model.sigma = nn::SigmaMode::Vector;
  c.model.tie_embeddings = true;
  c.model.rope_theta = 12345.678;
  c.model.num_layers = 3;
  c.model.d_ff = 48;
  const EntailmentTask task(5);
  std::ofstream(dir.file("config.txt")) << model_config_text(c, task);
  const nn::TransformerConfig m = read_model_config(dir.file("config.txt"));
  EXPECT_EQ(m.vocab_size, 8);       // from the task: 5 concepts + 3 tokens
  EXPECT_EQ(m.context_length, 11);  // 2 (5 - 1) + 3
  EXPECT_EQ(m.d_model, 16);
  EXPECT_EQ(m.num_layers, 3);
  EXPECT_EQ(m.num_heads, 2);
  EXPECT_EQ(m.d_ff, 48);
  EXPECT_EQ(m.rope_theta, 12345.678);
  EXPECT_EQ(m.attention, nn::AttentionKind::W2);
  EXPECT_EQ(m.sigma, nn::SigmaMode::Vector);
  EXPECT_TRUE(m.tie_embeddings);

  c.model.attention = nn::AttentionKind::Triple;
  c.model.tie_embeddings = false;
  std::ofstream(dir.file("config.txt")) << model_config_text(c, task);
  const nn::TransformerConfig t = read_model_config(dir.file("config.txt"));
  EXPECT_EQ(t.attention, nn::AttentionKind::Triple);
  EXPECT_FALSE(t.tie_embeddings);
}

TEST(Train, BadModelConfigFiles) {
  const TempDir dir("badconfig");
  fs::create_directories(dir.path());
  std::string msg = error_of([&] { read_model_config(dir.file("missing.txt")); });
  EXPECT_THAT(msg, HasSubstr("cannot read"));
  EXPECT_THAT(msg, HasSubstr("missing.txt"));

  std::ofstream(dir.file("no_dmodel.txt")) << "task=copy\nvocab_size=8\ncontext_length=7\n";
  msg = error_of([&] { read_model_config(dir.file("no_dmodel.txt")); });
  EXPECT_THAT(msg, HasSubstr("no_dmodel.txt"));
  EXPECT_THAT(msg, HasSubstr("'d_model'"));

  std::ofstream(dir.file("bad_attention.txt"))
      << "task=copy\nvocab_size=8\ncontext_length=7\nd_model=16\nnum_layers=1\nnum_heads=2\nd_ff=32\n"
         "rope_theta=10000\nattention=w9\nsigma=scalar\ntie_embeddings=0\n";
  msg = error_of([&] { read_model_config(dir.file("bad_attention.txt")); });
  EXPECT_THAT(msg, HasSubstr("attention"));
  EXPECT_THAT(msg, HasSubstr("'w9'"));
}

// Every value of config.txt is checked whole and against its range; the error
// names the file, the line and the key (these were `stoll`, silently accepted,
// or a 4 TB allocation from a 154-byte file).
TEST(Train, ConfigValuesAreCheckedWithFileLineAndKey) {
  const std::string good =
      "task=copy\nvocab_size=8\ncontext_length=7\nd_model=16\nnum_layers=1\nnum_heads=2\nd_ff=32\n"
      "rope_theta=10000\nattention=standard\nsigma=scalar\ntie_embeddings=0\n";
  EXPECT_EQ(parse_run_config(good, "c.txt").model.d_model, 16);
  struct Bad {
    std::string from, to, line, words;
  };
  const std::vector<Bad> bad = {
      {"d_model=16", "d_model=abc", ":4: d_model", "'abc' is not a number; expected a whole number in 1..65536"},
      {"d_model=16", "d_model=64abc", ":4: d_model", "'64abc' is not a number"},
      {"d_model=16", "d_model=1000000", ":4: d_model", "'1000000' is outside the range; expected a whole number in 1..65536"},
      {"d_model=16", "d_model=-3", ":4: d_model", "outside"},
      {"d_model=16", "d_model=16.5", ":4: d_model", "'16.5' is not a whole number"},
      {"d_model=16", "d_model= 16", ":4: d_model", "' 16' is not a number"},
      {"sigma=scalar", "sigma=bogus", ":10: sigma", "'bogus' is not scalar or vector"},
      {"rope_theta=10000", "rope_theta=nan", ":8: rope_theta", "not a finite number"},
      {"tie_embeddings=0", "tie_embeddings=yes", ":11: tie_embeddings", "'yes' is not a number; expected a whole number in 0..1"},
      {"num_heads=2", "num_heads=99999999999999999999", ":6: num_heads", "is outside the range"},
      // The settings are numbers too (they were kept as text, unchecked).
      {"task=copy", "task=copy\nsteps=-5", ":2: steps", "'-5' is outside the range; expected a whole number of steps in 1..1000000000000"},
      {"task=copy", "task=copy\nlr=nan", ":2: lr", "'nan' is not a finite number"},
      {"task=copy", "task=copy\ntokenizer_vocab=abc", ":2: tokenizer_vocab", "'abc' is not a number; expected a whole number of tokens"},
      {"d_ff=32", "d_ff=32\nd_ff=64", ":8", "'d_ff' appears twice"},
      {"task=copy", "task=copy\nbogus_key=1", ":2", "unknown key 'bogus_key'"},
      {"task=copy", "garbage line", ":1", "expected key=value"},
      {"num_heads=2", "num_heads=3", "", "not a multiple of num_heads 3"},
  };
  for (const Bad& b : bad) {
    std::string text = good;
    text.replace(text.find(b.from), b.from.size(), b.to);
    SCOPED_TRACE(b.to);
    const std::string msg = error_of([&] { parse_run_config(text, "run/config.txt"); });
    EXPECT_THAT(msg, HasSubstr("run/config.txt" + b.line));
    EXPECT_THAT(msg, HasSubstr(b.words));
  }
}

// A model the machine cannot hold is refused before anything is allocated,
// with the size asked for.
TEST(Train, SizesBeyondTheMachineAreRefusedWithTheSizeAskedFor) {
  const std::string huge =
      "task=copy\nvocab_size=8\ncontext_length=7\nd_model=65536\nnum_layers=1024\nnum_heads=2\nd_ff=32\n"
      "rope_theta=10000\nattention=standard\nsigma=scalar\ntie_embeddings=0\n";
  std::string msg = error_of([&] { parse_run_config(huge, "big/config.txt"); });
  EXPECT_THAT(msg, HasSubstr("big/config.txt"));
  EXPECT_THAT(msg, HasSubstr("GB"));
  TrainConfig c = tiny_config();
  c.batch_size = 1000000000;
  msg = error_of([&] { train(c, nullptr); });
  EXPECT_THAT(msg, HasSubstr("batch 1000000000"));
  EXPECT_THAT(msg, HasSubstr("GB, more than this machine's"));
}

// ---- learning ---------------------------------------------------------------------------------------

TEST(Train, CopyTaskLossFallsWellBelowItsStart) {
  // Loss on every next token: the first half is random (3 of 7 targets at
  // ln 8 each), the second half can be copied, so the floor is 3/7 ln 8 = 0.89
  // against ln 8 = 2.08 for uniform guessing. 120 steps of batch 32 (~0.1 s);
  // seeds 0..7 all end between 1.09 and 1.46, with copy accuracy >= 0.78.
  TrainConfig c = tiny_config();
  c.steps = 120;
  c.batch_size = 32;
  c.lr = 3e-2;
  c.min_lr = 3e-3;
  c.warmup = 5;
  c.eval_every = 120;
  c.eval_batches = 4;
  c.seed = 3;
  const TrainResult r = train(c, nullptr);
  const double start = r.steps.front().loss;
  EXPECT_GT(start, std::log(8.0) - 0.2);  // a random model cannot beat uniform guessing by much
  double end = 0;
  for (size_t i = r.steps.size() - 5; i < r.steps.size(); ++i) end += r.steps[i].loss / 5;
  EXPECT_LT(end, 0.8 * start) << "start " << start << ", mean of the last 5 steps " << end;
  EXPECT_LT(r.final_loss, 0.8 * std::log(8.0)) << "held-out loss vs uniform guessing";
  EXPECT_GT(r.final_metric, 0.6) << "second-half copy accuracy (chance is 1/8)";
}

// ---- plot ---------------------------------------------------------------------------------------------

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(Plot, SvgHasOnePolylinePerSeriesAndALegend) {
  const TempDir dir("plot");
  fs::create_directories(dir.path());
  const std::vector<Series> series = {
      {"standard", {{1, 3.0}, {2, 2.5}, {3, 2.0}, {4, 1.0}}},
      {"w2", {{1, 3.2}, {2, NAN}, {3, 1.8}, {4, 0.9}}},  // the NaN point is left out
      {"triple", {{1, 2.9}, {2, 2.4}, {3, 2.2}, {4, 1.5}}},
  };
  const std::string path = dir.file("loss.svg");
  write_svg_plot(path, series, "copy task: training loss", "step", "loss");
  const std::string svg = read_text(path);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(count_of(svg, "<svg"), 1);
  EXPECT_EQ(count_of(svg, "<polyline"), 3);
  for (const char* name : {"standard", "w2", "triple"}) EXPECT_THAT(svg, HasSubstr(fmt::format(">{}</text>", name)));
  EXPECT_THAT(svg, HasSubstr(">copy task: training loss</text>"));
  EXPECT_THAT(svg, HasSubstr(">step</text>"));
  EXPECT_THAT(svg, HasSubstr(">loss</text>"));
  EXPECT_EQ(svg.find("nan"), std::string::npos);

  // Points per polyline, all inside the plot area (x in [70, 550], y in [40, 385]).
  std::vector<int> counts;
  for (const std::string& points : polyline_points(svg)) {
    std::istringstream pts(points);
    std::string pt;
    int n = 0;
    double xmin = 1e9, xmax = -1e9;
    while (pts >> pt) {
      const auto comma = pt.find(',');
      ASSERT_NE(comma, std::string::npos) << pt;
      const double x = std::stod(pt.substr(0, comma)), y = std::stod(pt.substr(comma + 1));
      EXPECT_TRUE(x >= 70 - 1e-9 && x <= 550 + 1e-9) << pt;
      EXPECT_TRUE(y >= 40 - 1e-9 && y <= 385 + 1e-9) << pt;
      xmin = std::min(xmin, x), xmax = std::max(xmax, x);
      ++n;
    }
    EXPECT_DOUBLE_EQ(xmin, 70.0);   // x = 1 at the left edge
    EXPECT_DOUBLE_EQ(xmax, 550.0);  // x = 4 at the right edge
    counts.push_back(n);
  }
  EXPECT_EQ(counts, (std::vector<int>{4, 3, 4}));
}

TEST(Plot, NothingToPlotOrUnwritablePathIsAnError) {
  std::string msg = error_of([] {
    write_svg_plot("/tmp/ropegrad_never_written.svg", {{"w2", {{1, NAN}}}}, "t", "x", "y");
  });
  EXPECT_THAT(msg, HasSubstr("plot"));
  EXPECT_THAT(msg, HasSubstr("nothing to plot"));
  msg = error_of([] { write_svg_plot("/nonexistent/dir/loss.svg", {{"w2", {{1, 2.0}}}}, "t", "x", "y"); });
  EXPECT_THAT(msg, HasSubstr("plot"));
  EXPECT_THAT(msg, HasSubstr("/nonexistent/dir/loss.svg"));
}

// ---- bad configurations ----------------------------------------------------------------------------

TEST(TrainErrors, BadConfigsNameTheProblem) {
  TrainConfig c = tiny_config();
  c.steps = 0;
  std::string msg = error_of([&] { train(c, nullptr); });
  EXPECT_THAT(msg, HasSubstr("train"));
  EXPECT_THAT(msg, HasSubstr("steps"));
  EXPECT_THAT(msg, HasSubstr("got 0"));

  c = tiny_config();
  c.batch_size = -2;
  msg = error_of([&] { train(c, nullptr); });
  EXPECT_THAT(msg, HasSubstr("batch_size"));
  EXPECT_THAT(msg, HasSubstr("-2"));

  c = tiny_config();
  c.eval_every = 0;
  msg = error_of([&] { train(c, nullptr); });
  EXPECT_THAT(msg, HasSubstr("train"));
  EXPECT_THAT(msg, HasSubstr("eval_every"));

  // bucket_mb becomes a number of bytes: a value no integer holds, or under a byte, is refused first.
  for (const double mb : {std::nan(""), 1e300, 1e-9, -1.0}) {
    c = tiny_config();
    c.micro_batch = 2;
    c.bucket_mb = mb;
    EXPECT_THAT(error_of([&] { train(c, nullptr); }), HasSubstr("train: bucket_mb must be in [1e-6, 1e6]")) << mb;
  }

  c = tiny_config();
  c.resume = true;  // no out_dir: no checkpoint to resume from
  msg = error_of([&] { train(c, nullptr); });
  EXPECT_THAT(msg, HasSubstr("train"));
  EXPECT_THAT(msg, HasSubstr("--resume"));
  EXPECT_THAT(msg, HasSubstr("--out"));

  c = tiny_config();
  c.task = "sorting";
  msg = error_of([&] { train(c, nullptr); });
  EXPECT_THAT(msg, HasSubstr("task"));
  EXPECT_THAT(msg, HasSubstr("'sorting'"));

  // The attention variant arrives as a name (CLI flag, config.txt).
  msg = error_of([] { nn::parse_attention_kind("quadratic"); });
  EXPECT_THAT(msg, HasSubstr("attention"));
  EXPECT_THAT(msg, HasSubstr("'quadratic'"));

  c = tiny_config();
  c.model.num_heads = 3;  // 16 % 3 != 0
  msg = error_of([&] { train(c, nullptr); });
  EXPECT_THAT(msg, HasSubstr("num_heads 3"));
}

}  // namespace
