// What the course's checks share (course/checks/exNN_name.cpp).
//
// A check reports a failure with ADD_FAILURE() << "what is wrong": its first
// line is what `scripts/dev.sh course check` prints beside the check's name,
// so it must say what kind of wrong (a gradcheck diagnosis, the worst element
// and both values), not "Value of: ...". A stub's NotImplemented is never
// caught here: it propagates, and course-check turns it into "not written
// yet" or "blocked by exNN-...".
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/node.h"
#include "course/checks/findings.h"
#include "tensor/exercise.h"
#include "nn/module.h"
#include "tests/support/test_util.h"

namespace ropegrad::course {

using namespace ropegrad::testing;

// A float64 leaf of standard normal entries that requires grad: the input of
// the gradchecks (the same seed gives the same tensor in every check).
inline Tensor randn64(Shape shape, uint64_t seed) {
  Generator gen(seed);
  return randn(std::move(shape), DType::Float64, &gen).requires_grad_();
}

// The first of `forward_checks` (names of checks of the running suite,
// defined above the caller, so run before it) that failed with a wrong value,
// or that was skipped for one of its own that did (then that one); "" when
// none did. A check that reached a stub did not fail "with a wrong
// value": the caller then runs and reaches the stub itself (TODO or BLOCKED).
inline std::string failed_forward_check(std::initializer_list<const char*> forward_checks) {
  const ::testing::TestSuite* suite = ::testing::UnitTest::GetInstance()->current_test_suite();
  if (suite == nullptr) return "";
  for (const char* name : forward_checks) {
    for (int i = 0; i < suite->total_test_count(); ++i) {
      const ::testing::TestInfo* t = suite->GetTestInfo(i);
      if (std::string(t->name()) != name || !t->should_run()) continue;
      // Skipped for a check of its own that failed: that one, the root, fails for this caller too.
      if (t->result()->Skipped()) {
        for (int k = 0; k < t->result()->total_part_count(); ++k) {
          const std::string m = t->result()->GetTestPartResult(k).message();
          const size_t open = m.find("check '");
          const size_t close = open == std::string::npos ? open : m.find('\'', open + 7);
          if (close != std::string::npos) return m.substr(open + 7, close - open - 7);
        }
        continue;
      }
      if (!t->result()->Failed()) continue;
      bool stub = false;
      for (int k = 0; k < t->result()->total_part_count(); ++k)
        stub = stub || std::string(t->result()->GetTestPartResult(k).message()).find("not implemented: ex") !=
                           std::string::npos;
      if (!stub) {
        std::string readable = name;
        std::replace(readable.begin(), readable.end(), '_', ' ');
        return readable;
      }
    }
  }
  return "";
}

// First line of a gradient check: when one of the named forward checks of
// the same function failed, this check is skipped, naming it. A gradient
// check of a wrong forward diagnoses the wrong thing: the numerical Jacobian
// differentiates the wrong forward (a float32 forward's rounding, sin and cos
// swapped), and the analytical gradient is compared with that.
#define COURSE_AFTER_FORWARD(...)                                                                             \
  if (const std::string course_failed_forward_ = ::ropegrad::course::failed_forward_check({__VA_ARGS__});      \
      !course_failed_forward_.empty())                                                                        \
  GTEST_SKIP() << "the forward is wrong (check '" << course_failed_forward_                                   \
               << "' fails): fix it first; a gradient check of a wrong forward points at the wrong line"

// First line of a check that builds on earlier checks of the same exercise
// (a unit before the pieces built on it, then the whole): when one of them
// failed with a wrong value, this check is skipped, naming it, instead of
// diagnosing on top of code already known to be wrong.
#define COURSE_REQUIRES(...)                                                                                  \
  if (const std::string course_failed_prerequisite_ = ::ropegrad::course::failed_forward_check({__VA_ARGS__}); \
      !course_failed_prerequisite_.empty())                                                                   \
  GTEST_SKIP() << "needs check '" << course_failed_prerequisite_                                              \
               << "', which fails: fix it first; this check builds on it"

// gradcheck of f at `inputs` (float64 leaves); on failure the diagnosis
// (wrong sign, factor two, transposed, broadcast not summed back, ...) first,
// or, when none fits, what was observed (which input is wrong at how many
// entries, and where) and the worst entry; then gradcheck's whole report.
inline void expect_gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs, const std::string& label,
                             GradcheckOptions options = {}) {
  const GradcheckResult r = gradcheck(f, inputs, options);
  if (r.passed) return;
  // A stub that threw inside backward: let course-check see its message.
  if (r.report.find("not implemented: ex") != std::string::npos) {
    ADD_FAILURE() << r.report;
    return;
  }
  std::string what = r.diagnosis;
  if (what.empty()) {
    // No known pattern fits every entry: say what was observed (which input,
    // how many entries, where), as many of its facts as fit in about two
    // lines, then the worst entry when there is room.
    what = "the gradient is wrong";
    std::string observed;
    for (size_t at = 0; at < r.observed.size();) {
      const size_t end = std::min(r.observed.find("; ", at), r.observed.size());
      if (!observed.empty() && end > 300) break;
      observed = r.observed.substr(0, end);
      at = end + 2;
    }
    if (!observed.empty()) what += ": " + observed;
    if (!r.worst.empty()) {
      const GradcheckEntry& w = r.worst.front();
      const std::string worst =
          fmt::format(" (worst: d output{} / d input{}{}: numerical {:.6g}, analytical {:.6g})",
                      shape_str(w.output_index), w.input, shape_str(w.input_index), w.numerical, w.analytical);
      if (observed.empty() || what.size() + worst.size() <= 360) what += worst;
    }
  }
  if (r.diagnosis == "backward raised an error") {
    // The report's second line is the error itself (e.g. a gradient of the wrong shape).
    const size_t start = r.report.find('\n');
    if (start != std::string::npos) {
      std::string line = r.report.substr(start + 1, r.report.find('\n', start + 1) - start - 1);
      what += ": " + line.substr(std::min(line.find_first_not_of(' '), line.size()));
    }
  }
  ADD_FAILURE() << label << ": " << what << "\n" << r.report;
}

