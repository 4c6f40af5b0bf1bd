// The pipeline diagram as a standalone SVG 1.1 document: a row per stage, F / B / W / optimizer
// boxes per microbatch in distinct colours (Tableau 10, distinguishable with common colour-vision
// deficiencies; odd model chunks in the lighter shade of the same hue) with microbatch numbers,
// a communication lane under each row, idle time as the grey row background, a time axis in ms, a
// legend, and the measured bubble next to the textbook formula in the caption. Each box has a
// <title> tooltip with its exact times. Text is XML-escaped; no external fonts or images.
#pragma once

#include <string>

#include "sim/report/pipeline_view.hpp"

namespace stepsim::report {

/// `text` with &, <, >, " and ' replaced by XML entities.
std::string xml_escape(const std::string& text);

std::string render_pipeline_svg(const PipelineView& view);

}  // namespace stepsim::report
