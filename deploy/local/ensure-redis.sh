#!/usr/bin/env bash
# Make sure redis-server is installed; install it from the system's packages if we can.
# Silent when it is there; one line per step when it installs; one clear line when it cannot.
set -euo pipefail
. "$(dirname "$0")/../tools/as-root.sh"
if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi
install_cmd="apt-get install -y --no-install-recommends redis-server"
installed() {
  command -v redis-server >/dev/null 2>&1 || { echo "setup: redis-server is still not on PATH after installing it" >&2; exit 1; }
  echo "setup: installed $(redis-server --version | cut -d' ' -f1-3)"
}
if command -v apt-get >/dev/null 2>&1; then
  as_root "setup: redis-server is missing and installing it needs root: run 'sudo $install_cmd', then make again"
  echo "setup: installing redis-server with ${sudo:+sudo }apt-get (the package lists first; this can take a minute) ..."
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive $install_cmd -qq >/dev/null
  installed
elif command -v brew >/dev/null 2>&1; then
  echo "setup: installing redis-server with brew ..."
  brew install --quiet redis >/dev/null
  installed
else
  echo "setup: redis-server is missing: install Redis 6 or later (package 'redis-server' or 'redis') so that redis-server is on PATH, then make again" >&2
  exit 1
fi
