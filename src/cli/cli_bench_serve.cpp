#include "cli/commands.h"

namespace baton::cli {

// Not built yet: registered so the command tree is complete.
void register_bench_serve(CLI::App& app) { (void)app; }

}  // namespace baton::cli
