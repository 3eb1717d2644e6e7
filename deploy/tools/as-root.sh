# Sourced by the setup scripts that install from the system's packages: `as_root MESSAGE`
# sets `sudo` to "" (already root) or to "sudo" (when it asks no password), or else prints
# MESSAGE (what to run instead) and exits.
as_root() {
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo"
    else
      echo "$1" >&2
      exit 1
    fi
  fi
}