// actual equals expected within tol; the failure names the worst element.
inline void expect_values(const Tensor& actual, const Tensor& expected, Tol tol, const std::string& label) {
  if (!actual.defined()) {
    ADD_FAILURE() << label << ": no tensor (an undefined result or a missing gradient)";
    return;
  }
  if (actual.dtype() != expected.dtype()) {
    ADD_FAILURE() << label << ": dtype " << dtype_name(actual.dtype()) << ", expected " << dtype_name(expected.dtype());
    return;
  }
  const ::testing::AssertionResult r = all_close(actual, expected, tol);
  if (r) return;
  // The structure of the difference first (which elements, what relation), then the worst element.
  std::string structure;
  if (actual.shape() == expected.shape()) {
    const std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
    double largest = 0;
    for (double v : e) largest = std::max(largest, std::abs(v));
    std::vector<bool> wrong(a.size());
    for (size_t i = 0; i < a.size(); ++i)
      wrong[i] = !(std::abs(a[i] - e[i]) <= tol.atol + tol.atol_of_max * largest + tol.rtol * std::abs(e[i]));
    structure = difference_structure(a, e, actual.shape(), wrong);
  }
  ADD_FAILURE() << label << ": " << (structure.empty() ? "" : structure + "; ") << r.message();
}

// The float64 tolerance of a parity check against PyTorch.
inline Tol f64_tol() { return {1e-10, 1e-12}; }

