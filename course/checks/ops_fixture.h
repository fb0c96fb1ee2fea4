// PyTorch's values of single ops, for the course's autograd checks: the cases
// of tests/fixtures/ops.txt (written by tests/fixtures/make_fixtures.py with
// torch; tests/test_parity.cpp compares the whole library against them).
//
// A case "<case>/<f64|f32>/" holds its inputs, out<k> (the k-th output),
// w<k> (a fixed random weight of out<k>) and grad.<input> = d/d<input> of
// sum_k sum(out<k> * w<k>). expect_op_parity runs an op on the inputs,
// backpropagates w<k> into out<k> (directly: no sum or mul, whose own rules
// are other exercises) and compares every output and gradient with torch's.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "course/checks/check_util.h"

namespace ropegrad::course {

using OpInputs = std::map<std::string, Tensor>;
using OpFn = std::function<std::vector<Tensor>(const OpInputs&)>;

namespace detail {

// Every record of ops.txt, by name, read once. Throws a ropegrad::Error when the file is missing.
inline const std::map<std::string, Tensor>& ops_records() {
  static const std::map<std::string, Tensor> records = [] {
    const std::string path = std::string(ROPEGRAD_FIXTURES) + "/ops.txt";
    std::ifstream in(path);
    RG_CHECK(static_cast<bool>(in), "ops fixture", "cannot open {}", path);
    std::map<std::string, Tensor> out;
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#' || line.rfind("ropegrad-fixtures", 0) == 0 || line.rfind("end ", 0) == 0)
        continue;
      std::istringstream fields(line);
      std::string name, dtype;
      int64_t ndim = 0;
      fields >> name >> dtype >> ndim;
      Shape shape(static_cast<size_t>(ndim));
      for (auto& d : shape) fields >> d;
      std::string token;
      std::vector<double> floats;
      std::vector<int64_t> ints;
      while (fields >> token) {
        if (dtype == "float64" || dtype == "float32") floats.push_back(std::strtod(token.c_str(), nullptr));
        else ints.push_back(std::strtoll(token.c_str(), nullptr, 10));
      }
      const Shape flat{numel_of(shape)};
      Tensor t;
      if (dtype == "float64") t = tensor(floats, flat, DType::Float64);
      else if (dtype == "float32") t = tensor(floats, flat, DType::Float32);
      else if (dtype == "int64") t = tensor_i64(ints, flat);
      else t = tensor_bool(std::vector<bool>(ints.begin(), ints.end()), flat);
      out.emplace(name, reshape(t, shape));
    }
    return out;
  }();
  return records;
}

// The records of one case and dtype ("exp", "f64"), by tensor name.
inline std::map<std::string, Tensor> ops_case(const std::string& case_name, const std::string& dt) {
  const std::string prefix = case_name + "/" + dt + "/";
  std::map<std::string, Tensor> rec;
  const auto& all = ops_records();
  for (auto it = all.lower_bound(prefix); it != all.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    rec.emplace(it->first.substr(prefix.size()), it->second);
  RG_CHECK(!rec.empty(), "ops fixture", "no case {} in ops.txt", prefix);
  return rec;
}

inline bool is_input(const std::string& name) {
  const bool numbered = name.find_first_not_of("0123456789", 1) == std::string::npos;
  if (name.rfind("grad.", 0) == 0) return false;
  if (name.size() > 3 && name.rfind("out", 0) == 0 && name.find_first_not_of("0123456789", 3) == std::string::npos)
    return false;
  if (name.size() > 1 && name[0] == 'w' && numbered) return false;
  return true;
}

// leaves = the case's float inputs (in `names` order), then w0, w1, ...:
// "out<k>" for each output and "grad.<name>" for each float input.
// Without `with_backward` only the outputs: a forward check never runs the backward.
// `only` >= 0: only that input requires a gradient (the others are constants).
inline NamedTensors run_op(const OpFn& fn, const OpInputs& base, const std::vector<std::string>& names,
                           const std::vector<Tensor>& leaves, bool with_backward = true, int only = -1) {
  OpInputs in = base;
  for (size_t i = 0; i < names.size(); ++i) {
    Tensor leaf = leaves[i];
    in[names[i]] = only < 0 || static_cast<size_t>(only) == i ? leaf.requires_grad_() : leaf;
  }
  const std::vector<Tensor> outs = fn(in);
  NamedTensors r;
  for (size_t k = 0; k < outs.size(); ++k) {
    r.emplace_back(fmt::format("out{}", k), outs[k].detach());
    // (A 0-d weight may come back 1-D from condition_numbers: same values.)
    if (with_backward && outs[k].requires_grad())
      backward(outs[k], reshape(leaves[names.size() + k], outs[k].shape()));
  }
  if (!with_backward) return r;
  for (const std::string& name : names) {
    const Tensor g = in.at(name).grad();
    r.emplace_back("grad." + name, g.defined() ? g : zeros_like(in.at(name)));
  }
  return r;
}

}  // namespace detail

// Every output and every input's gradient of fn on case `case_name` against
// PyTorch's, in float64 to f64_tol(). In float32 (dt "f32") each within the
// float32 error bound `bound` (see tests/support/test_util.h): the caller's
// comment says why its K and stages bound every rounded step.
// `part`: only the outputs (the forward alone runs), only the gradients, or all.
inline void expect_op_parity(const std::string& case_name, const std::string& dt, const OpFn& fn,
                             F32Bound bound = {}, Part part = Part::All) {
  const std::map<std::string, Tensor> rec = detail::ops_case(case_name, dt);
  OpInputs base;
  std::vector<std::string> names;
  std::vector<Tensor> leaves;
  for (const auto& [name, t] : rec) {
    if (!detail::is_input(name)) continue;
    base[name] = t;
    if (t.is_floating_point()) names.push_back(name), leaves.push_back(t);
  }
  for (size_t k = 0; rec.count(fmt::format("w{}", k)); ++k) leaves.push_back(rec.at(fmt::format("w{}", k)));
  const auto fresh = [](const std::vector<Tensor>& ls) {
    std::vector<Tensor> out;
    for (const Tensor& t : ls) out.push_back(clone(t).detach());
    return out;
  };
  NamedTensors got;
  try {
    got = detail::run_op(fn, base, names, fresh(leaves), part != Part::Forward);
  } catch (const NotImplemented&) {
    throw;  // a stub: course-check says "not written yet" or "blocked by"
  } catch (const Error& e) {
    // e.g. a gradient of the wrong shape, or a product of mismatched shapes in a backward rule
    ADD_FAILURE() << case_name << "/" << dt << ": raised an error: " << e.what();
    return;
  }
  // A wrong gradient that is right when its input alone requires one: the
  // rule goes wrong only when the other inputs require theirs too.
  const auto alone_right = [&](const std::string& name, const Tensor& t, const Tensor& want) -> std::string {
    if (names.size() < 2 || name.rfind("grad.", 0) != 0 || all_close(t, want, f64_tol())) return "";
    const size_t i = static_cast<size_t>(std::find(names.begin(), names.end(), name.substr(5)) - names.begin());
    if (i >= names.size()) return "";
    try {
      const NamedTensors alone = detail::run_op(fn, base, names, fresh(leaves), true, static_cast<int>(i));
      for (const auto& [n, g] : alone) {
        if (n == name && g.defined() && g.shape() == want.shape() && all_close(g, want, f64_tol())) {
          return fmt::format(" (right when {} alone requires a gradient, the other inputs constants: wrong only "
                             "when they require one too)", name.substr(5));
        }
      }
    } catch (const NotImplemented&) {
      throw;
    } catch (const Error&) {
    }
    return "";
  };
  // " (wrong exactly where x < 0)": the wrong elements are those where one
  // input of the result's shape is negative (or 0, or positive), and no others.
  const auto where_by_sign = [&](const Tensor& t, const Tensor& want) -> std::string {
    if (t.shape() != want.shape() || all_close(t, want, f64_tol())) return "";
    const std::vector<double> got = t.to_vector<double>(), w = want.to_vector<double>();
    std::vector<bool> wrong(got.size());
    for (size_t i = 0; i < got.size(); ++i) wrong[i] = !(std::abs(got[i] - w[i]) <= 1e-12 + 1e-10 * std::abs(w[i]));
    for (const std::string& n : names) {
      const Tensor& in = base.at(n);
      if (in.shape() != t.shape()) continue;
      const std::vector<double> x = in.to_vector<double>();
      const std::pair<const char*, bool (*)(double)> signs[] = {{"< 0", [](double v) { return v < 0; }},
                                                                {"= 0", [](double v) { return v == 0; }},
                                                                {"> 0", [](double v) { return v > 0; }}};
      for (const auto& [text, holds] : signs) {
        bool exact = true, any = false;
        for (size_t i = 0; i < x.size() && exact; ++i) exact = wrong[i] == holds(x[i]), any = any || wrong[i];
        if (exact && any) return fmt::format(" (wrong exactly where {} {})", n, text);
      }
    }
    return "";
  };
  NamedTensors cond;
  if (dt == "f32") {
    cond = condition_numbers(
        [&](const std::vector<Tensor>& ls) {
          OpInputs b64 = base;  // int and bool inputs stay as they are
          return detail::run_op(fn, b64, names, ls, part != Part::Forward);
        },
        leaves);
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const auto& [name, t] = got[i];
    if (!in_part(name, part)) continue;
    const std::string label = case_name + "/" + dt + " " + name;
    if (!rec.count(name)) continue;
    const Tensor& want = rec.at(name);
    if (!t.defined()) {
      ADD_FAILURE() << label << ": no tensor (an undefined result or a missing gradient)";
      continue;
    }
    if (t.shape() != want.shape()) {
      ADD_FAILURE() << label << ": shape " << shape_str(t.shape()) << ", torch's is " << shape_str(want.shape());
      continue;
    }
    if (dt == "f64") {
      expect_values(t, want, f64_tol(), label + alone_right(name, t, want) + where_by_sign(t, want));
    } else if (const auto r = within_f32_bound(t, want, cond[i].second, bound); !r) {
      ADD_FAILURE() << label << ": " << r.message();
    }
  }
}

}  // namespace ropegrad::course
