#!/usr/bin/env bash
# Make sure a Chromium is there for the browser tests (tests/web, Playwright driving the
# system's browser): install it from the system's packages if we can. The tests say they are
# skipped without one, so nothing here fails the setup: silent when it is there, one line
# per step when it installs, one line saying what is skipped when it cannot.
set -uo pipefail
. "$(dirname "$0")/../tools/as-root.sh"
if [ -n "${WARGAME_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1; then
  exit 0
fi
skipped="the browser tests (tests/web) will be skipped"
install_cmd="apt-get install -y --no-install-recommends chromium"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: no Chromium on PATH and no apt-get to install it: $skipped (or set WARGAME_CHROMIUM to a Chromium)"
  exit 0
fi
(as_root "setup: no Chromium, and installing it needs root: $skipped (or run 'sudo $install_cmd')") || exit 0
as_root ""
echo "setup: installing Chromium for the browser tests with ${sudo:+sudo }apt-get (this can take a few minutes) ..."
if $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive $install_cmd -qq >/dev/null \
    && command -v chromium >/dev/null 2>&1; then
  echo "setup: installed $(chromium --version 2>/dev/null | head -n 1)"
else
  echo "setup: Chromium could not be installed: $skipped"
fi
