#include "bench/svg_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/stats.h"

namespace baton::bench {
namespace {

constexpr double kLeft = 170, kRight = 20, kTop = 56, kLane = 24, kLaneGap = 8;

struct Scale {
  double x0, width, span_ms;
  double x(double ms) const { return x0 + std::clamp(ms / span_ms, 0.0, 1.0) * width; }
};

double end_of(const RequestRecord& q) {
  double e = std::max(q.end_ms, q.send_ms);
  if (!q.token_ms.empty()) e = std::max(e, q.token_ms.back());
  return e;
}

double nice_step_s(double span_s) {
  for (double base = 0.001;; base *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (span_s / (base * m) <= 12) return base * m;
    }
  }
}

std::string rect(const char* cls, double x0, double x1, double y, double h, const char* fill,
                 const std::string& tip) {
  return fmt::format(
      "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
      "fill=\"{}\"><title>{}</title></rect>\n",
      cls, x0, y, std::max(0.5, x1 - x0), h, fill, xml_escape(tip));
}

std::string lane(const RequestRecord& q, const Scale& sc, double y, const SvgOptions& opt) {
  std::string out = fmt::format("<g class=\"lane\" data-label=\"{}\">\n", xml_escape(q.label));
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"end\"{}>{}</text>\n",
      kLeft - 8, y + kLane * 0.68, q.ok() ? "" : " fill=\"#c00000\"",
      xml_escape(q.label + (q.ok() ? "" : " (error)")));
  if (q.send_ms < 0) return out + "</g>\n";
  double first = q.first_token_ms >= 0 ? q.first_token_ms : end_of(q);
  double prefill_from = q.send_ms;
  if (!q.queue_wait_is_fallback() && q.first_byte_ms >= 0 && q.first_byte_ms < first) {
    prefill_from = q.first_byte_ms;
    out += rect("queued", sc.x(q.send_ms), sc.x(prefill_from), y, kLane, "#b8b8b8",
                fmt::format("{}: queued {:.0f} ms", q.label, prefill_from - q.send_ms));
  }
  out += rect(
      "prefill", sc.x(prefill_from), sc.x(first), y, kLane, "#f2a541",
      fmt::format("{}: prefilling until first token, TTFT {:.0f} ms", q.label, first - q.send_ms));
  if (q.first_token_ms >= 0) {
    out += rect("decode", sc.x(q.first_token_ms), sc.x(end_of(q)), y + 4, kLane - 8, "#d6e6f5",
                fmt::format("{}: {} tokens", q.label, q.token_ms.size()));
  }
  double med = median(token_gaps(q.token_ms));
  for (std::size_t i = 1; i < q.token_ms.size(); ++i) {
    double g = q.token_ms[i] - q.token_ms[i - 1];
    if (med > 0 && g > opt.red_gap_factor * med) {
      out += rect("gap", sc.x(q.token_ms[i - 1]), sc.x(q.token_ms[i]), y + 2, kLane - 4, "#e0301e",
                  fmt::format("{}: {:.0f} ms gap ({:.1f}x median)", q.label, g, g / med));
    }
  }
  for (double t : q.token_ms) {
    out += fmt::format(
        "<line class=\"tick\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" "
        "y2=\"{2:.1f}\" stroke=\"#1f5fa8\" stroke-width=\"0.8\"/>\n",
        sc.x(t), y + 3, y + kLane - 3);
  }
  return out + "</g>\n";
}

std::string axis(const Scale& sc, double y) {
  std::string out = fmt::format(
      "<g class=\"axis\">\n<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" "
      "stroke=\"#333\"/>\n",
      sc.x0, sc.x0 + sc.width, y, y);
  double step = nice_step_s(sc.span_ms / 1000);
  for (double s = 0; s * 1000 <= sc.span_ms + 1e-9; s += step) {
    double x = sc.x(s * 1000);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
        "stroke=\"#333\"/>\n<text x=\"{0:.1f}\" y=\"{3:.1f}\" font-size=\"11\" "
        "text-anchor=\"middle\">{4}</text>\n",
        x, y, y + 5, y + 18, fmt::format("{:g}", std::round(s / step) * step));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">seconds</text>\n</g>\n",
                     sc.x0 + sc.width - 50, y + 32);
  return out;
}

std::string legend(double y, const SvgOptions& opt) {
  struct Item {
    const char* fill;
    std::string text;
  };
  std::vector<Item> items = {
      {"#b8b8b8", "queued (send to first response byte)"},
      {"#f2a541", "prefilling (to first token)"},
      {"#1f5fa8", "token"},
      {"#e0301e", fmt::format("gap > {:g}x the request's median", opt.red_gap_factor)}};
  std::string out = "<g class=\"legend\">\n";
  double x = kLeft;
  for (const auto& it : items) {
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"12\" fill=\"{}\"/>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\">{}</text>\n",
        x, y, it.fill, x + 19, y + 11, xml_escape(it.text));
    x += 40 + 6.5 * static_cast<double>(it.text.size());
  }
  return out + "</g>\n";
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters are not allowed in XML 1.0 documents.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
}

std::string render_svg(const ScenarioResult& r, const SvgOptions& opt) {
  double span = 1;
  for (const auto& q : r.requests) span = std::max(span, end_of(q));
  Scale sc{kLeft, opt.width - kLeft - kRight, span};
  double lanes_h = static_cast<double>(r.requests.size()) * (kLane + kLaneGap);
  double axis_y = kTop + lanes_h + 4;
  double height = axis_y + 80;
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      opt.width, height);
  out += fmt::format(
      "<text class=\"title\" x=\"{:.0f}\" y=\"24\" font-size=\"16\" "
      "font-weight=\"bold\">{}</text>\n",
      kLeft, xml_escape("baton bench serve: " + r.scenario + " on " + r.server_url));
  out +=
      fmt::format("<text x=\"{:.0f}\" y=\"42\" font-size=\"12\" fill=\"#555\">{}</text>\n", kLeft,
                  xml_escape(fmt::format("model {}, {} requests, {:.1f} s", r.model,
                                         r.requests.size(), r.wall_ms / 1000)));
  for (std::size_t i = 0; i < r.requests.size(); ++i) {
    out += lane(r.requests[i], sc, kTop + static_cast<double>(i) * (kLane + kLaneGap), opt);
  }
  out += axis(sc, axis_y);
  out += legend(axis_y + 44, opt);
  return out + "</svg>\n";
}

}  // namespace baton::bench
