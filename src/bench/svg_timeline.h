#pragma once
// A self-contained SVG timeline of one scenario run, for a person to open in a browser: one
// lane per request (queued, prefilling, a tick per token, long gaps in red), a time axis in
// seconds, a legend and a title naming the scenario and the server.
#include <string>

#include "bench/scenarios.h"

namespace baton::bench {

struct SvgOptions {
  double width = 1200;
  double red_gap_factor = 3.0;  // a gap over this × the request's median gap is drawn red
};

std::string render_svg(const ScenarioResult& r, const SvgOptions& opt = {});

// Escapes text for XML content and attribute values.
std::string xml_escape(const std::string& s);

}  // namespace baton::bench
