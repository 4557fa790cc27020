#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what a clean machine lacks (the test
# desktop of STACK.md), then formatting, lints and every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for cmd in Xvfb xdotool openbox xterm gtk3-widget-factory import scrot xrandr dbus-run-session; do
  command -v "$cmd" >/dev/null 2>&1 || need+=("$cmd")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing the test desktop (missing: ${need[*]})"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends \
    xvfb xdotool dbus-x11 at-spi2-core gtk-3-examples python3-pyatspi gir1.2-atspi-2.0 \
    openbox xterm imagemagick scrot x11-xserver-utils wmctrl >/dev/null
fi

cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test --workspace