// run's float32 results (from the float32 copy of `leaves`) are within the
// float32 error bound of `expected(name)`, with the condition numbers from the
// float64 run; each failure one line naming the tensor and its worst element.
inline void expect_f32_within_bound(const ParityRun& run, const std::vector<Tensor>& leaves,
                                    const std::function<Tensor(const std::string&)>& expected, F32Bound bound) {
  std::vector<Tensor> leaves32;
  for (const Tensor& t : leaves) leaves32.push_back(to(t, DType::Float32));
  const NamedTensors got = run(leaves32);
  const NamedTensors cond = condition_numbers(run, leaves);
  for (size_t i = 0; i < got.size(); ++i) {
    const auto r = within_f32_bound(got[i].second, expected(got[i].first), cond[i].second, bound);
    if (!r) ADD_FAILURE() << got[i].first << ": " << r.message();
  }
}

// f throws a ropegrad::Error naming every part. A stub's NotImplemented is
// not such an error: it propagates, so a bad-input check cannot pass on a stub.
inline void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts,
                         const std::string& label) {
  try {
    f();
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const std::string& part : parts) {
      if (msg.find(part) == std::string::npos) {
        ADD_FAILURE() << label << ": the error \"" << msg << "\" does not mention \"" << part << "\"";
      }
    }
    return;
  }
  ADD_FAILURE() << label << ": no error was raised";
}

// Which results of a parity run a check compares: the forward's outputs
// ("out", "out0", ...), the gradients ("grad_x", "grad.x", ...), or both.
enum class Part { Forward, Gradients, All };
inline bool in_part(const std::string& name, Part part) {
  return part == Part::All || (name.rfind("grad", 0) != 0) == (part == Part::Forward);
}

// A module's parity run against nn/<case>/<dt>/ (make_nn_fixtures.py): its
// parameters loaded from the fixture, x through `forward`, and the gradients
// of sum(out * w) w.r.t. x and each parameter, as tests/support's
// check_module_parity, but each failure one line naming the tensor and its
// worst element. float64: f64_tol(); float32: within the float32 error bound
// with K the longest reduction (rows B T, or a parameter's size) and the given
// number of rounded stages. `part`: compare only the output, or only the gradients.
inline void expect_module_parity(nn::Module& m, const std::function<Tensor(const Tensor&)>& forward,
                                 const std::string& c, const std::string& dt, int stages = 0, Part part = Part::All) {
  const std::vector<std::string> names = parameter_names(m);
  const ParityRun run = module_parity_run(m, forward, names);
  const std::vector<Tensor> leaves = module_parity_leaves(c, dt, names);
  if (dt == "f64") {
    for (const auto& [name, t] : run(leaves))
      if (in_part(name, part)) expect_values(t, nn_fixture(c, dt, name), f64_tol(), name);
    return;
  }
  int64_t k = leaves[0].dim() > 1 ? leaves[0].numel() / leaves[0].size(-1) : 1;
  for (size_t i = 2; i < leaves.size(); ++i)
    for (int64_t d : leaves[i].shape()) k = std::max(k, d);
  const NamedTensors results = run(testing::detail::fresh(leaves, DType::Float32));
  const NamedTensors cond = condition_numbers(run, leaves);
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& [name, t] = results[i];
    if (!in_part(name, part)) continue;
    if (!t.defined()) {
      ADD_FAILURE() << name << ": no tensor (a missing gradient)";
      continue;
    }
    const ::testing::AssertionResult r = within_f32_bound(t, nn_fixture(c, dt, name), cond[i].second, {k, stages});
    if (!r) ADD_FAILURE() << name << ": " << r.message();
  }
}

// A two-input op with only one input needing a gradient (the other a
// constant: a frozen weight, a layer's input): `op(a, b)` with only input
// `which` (0: a, 1: b) requiring one; that input's gradient of sum(op(a, b))
// equals `want`. When it does not, the same op with both inputs requiring one
// says whether this input's gradient is right there (it then depends on
// whether the other is needed). `call` describes the call ("div(a, b)"),
// `explain` adds to a raised error's message (what the op saves, and when).
struct OneNeedsGrad {
  std::string call;
  const char* names[2];
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::vector<double> a_values, b_values;
  Shape a_shape, b_shape;
  std::function<std::string(const std::string& error)> explain = [](const std::string&) { return std::string(); };
};

