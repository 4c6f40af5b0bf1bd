// One self-contained HTML page of a scenario's results, for a person to open in a browser with no
// network: the verdict's sentences, the comparison table, a stacked bar per plan of where its step
// went (compute and each loss of losses_of()), memory at the peak by kind against capacity, and
// per plan its pipeline timeline (the SVG of pipeline_svg.hpp, zoomable) and memory over the step
// per rank. Plain SVG and CSS, and a few lines of script for the zoom; every plotted number is
// also in a data- attribute (data-plan, data-part, data-seconds, data-gib), so a test can hold
// the picture to the JSON.
#pragma once

#include <string>
#include <vector>

#include "sim/plan/step_result.hpp"

namespace stepsim::report {

/// `title`: the scenario's name. Results with detail (tasks, ranks) get their timeline and memory
/// plots; the others only their bars.
std::string render_html_report(const std::string& title, const std::vector<plan::StepResult>& results);

/// A sweep's page: tokens/s against peak memory per GPU for every plan (hollow where it does not
/// fit; circles carry data-plan, data-gib, data-tokens and data-pareto), the Pareto front of the
/// plans that fit joined by a line, and the table of the 20 best that fit.
std::string render_sweep_html_report(const std::string& title, const std::vector<plan::StepResult>& results);

}  // namespace stepsim::report
