// GET /dashboard (the live view's page) and GET /events (its server-sent-event stream).
#include <fmt/format.h>

#include "server/live/dashboard_page.h"
#include "server/live/live_hub.h"
#include "server/server_routes.h"

namespace baton::server {

void handle_dashboard(const ServeContext&, const HttpRequest&, HttpResponse& res) {
  res.content_type = "text/html; charset=utf-8";
  res.body = std::string(dashboard_page());
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Content-Type-Options", "nosniff");
  // The page is self-contained: its own inline script and style, and the event stream.
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                 "connect-src 'self'; img-src data:");
}

void handle_events(const ServeContext& c, const HttpRequest&, HttpResponse& res) {
  if (!c.live) {
    throw ApiError(404, "this server has no engine loop to watch", "", "", "not_found");
  }
  auto viewer = c.live->open_viewer();
  if (!viewer) {
    ApiError e(503,
               fmt::format("{} live viewers are already watching; close one (or read /status "
                           "instead)",
                           LiveHub::kMaxViewers),
               "", "", "too_many_viewers");
    e.retry_after_s = 5;
    throw e;
  }
  res.async = std::move(viewer);
}

}  // namespace baton::server
