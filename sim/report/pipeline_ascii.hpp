// The pipeline diagram as text for a terminal: a row per stage, boxes labelled by pass letter (F, B,
// W; O for the optimizer; lower case for odd model chunks) and microbatch number, '~' where the
// stage communicates and computes nothing, '.' where it idles, a time axis in ms and a legend.
// Every line fits `width` columns (at least 40).
#pragma once

#include <string>

#include "sim/report/pipeline_view.hpp"

namespace stepsim::report {

std::string render_pipeline_ascii(const PipelineView& view, int width = 120);

}  // namespace stepsim::report
