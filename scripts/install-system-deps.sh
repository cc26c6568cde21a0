#!/usr/bin/env bash
# Install the Debian packages the tests use, if any is missing: PostgreSQL and Redis (servers the
# test setup starts on free local ports), Chromium (the browser tests), Graphviz (`dot`, for the
# topology drawing), Node.js (the widget's JS tests). Needs root or sudo; does nothing when all
# are present.
set -euo pipefail

need=()
command -v pg_ctl >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || need+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v dot >/dev/null 2>&1 || need+=(graphviz)
command -v node >/dev/null 2>&1 || need+=(nodejs npm)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "installing system packages: ${need[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
