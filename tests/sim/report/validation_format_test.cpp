// The validation report's memory section: a published run fit on its machine, so a plan stepsim
// says does not fit is listed with the reason.
#include <doctest/doctest.h>

#include <sstream>

#include "sim/report/validation.hpp"

using namespace stepsim::report;

namespace {

ValidationRow row(std::string name, bool fits, std::string note = "") {
  ValidationRow r;
  r.name = std::move(name);
  r.source = "src";
  r.metric = "step_time_s";
  r.measured = r.predicted = 1.0;
  r.tolerance = 0.15;
  r.fits = fits;
  r.memory_note = std::move(note);
  return r;
}

}  // namespace

TEST_CASE("the plans that ran but do not fit by the memory model are counted and named") {
  const std::vector<ValidationRow> rows{row("a", true), row("b", false, "needs 6.35 GiB more"), row("c", true)};
  const std::string text = format_validation(rows);
  CHECK(text.find("memory: 2 of 3 measured plans fit by stepsim's memory model") != std::string::npos);
  CHECK(text.find("needs 6.35 GiB more") != std::string::npos);
  std::ostringstream json;
  write_validation_json(rows, json);
  CHECK(json.str().find("\"name\":\"b\"") < json.str().find("\"fits\":false"));
  CHECK(json.str().find("\"fits\":false") != std::string::npos);
  // All fitting: the count alone, no table.
  const std::string all = format_validation({row("a", true)});
  CHECK(all.find("memory: 1 of 1 measured plans fit") != std::string::npos);
  CHECK(all.find("does not fit here") == std::string::npos);
}
