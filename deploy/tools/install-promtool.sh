#!/usr/bin/env bash
# promtool for `make lint` (deploy/monitoring's rules): taken out of Debian's `prometheus`
# package into TOOLS/bin, without installing the package (no Prometheus service starts).
# A promtool already on PATH is used instead. One line when it installs; one clear line
# when it cannot.
#   deploy/tools/install-promtool.sh .venv/tools
set -euo pipefail
. "$(dirname "$0")/as-root.sh"
mkdir -p "$1/bin"
tools="$(cd "$1" && pwd)"
target="$tools/bin/promtool"
if command -v promtool >/dev/null 2>&1; then
  install -m 0755 "$(command -v promtool)" "$target"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
  echo "lint: promtool is missing: install Prometheus's promtool (Debian/Ubuntu: package 'prometheus'; macOS: brew install prometheus) so that it is on PATH, then make lint again" >&2
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
# The package lists may be missing on a fresh machine: read them first then (needs root).
if ! apt-get download prometheus >/dev/null 2>&1; then
  as_root "lint: promtool comes from Debian's package lists, which need reading first: run 'sudo apt-get update', then make lint again"
  echo "lint: reading the package lists for promtool (apt-get update) ..."
  $sudo apt-get update -qq
  apt-get download prometheus >/dev/null 2>&1 || { echo "lint: apt-get could not download the 'prometheus' package (for promtool)" >&2; exit 1; }
fi
dpkg-deb --fsys-tarfile prometheus_*.deb | tar -x ./usr/bin/promtool
install -m 0755 usr/bin/promtool "$target"
echo "lint: installed $("$target" --version 2>&1 | head -1) into $tools/bin"
