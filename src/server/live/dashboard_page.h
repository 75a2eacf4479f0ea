#pragma once
// The live view's page (GET /dashboard): src/server/live/dashboard.html, compiled into the
// binary at build time (CMakeLists.txt), so the server ships it with nothing to install and the
// browser fetches nothing else.
#include <string_view>

namespace baton::server {

std::string_view dashboard_page();

}  // namespace baton::server
