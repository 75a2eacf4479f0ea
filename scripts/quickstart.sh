#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a running baton: installs the packages, builds,
# and serves $MODEL, or the small real model shipped in share/models (stories260K).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Only the server binary: the test suite (scripts/test.sh builds it) is not needed to serve.
bash scripts/build.sh baton
# Without $MODEL: stories260K, a real (tiny) model shipped in share/models, which tells short
# children's stories. Set MODEL=path/to/model.gguf to serve your own.
MODEL=${MODEL:-share/models/stories260K.gguf}
exec ./build/baton serve -m "$MODEL" "$@"
