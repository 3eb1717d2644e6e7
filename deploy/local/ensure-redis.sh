#!/usr/bin/env bash
# Make sure redis-server is installed; install it from the system's packages if we can.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi
install_cmd="apt-get install -y --no-install-recommends redis-server"
if command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "redis-server is missing: installing it with apt-get"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive $install_cmd >/dev/null
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "redis-server is missing: installing it with sudo apt-get"
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive $install_cmd >/dev/null
  else
    echo "redis-server is missing and cannot be installed without root: run 'sudo $install_cmd'" >&2
    exit 1
  fi
elif command -v brew >/dev/null 2>&1; then
  echo "redis-server is missing: installing it with brew"
  brew install redis >/dev/null
else
  echo "redis-server is missing: install Redis 6 or later (package 'redis-server' or 'redis') so that redis-server is on PATH" >&2
  exit 1
fi
command -v redis-server >/dev/null 2>&1 || { echo "redis-server is still not on PATH after installing" >&2; exit 1; }
