// The fast-forms switch and its counters (tensor/fast_forms.h).
#include "tensor/fast_forms.h"

#include <cstdlib>
#include <string>

#include "tensor/error.h"
#include "fast_forms_present.h"  // ROPEGRAD_HAS_<Name>, generated from tensor/fast_forms.def

namespace ropegrad {

namespace {
std::atomic<int> g_forced{-1};  // -1: not set by set_fast_forms
std::array<std::atomic<int64_t>, static_cast<size_t>(FastForm::Count)> g_runs{};

bool from_env() {
  const char* env = std::getenv("ROPEGRAD_FAST_FORMS");
  const std::string value = env == nullptr ? "" : env;
  if (value.empty() || value == "1" || value == "on") return true;
  if (value == "0" || value == "off") return false;
  RG_CHECK(false, "fast forms", "ROPEGRAD_FAST_FORMS must be 1, on, 0 or off, got '{}'", value);
  return true;
}
}  // namespace

bool fast_forms_enabled() {
  const int forced = g_forced.load(std::memory_order_relaxed);
  if (forced >= 0) return forced == 1;
  static const bool chosen = from_env();
  return chosen;
}

void set_fast_forms(bool on) { g_forced.store(on ? 1 : 0); }

void note_fast_form(FastForm form) {
  g_runs[static_cast<size_t>(form)].fetch_add(1, std::memory_order_relaxed);
}

int64_t fast_form_runs(FastForm form) { return g_runs[static_cast<size_t>(form)].load(); }

const char* fast_form_name(FastForm form) {
  switch (form) {
#define FAST_FORM(Name, name, exercises, files, what) \
  case FastForm::Name:                                \
    return name;
#include "tensor/fast_forms.def"
#undef FAST_FORM
    case FastForm::Count: break;
  }
  return "?";
}

bool fast_form_present(FastForm form) {
  switch (form) {
#define FAST_FORM(Name, name, exercises, files, what) \
  case FastForm::Name:                                \
    return ROPEGRAD_HAS_##Name != 0;
#include "tensor/fast_forms.def"
#undef FAST_FORM
    case FastForm::Count: break;
  }
  return false;
}

}  // namespace ropegrad
