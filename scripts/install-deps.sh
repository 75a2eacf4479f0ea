#!/usr/bin/env bash
# Installs the Debian 12 packages baton needs to build and test. Run as root or with sudo.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
PKGS=(build-essential cmake ninja-build pkg-config clang curl ccache
      libcpp-httplib-dev nlohmann-json3-dev libfmt-dev libcli11-dev libxxhash-dev libzstd-dev
      libpcre2-dev libgtest-dev libgmock-dev libboost1.81-dev prometheus
      python3-jinja2 libpython3.11-dev libcurl4-openssl-dev libssl-dev haproxy
      chromium)
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# Node.js and npm run the real-client tests. A machine may already have a Node.js build that
# bundles npm (and conflicts with Debian's npm package), so look for the commands, not packages.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
# The Node suites' npm packages, here and not in the test run, which must not need the network.
bash "$(dirname "$0")/install-node-deps.sh"
