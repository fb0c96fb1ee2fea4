// ex13-cross-entropy: nn::cross_entropy, the mean of -log softmax(z)[t] over
// the targets that are not ignore_index, and its fused backward
// (nn/cross_entropy.cpp), against F.cross_entropy (tests/fixtures/nn/ce_*: the
// gradient is that of loss * w, w a random scalar).
#include <bit>
#include <cmath>

#include "course/checks/check_util.h"
#include "course/checks/linear_form.h"
#include "nn/functional.h"

namespace ropegrad::course {
namespace {

// The loss ("out") and, `with_backward`, d (loss w) / d logits ("grad_logits").
// A forward check runs no backward.
NamedTensors ce_run(const std::string& c, const Tensor& logits_in, const Tensor& w, bool with_backward = true) {
  const Tensor targets = nn_fixture(c, "f64", "targets");
  Tensor logits = logits_in.detach().requires_grad_();
  const Tensor loss = nn::cross_entropy(logits, targets, nn_fixture(c, "f64", "ignore_index").item<int64_t>());
  if (!with_backward) return {{"out", loss.detach()}};
  backward(mul(loss, to(w, logits_in.dtype())));
  return {{"out", loss.detach()}, {"grad_logits", logits.grad()}};
}

// "each counted row's gradient, over w / N, is -(one-hot / p) ..." when
// the rows whose target is ignored get 0 and the counted rows' entries are one
// combination of p = softmax(z), the one-hot, one-hot / p, log p, z and 1 (at
// most two of them; linear_form.h); "" otherwise.
std::string gradient_form(const std::vector<double>& g, double scale, const std::vector<int64_t>& targets,
                          int64_t ignore, const std::string& c, size_t v) {
  const std::vector<double> z = nn_fixture(c, "f64", "logits").to_vector<double>();
  std::vector<double> got;
  std::vector<FormTerm> terms = {{"p", {}}, {"one-hot", {}}, {"one-hot / p", {}}, {"log p", {}}, {"z", {}}, {"1", {}}};
  for (size_t r = 0; r * v < g.size(); ++r) {
    if (targets[r] == ignore) {
      for (size_t j = 0; j < v; ++j)
        if (g[r * v + j] != 0) return "";
      continue;
    }
    double top = -INFINITY, sum = 0;
    for (size_t j = 0; j < v; ++j) top = std::max(top, z[r * v + j]);
    for (size_t j = 0; j < v; ++j) sum += std::exp(z[r * v + j] - top);
    for (size_t j = 0; j < v; ++j) {
      const double log_p = z[r * v + j] - top - std::log(sum), p = std::exp(log_p);
      const double one_hot = static_cast<int64_t>(j) == targets[r] ? 1.0 : 0.0;
      got.push_back(g[r * v + j] / scale);
      const double values[] = {p, one_hot, one_hot / p, log_p, z[r * v + j], 1.0};
      for (size_t t = 0; t < terms.size(); ++t) terms[t].values.push_back(values[t]);
    }
  }
  // A multiple of p - one-hot is said better by difference_structure (a factor, a sign).
  std::vector<double> right(got.size());
  std::vector<size_t> every(got.size());
  for (size_t i = 0; i < got.size(); ++i) right[i] = terms[0].values[i] - terms[1].values[i], every[i] = i;
  if (!std::isnan(findings_detail::common_ratio(got, right, every))) return "";
  const std::string form = linear_form(got, terms, 2);
  if (form.empty()) return "";
  return "each counted row's gradient, over the upstream w / N, is " + form +
         " at every entry (p = softmax(z) of the row, one-hot = its target's), where p - one-hot belongs; ";
}

// Where a wrong gradient of the logits is wrong, against the targets: exactly
// at each counted row's target entry (the one-hot's place), or exactly in the
// rows whose target is ignored; "" when neither fits every entry.
std::string gradient_against_targets(const Tensor& got, const Tensor& want, const std::string& c) {
  if (!got.defined() || got.shape() != want.shape()) return "";
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  const std::vector<int64_t> targets = to(nn_fixture(c, "f64", "targets"), DType::Int64).to_vector<int64_t>();
  const int64_t ignore = nn_fixture(c, "f64", "ignore_index").item<int64_t>();
  const auto v = static_cast<size_t>(got.size(-1));
  bool at_targets = true, in_ignored_rows = true, any = false;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool wrong = !(std::abs(g[i] - w[i]) <= 1e-12 + 1e-10 * std::abs(w[i]));
    const int64_t t = targets[i / v];
    any = any || wrong;
    at_targets = at_targets && wrong == (t != ignore && static_cast<int64_t>(i % v) == t);
    in_ignored_rows = in_ignored_rows && wrong == (t == ignore);
  }
  if (!any) return "";
  if (at_targets) return "wrong exactly at each row's target entry (where the one-hot is 1), right elsewhere; ";
  if (in_ignored_rows) return "wrong exactly in the rows whose target is ignore_index, right elsewhere; ";
  // The probabilities each counted row's gradient implies, grad / (w / N) + one-hot, against softmax(z) of the
  // row: which rows hold other rows' probabilities, a factor, a transpose (findings.h).
  const double w_scale = nn_fixture(c, "f64", "w").item<double>();
  size_t counted = 0;
  for (const int64_t t : targets) counted += t != ignore;
  if (counted == 0) return "";
  const double scale = w_scale / static_cast<double>(counted);
  std::vector<double> implied(g.size(), 0.0), probs(g.size(), 0.0);
  std::vector<bool> wrong(g.size(), false);
  for (size_t i = 0; i < g.size(); ++i) {
    const int64_t t = targets[i / v];
    if (t == ignore) continue;
    const double one_hot = static_cast<int64_t>(i % v) == t ? 1.0 : 0.0;
    implied[i] = g[i] / scale + one_hot;
    probs[i] = w[i] / scale + one_hot;
    wrong[i] = !(std::abs(implied[i] - probs[i]) <= 1e-9 + 1e-9 * std::abs(probs[i]));
  }
  if (const std::string form = gradient_form(g, scale, targets, ignore, c, v); !form.empty()) return form;
  const std::string structure = difference_structure(implied, probs, got.shape(), wrong);
  if (structure.empty()) return "";
  return "the probabilities it implies (grad / (w / N) + one-hot, each counted row) against softmax(z): " +
         structure + "; ";
}

// A wrong loss whose ratio to torch's is one of the case's counts (N rows,
// the counted ones, V classes) or its inverse: "" otherwise.
// The loss as the sum of some counted rows' losses -log softmax(z_r)[t_r]
// over a count (the rows summed, the counted targets, all targets): which
// rows are left out of the sum, or counted that should not be. "" when no
// subset of at most 12 counted rows gives it.
std::string rows_summed(const Tensor& logits, const std::vector<int64_t>& targets, int64_t ignore, double got) {
  if (!std::isfinite(got)) return "";
  const std::vector<double> z = logits.to_vector<double>();
  const size_t v = static_cast<size_t>(logits.size(-1)), n = targets.size();
  std::vector<size_t> rows;
  std::vector<double> loss;
  for (size_t r = 0; r < n; ++r) {
    if (targets[r] == ignore) continue;
    double m = -INFINITY, total = 0;
    for (size_t j = 0; j < v; ++j) m = std::max(m, z[r * v + j]);
    for (size_t j = 0; j < v; ++j) total += std::exp(z[r * v + j] - m);
    rows.push_back(r);
    loss.push_back(m + std::log(total) - z[r * v + static_cast<size_t>(targets[r])]);
  }
  if (rows.empty() || rows.size() > 12) return "";
  const auto list = [&](uint32_t mask, bool in) {
    std::string s;
    for (size_t k = 0; k < rows.size(); ++k)
      if (((mask >> k) & 1u) == in) s += fmt::format("{}{}", s.empty() ? "" : ", ", rows[k]);
    return s;
  };
  const uint32_t all = (1u << rows.size()) - 1;
  for (uint32_t mask = 1; mask <= all; ++mask) {
    double sum = 0;
    for (size_t k = 0; k < rows.size(); ++k)
      if ((mask >> k) & 1u) sum += loss[k];
    const auto size = static_cast<double>(std::popcount(mask));
    const std::pair<double, std::string> counts[] = {{size, "the rows summed"},
                                                     {static_cast<double>(rows.size()), "the counted targets"},
                                                     {static_cast<double>(n), "all the targets"}};
    for (const auto& [k, what] : counts) {
      if (mask == all && k == static_cast<double>(rows.size())) continue;  // the right loss
      if (!(std::abs(got - sum / k) <= 1e-10 * std::abs(got))) continue;
      const bool one_out = std::popcount(all & ~mask) == 1;
      return fmt::format("the loss is the sum of the losses of rows {} over {:g} ({}){}; ", list(mask, true), k, what,
                         mask == all ? ""
                                     : fmt::format(": {} {}, whose target{} not ignored, {} left out of the sum",
                                                   one_out ? "row" : "rows", list(mask, false),
                                                   one_out ? " is" : "s are", one_out ? "is" : "are"));
    }
  }
  return "";
}

// The loss as the mean, over the counted rows, of another quantity than
// -log softmax(z)[t]: the logit itself, the log-sum-exp, the probability.
std::string loss_look_alikes(const Tensor& logits, const std::vector<int64_t>& targets, int64_t ignore, double got) {
  if (!std::isfinite(got)) return "";
  const std::vector<double> z = logits.to_vector<double>();
  const size_t v = static_cast<size_t>(logits.size(-1));
  double neg_logit = 0, lse = 0, neg_prob = 0, neg_log_of_logit = 0, rows = 0;
  bool logs_defined = true;
  for (size_t r = 0; r < targets.size(); ++r) {
    if (targets[r] == ignore) continue;
    double m = -INFINITY, total = 0;
    for (size_t j = 0; j < v; ++j) m = std::max(m, z[r * v + j]);
    for (size_t j = 0; j < v; ++j) total += std::exp(z[r * v + j] - m);
    const double zt = z[r * v + static_cast<size_t>(targets[r])];
    neg_logit -= zt, lse += m + std::log(total), neg_prob -= std::exp(zt - m) / total, rows += 1;
    logs_defined = logs_defined && zt > 0;
    if (zt > 0) neg_log_of_logit -= std::log(zt);
  }
  if (rows == 0) return "";
  const std::pair<double, const char*> forms[] = {
      {neg_logit / rows, "the mean of -z[t], the target's logit itself where its log-probability belongs"},
      {lse / rows, "the mean of log sum_j exp(z_j), the target's term -z[t] left out"},
      {neg_prob / rows, "the mean of -softmax(z)[t], the probability where its log belongs"},
      {logs_defined ? neg_log_of_logit / rows : NAN, "the mean of -log z[t], the log of the logit itself"}};
  for (const auto& [value, text] : forms) {
    if (std::isfinite(value) && std::abs(got - value) <= 1e-10 * std::max(1.0, std::abs(value)))
      return fmt::format("the loss is {}; ", text);
  }
  return "";
}

std::string loss_against_counts(const Tensor& got, const Tensor& want, const std::string& c) {
  if (!got.defined() || got.numel() != 1) return "";
  const double g = got.to_vector<double>()[0], w = want.to_vector<double>()[0];
  if (w == 0 || std::abs(g - w) <= 1e-10 * std::abs(w)) return "";
  const Tensor logits = nn_fixture(c, "f64", "logits");
  const std::vector<int64_t> targets = to(nn_fixture(c, "f64", "targets"), DType::Int64).to_vector<int64_t>();
  const int64_t ignore = nn_fixture(c, "f64", "ignore_index").item<int64_t>();
  const auto n = static_cast<double>(targets.size());
  double counted = 0;
  for (const int64_t t : targets) counted += t != ignore;
  const double v = static_cast<double>(logits.size(-1));
  const std::pair<double, std::string> counts[] = {
      {counted, fmt::format("the {} counted targets: their sum where their mean belongs", counted)},
      {n, fmt::format("the {} targets, ignored ones included", n)},
      {v, fmt::format("the {} classes", v)}};
  for (const auto& [k, text] : counts) {
    if (std::abs(g - k * w) <= 1e-10 * std::abs(k * w)) return fmt::format("{} x torch's loss, {}; ", k, text);
    if (std::abs(g - w / k) <= 1e-10 * std::abs(w / k)) return fmt::format("1/{} of torch's loss, {}; ", k, text);
  }
  if (counted != n && std::abs(g - w * counted / n) <= 1e-10 * std::abs(w)) {
    return fmt::format("{} / {} x torch's loss: the counted targets' sum divided by all {} targets, ignored ones "
                       "included; ",
                       counted, n, n);
  }
  if (std::string rows = rows_summed(logits, targets, ignore, g); !rows.empty()) return rows;
  return loss_look_alikes(logits, targets, ignore, g);
}

void expect_f64_case(const std::string& c, Part part) {
  NamedTensors results;
  try {
    results = ce_run(c, nn_fixture(c, "f64", "logits"), nn_fixture(c, "f64", "w"), part != Part::Forward);
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& e) {
    ADD_FAILURE() << c << ": raised an error: " << e.what();
    return;
  }
  for (const auto& [n, t] : results) {
    if (!in_part(n, part)) continue;
    const Tensor want = nn_fixture(c, "f64", n);
    std::string where = n == "grad_logits" ? gradient_against_targets(t, want, c) : "";
    if (n == "out") where = loss_against_counts(t, want, c);
    const std::string label = c + " " + (n == "out" ? std::string("loss") : n);
    expect_values(t, want, f64_tol(), label + (where.empty() ? "" : ": " + where.substr(0, where.size() - 2)));
  }
}

// The forward first: these run no backward.
TEST(ex13_cross_entropy, the_loss_of_random_logits_matches_torch_float64) {  // (6, 10)
  expect_f64_case("ce_basic", Part::Forward);
}

TEST(ex13_cross_entropy, logits_of_magnitude_1e30_give_a_finite_loss) {  // exp overflows unless the max is subtracted first
  expect_f64_case("ce_huge", Part::Forward);
}

TEST(ex13_cross_entropy, ignored_targets_are_left_out_of_the_mean) {  // ce_ignore: two of six targets are -100
  const Tensor logits = nn_fixture("ce_ignore", "f64", "logits");
  const double loss = ce_run("ce_ignore", logits, nn_fixture("ce_ignore", "f64", "w"), false)[0].second.item<double>();
  const std::vector<int64_t> t = nn_fixture("ce_ignore", "f64", "targets").to_vector<int64_t>();
  double kept = 0;
  for (int64_t v : t) kept += v != -100;
  const double want = nn_fixture("ce_ignore", "f64", "out").item<double>();
  if (std::abs(loss - want * kept / static_cast<double>(t.size())) < 1e-9 * std::abs(want))
    ADD_FAILURE() << "the mean counts the ignored targets: loss " << loss << " = " << kept << "/" << t.size()
                  << " x the expected " << want << " (divide by the " << kept << " targets that are not ignored)";
  else
    expect_f64_case("ce_ignore", Part::Forward);
}

TEST(ex13_cross_entropy, an_ignore_index_that_is_a_class_is_ignored) { expect_f64_case("ce_ignore_class", Part::Forward); }

TEST(ex13_cross_entropy, the_loss_of_logits_b_t_v_matches_torch_float64) {  // (2, 3, 11), one pad
  expect_f64_case("ce_3d", Part::Forward);
}

// The gradient, once the loss is right.
#define AFTER_CE_FORWARD()                                                                                  \
  COURSE_AFTER_FORWARD("the_loss_of_random_logits_matches_torch_float64",                                  \
                       "logits_of_magnitude_1e30_give_a_finite_loss", "ignored_targets_are_left_out_of_the_mean", \
                       "an_ignore_index_that_is_a_class_is_ignored", "the_loss_of_logits_b_t_v_matches_torch_float64")

// d (loss g) / d logits = g d loss / d logits: the gradient of ce_basic's
// logits for the output gradients g = 0.5 and g = -2.5 must differ by the
// factor -5. When they do not, the part of the second that is not -5 x the
// first is located against the targets.
TEST(ex13_cross_entropy, the_gradient_is_proportional_to_the_output_gradient) {
  AFTER_CE_FORWARD();
  const Tensor logits_in = nn_fixture("ce_basic", "f64", "logits"), targets = nn_fixture("ce_basic", "f64", "targets");
  const int64_t ignore = nn_fixture("ce_basic", "f64", "ignore_index").item<int64_t>();
  const auto grad_for = [&](double g) {
    Tensor logits = clone(logits_in).detach().requires_grad_();
    backward(nn::cross_entropy(logits, targets, ignore), scalar_tensor(g, kF64));
    return logits.grad();
  };
  const double g1 = 0.5, g2 = -2.5;
  const Tensor a = grad_for(g1), b = grad_for(g2);
  if (!a.defined() || !b.defined()) {
    ADD_FAILURE() << "no gradient reached the logits";
    return;
  }
  const std::vector<double> ga = a.to_vector<double>(), gb = b.to_vector<double>();
  // The gradient for g = 1, from torch's for g = w.
  const double w = nn_fixture("ce_basic", "f64", "w").item<double>();
  const std::vector<double> unit = nn_fixture("ce_basic", "f64", "grad_logits").to_vector<double>();
  const auto close = [](double x, double y) { return std::abs(x - y) <= 1e-12 + 1e-9 * std::abs(y); };
  bool scaled = true, same = true, both_unit = true, at_targets = true, in_ignored = true, any_off = false;
  const std::vector<int64_t> t = to(targets, DType::Int64).to_vector<int64_t>();
  const auto v = static_cast<size_t>(a.size(-1));
  double ratio = NAN;
  bool one_ratio = true;
  for (size_t i = 0; i < ga.size(); ++i) {
    const bool off = !close(gb[i], g2 / g1 * ga[i]);
    scaled = scaled && !off;
    same = same && close(gb[i], ga[i]);
    both_unit = both_unit && close(ga[i], unit[i] / w) && close(gb[i], unit[i] / w);
    any_off = any_off || off;
    at_targets = at_targets && off == (t[i / v] != ignore && static_cast<int64_t>(i % v) == t[i / v]);
    in_ignored = in_ignored && off == (t[i / v] == ignore);
    if (ga[i] != 0) {
      if (std::isnan(ratio)) ratio = gb[i] / ga[i];
      one_ratio = one_ratio && close(gb[i] / ga[i], ratio);
    }
  }
  if (scaled) return;
  const std::string given = fmt::format("output gradients g = {} and g = {}", g1, g2);
  if (same)
    ADD_FAILURE() << "the gradient does not scale with the output gradient: d logits is the same for " << given
                  << (both_unit ? ", and both are the gradient for g = 1" : "") << " (expected g x d loss / d logits)";
  else if (one_ratio && std::abs(ratio - (g2 / g1) * (g2 / g1)) <= 1e-9 * std::abs(ratio))
    ADD_FAILURE() << "for " << given << " d logits differs by the factor " << fmt::format("{:.6g}", ratio)
                  << " = (" << g2 << " / " << g1 << ")^2 at every entry: it scales with g^2, the output gradient "
                  << "applied twice (expected g x d loss / d logits, the ratio " << g2 / g1 << ")";
  else if (one_ratio)
    ADD_FAILURE() << "for " << given << " d logits differs by the factor " << fmt::format("{:.6g}", ratio)
                  << " at every entry, not by their ratio " << g2 / g1;
  else
    ADD_FAILURE() << "for " << given << " the second d logits is not " << g2 / g1 << " x the first"
                  << (at_targets ? ": the part that is not sits exactly at each row's target entry (where the one-hot "
                                   "is 1), every other entry scales"
                      : in_ignored ? ": the part that is not sits exactly in the rows whose target is ignore_index"
                                   : "");
}

TEST(ex13_cross_entropy, gradients_match_torch_float64) {  // the five cases above
  AFTER_CE_FORWARD();
  COURSE_REQUIRES("the_gradient_is_proportional_to_the_output_gradient");
  for (const char* c : {"ce_basic", "ce_huge", "ce_ignore", "ce_ignore_class", "ce_3d"}) expect_f64_case(c, Part::Gradients);
}

TEST(ex13_cross_entropy, loss_and_gradient_match_torch_float32) {
  AFTER_CE_FORWARD();
  COURSE_REQUIRES("the_gradient_is_proportional_to_the_output_gradient");
  // K = 10: the longest sum (the V classes of a row's exp sum; the N = 6
  // targets of the mean); stages: max, exp and sum, log, the mean, and the
  // backward's softmax.
  const Tensor w = nn_fixture("ce_basic", "f64", "w");
  const ParityRun run = [&](const std::vector<Tensor>& ls) { return ce_run("ce_basic", ls[0], w); };
  const NamedTensors got = run({nn_fixture("ce_basic", "f32", "logits")});
  const NamedTensors cond = condition_numbers(run, {nn_fixture("ce_basic", "f64", "logits")});
  for (size_t i = 0; i < got.size(); ++i) {
    const auto r = within_f32_bound(got[i].second, nn_fixture("ce_basic", "f32", got[i].first), cond[i].second, {10, 5});
    if (!r) ADD_FAILURE() << got[i].first << ": " << r.message();
  }
}

// Targets that are a strided view (a column of a (4, 2) tensor): the
// gradient pairs each row with its own target, as with the same targets
// contiguous.
TEST(ex13_cross_entropy, strided_targets_give_the_gradient_of_contiguous_ones) {
  AFTER_CE_FORWARD();
  Generator gen(17);
  const Tensor logits0 = randn({4, 5}, DType::Float64, &gen);
  const Tensor pairs = tensor_i64({3, 0, 1, 2, 0, 4, 4, 1}, {4, 2});
  const Tensor strided = select(pairs, 1, 0);  // [3, 1, 0, 4], stride 2
  const Tensor contiguous = tensor_i64({3, 1, 0, 4}, {4});
  Tensor a = clone(logits0).requires_grad_(), b = clone(logits0).requires_grad_();
  backward(nn::cross_entropy(a, strided), ones({}, DType::Float64));
  backward(nn::cross_entropy(b, contiguous), ones({}, DType::Float64));
  if (!a.grad().defined() || !b.grad().defined()) {
    ADD_FAILURE() << "cross_entropy: no gradient reached the logits";
    return;
  }
  if (all_close(a.grad(), b.grad(), f64_tol())) return;
  // Which targets the backward used: the row's one-hot sits where the gradient is negative.
  const std::vector<double> g = a.grad().to_vector<double>();
  std::string used;
  for (int r = 0; r < 4; ++r) {
    int at = -1;
    for (int c = 0; c < 5; ++c) if (g[r * 5 + c] < 0) at = c;
    used += fmt::format("{}{}", r ? ", " : "", at);
  }
  ADD_FAILURE() << "with the targets [3, 1, 0, 4] a strided view (column 0 of [[3, 0], [1, 2], [0, 4], [4, 1]], "
                   "stride 2) the gradient differs from that with the same targets contiguous: its one-hot entries "
                   "(the negative ones) sit at classes "
                << used << " of rows 0..3; the targets' next elements in memory are 3, 0, 1, 2";
}

TEST(ex13_cross_entropy, the_gradient_passes_gradcheck) {  // (4, 5) logits, row 1's target ignored
  AFTER_CE_FORWARD();
  Generator gen(13);
  const Tensor targets = tensor_i64({3, -100, 0, 4}, {4});
  expect_gradcheck([&](const std::vector<Tensor>& in) { return nn::cross_entropy(in[0], targets); },
                   {randn({4, 5}, DType::Float64, &gen).requires_grad_()}, "cross_entropy");
}

}  // namespace
}  // namespace ropegrad::course