// Asked directly for input i's gradient alone (its node's rule called with
// needs true for i only), which slots the rule fills: " (asked directly,
// with needs = [true, false] the rule of 'silu_mul' returns a gradient for b
// and none for a)". "" when the output's node is not one op over these
// inputs, or the rule fills input i's slot.
inline std::string rule_slots(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                              const std::vector<Tensor>& values, size_t i, const std::vector<std::string>& names) {
  std::vector<Tensor> in;
  for (size_t k = 0; k < values.size(); ++k) {
    Tensor t = clone(values[k].detach());
    if (k == i) t.requires_grad_();
    in.push_back(t);
  }
  Grads grads;
  std::shared_ptr<Node> node;
  NeedsGrad needs(values.size(), false);
  needs[i] = true;
  try {
    const Tensor out = f(in);
    node = out.grad_fn();
    if (!node || !node->backward || node->next.size() != values.size()) return "";
    for (size_t k = 0; k < values.size(); ++k)
      if ((node->next[k] != nullptr) != (k == i)) return "";  // the node's inputs are not these, in this order
    grads = node->backward(ones(out.shape(), out.dtype()), needs);
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error&) {
    return "";
  }
  if (grads.size() > i && grads[i].defined()) return "";
  std::string filled, flags;
  for (size_t k = 0; k < grads.size(); ++k)
    if (grads[k].defined()) filled += (filled.empty() ? "" : " and ") + names[k];
  for (size_t k = 0; k < needs.size(); ++k) flags += (k ? ", " : "") + std::string(needs[k] ? "true" : "false");
  return fmt::format(" (asked directly, with needs = [{}] the rule of '{}' returns {} and none for {})", flags,
                     node->name, filled.empty() ? "no gradient at all" : "a gradient for " + filled, names[i]);
}

inline void expect_one_needs_grad(const OneNeedsGrad& c, int which, const std::vector<double>& want) {
  const char* self = c.names[which];
  const char* other = c.names[1 - which];
  const std::string label = fmt::format("{}, only {} requiring a gradient ({} is a constant)", c.call, self, other);
  const Tensor wanted = tensor(want, which == 0 ? c.a_shape : c.b_shape, DType::Float64);
  const auto right_with_both = [&] {
    try {
      Tensor a = param(c.a_values, c.a_shape), b = param(c.b_values, c.b_shape);
      backward(sum(c.op(a, b)));
      const Tensor g = which == 0 ? a.grad() : b.grad();
      return g.defined() && static_cast<bool>(all_close(g, wanted, f64_tol()));
    } catch (const NotImplemented&) {
      throw;
    } catch (const Error&) {
      return false;
    }
  };
  const bool right = right_with_both();
  Tensor a = which == 0 ? param(c.a_values, c.a_shape) : tensor(c.a_values, c.a_shape, DType::Float64);
  Tensor b = which == 1 ? param(c.b_values, c.b_shape) : tensor(c.b_values, c.b_shape, DType::Float64);
  try {
    backward(sum(c.op(a, b)));
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& e) {
    const std::string msg = e.what();
    ADD_FAILURE() << label << ": backward raised an error"
                  << (right ? fmt::format(" (with {} requiring a gradient too it runs, and {}'s gradient is right)", other,
                                          self)
                            : "")
                  << ": " << msg << c.explain(msg);
    return;
  }
  const Tensor g = which == 0 ? a.grad() : b.grad();
  if (!g.defined()) {
    const std::string slots = rule_slots(
        [&](const std::vector<Tensor>& in) { return c.op(in[0], in[1]); },
        {tensor(c.a_values, c.a_shape, DType::Float64), tensor(c.b_values, c.b_shape, DType::Float64)},
        static_cast<size_t>(which), {c.names[0], c.names[1]});
    ADD_FAILURE() << label << ": " << self << " got no gradient"
                  << (right ? fmt::format(" (with {} requiring one too, {} gets the right one)", other, self) : "")
                  << slots;
    return;
  }
  expect_values(g, wanted, f64_tol(), label + ": grad " + self);
}

// Each input alone needing a gradient (the others constants: a frozen
// weight, a layer's input) gets the gradient it gets when every input needs
// one: f(inputs) with only input i requiring a gradient, d sum(f * w) / d
// input i against the same with all requiring one (whose values the parity
// checks compare with PyTorch). `names` name the inputs ("q", "k", "v").
inline void expect_each_input_alone(const std::string& call, const std::vector<std::string>& names,
                                    const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                    const std::vector<Tensor>& values) {
  const auto run = [&](int only) {  // -1: every input requires a gradient
    std::vector<Tensor> in;
    for (size_t i = 0; i < values.size(); ++i) {
      Tensor t = clone(values[i].detach());
      if (only < 0 || static_cast<size_t>(only) == i) t.requires_grad_();
      in.push_back(t);
    }
    const Tensor out = f(in);
    Generator gen(31);
    backward(out, randn(out.shape(), out.dtype(), &gen));  // d sum(out * w), w fixed
    std::vector<Tensor> grads;
    for (const Tensor& t : in) grads.push_back(t.grad());
    return grads;
  };
  std::vector<Tensor> all;
  try {
    all = run(-1);
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& e) {
    ADD_FAILURE() << call << ", every input requiring a gradient: raised an error: " << e.what();
    return;
  }
  // The inputs that alone get no gradient though all together each gets one: said in one line.
  std::vector<std::string> none_alone;
  for (size_t i = 0; i < values.size(); ++i) {
    try {
      const std::vector<Tensor> alone = run(static_cast<int>(i));
      if (!alone[i].defined() && all[i].defined()) none_alone.push_back(names[i]);
    } catch (const NotImplemented&) {
      throw;
    } catch (const Error&) {
    }
  }
  if (none_alone.size() > 1) {
    std::string listed;
    for (size_t k = 0; k < none_alone.size(); ++k)
      listed += (k == 0 ? "" : k + 1 == none_alone.size() ? " and " : ", ") + none_alone[k];
    std::string slots;
    for (size_t i = 0; i < values.size(); ++i) slots += rule_slots(f, values, i, names);
    ADD_FAILURE() << call << ": " << listed << " each get no gradient when they alone require one (the other inputs "
                  << "constants), and each gets one when every input requires one" << slots;
    return;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    std::string others;
    for (size_t j = 0; j < names.size(); ++j) {
      if (j != i) others += (others.empty() ? "" : " and ") + names[j];
    }
    const std::string label = fmt::format("{}, only {} requiring a gradient ({} constant)", call, names[i], others);
    std::vector<Tensor> alone;
    try {
      alone = run(static_cast<int>(i));
    } catch (const NotImplemented&) {
      throw;
    } catch (const Error& e) {
      ADD_FAILURE() << label << ": backward raised an error (with every input requiring one it runs): " << e.what();
      continue;
    }
    if (!alone[i].defined()) {
      ADD_FAILURE() << label << ": " << names[i] << " got no gradient (with every input requiring one it gets "
                    << (all[i].defined() ? "one" : "none either") << ")" << rule_slots(f, values, i, names);
      continue;
    }
    if (!all[i].defined()) continue;  // the parity checks say this one
    expect_values(alone[i], all[i], f64_tol(),
                  label + ": grad " + names[i] + " (expected: its gradient when every input requires one)");
  }
}

}  // namespace ropegrad::course
