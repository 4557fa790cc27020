#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what a clean machine lacks (the test
# desktop: Xvfb, a window manager, GTK and Qt applications, the AT-SPI bus), then formatting, lints and every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for cmd in Xvfb xdotool xwininfo openbox xterm gtk3-widget-factory import scrot xrandr dbus-run-session openssl; do
  command -v "$cmd" >/dev/null 2>&1 || need+=("$cmd")
done
# The Qt5 widget examples the X11 Qt tests (crates/desktop-x11/tests/x11_qt.rs) start.
[ -x /usr/lib/x86_64-linux-gnu/qt5/examples/widgets/widgets/calculator/calculator ] ||
  need+=(qtbase5-examples)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing the test desktop (missing: ${need[*]})"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends \
    xvfb xdotool dbus-x11 at-spi2-core gtk-3-examples python3-pyatspi gir1.2-atspi-2.0 \
    openbox xterm imagemagick scrot x11-xserver-utils x11-utils wmctrl qtbase5-examples openssl >/dev/null
fi

# The headless sway desk of the Wayland tests (crates/desktop-wlroots/tests/): sway runs
# as an unprivileged user the tests create, with foot, wtype (the stop-key press and the
# typing benchmark's peer), grim (the capture benchmark's peer), wl-clipboard (another
# client's copy and paste) and Xwayland.
wl=()
for cmd in sway swaymsg swaybg foot grim wtype wl-copy wl-paste Xwayland setpriv; do
  command -v "$cmd" >/dev/null 2>&1 || wl+=("$cmd")
done
if [ ${#wl[@]} -gt 0 ]; then
  echo "installing the Wayland test desk (missing: ${wl[*]})"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends \
    sway swaybg foot grim wtype wl-clipboard xwayland util-linux >/dev/null
fi

# The headless GNOME desk (cc_test_kit::gnome, the GNOME driver's tests): gnome-shell on a
# virtual monitor with PipeWire for the screen cast. The driver loads PipeWire's client
# library (libpipewire-0.3-0, which pipewire brings) at run time: building needs neither
# its headers nor libclang.
gn=()
for cmd in gnome-shell mutter pipewire wireplumber; do
  command -v "$cmd" >/dev/null 2>&1 || gn+=("$cmd")
done
if [ ${#gn[@]} -gt 0 ]; then
  echo "installing the GNOME test desk (missing: ${gn[*]})"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends \
    mutter gnome-shell pipewire wireplumber libpipewire-0.3-0 xdg-desktop-portal \
    xdg-desktop-portal-gnome >/dev/null
fi

# The operator console's browser test (tests/http_browser.rs): Debian's chromium and
# playwright-core (no browser download: playwright-core drives the system chromium).
pkgs=()
command -v chromium >/dev/null 2>&1 || pkgs+=(chromium)
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
if [ ${#pkgs[@]} -gt 0 ]; then
  echo "installing the browser test's prerequisites: ${pkgs[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${pkgs[@]}" >/dev/null
fi
browser_dir=crates/computer-control/tests/browser
if [ ! -d "$browser_dir/node_modules/playwright-core" ]; then
  echo "installing playwright-core for the console's browser test"
  (cd "$browser_dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-save --no-audit --no-fund >/dev/null)
fi

# The MCP client tests (tests/mcp_sdk.rs): the official MCP Python SDK, pinned.
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '2.3.0')" 2>/dev/null; then
  echo "installing the MCP Python SDK for the MCP client tests"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get install -y -qq python3-pip >/dev/null
  fi
  # Debian's own python3 refuses pip outside a venv (PEP 668) unless told otherwise.
  python3 -m pip install --quiet 'mcp==2.3.0' ||
    python3 -m pip install --quiet --break-system-packages 'mcp==2.3.0'
fi

# The MCP conformance suite (tests/mcp_conformance.rs), with the Node 22 it needs.
conformance_dir=crates/computer-control/tests/mcp_conformance
if [ ! -x "$conformance_dir/node_modules/.bin/node" ] || [ ! -d "$conformance_dir/node_modules/@modelcontextprotocol/conformance" ]; then
  echo "installing the MCP conformance suite"
  (cd "$conformance_dir" && npm install --no-save --no-audit --no-fund >/dev/null)
fi

# The packaging tests (tests/packaging.rs, tests/registry.rs): maturin and zig (the
# portable x86-64 build), uv (uvx), twine (the PyPI dry run), Debian's aarch64 cross
# toolchain and qemu-user, and rustup's aarch64 standard library.
pkgs=()
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || pkgs+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null 2>&1 || pkgs+=(qemu-user)
command -v objdump >/dev/null 2>&1 || pkgs+=(binutils)
command -v file >/dev/null 2>&1 || pkgs+=(file)
command -v unzip >/dev/null 2>&1 || pkgs+=(unzip)
if [ ${#pkgs[@]} -gt 0 ]; then
  echo "installing the packaging tests' prerequisites: ${pkgs[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(not (m.version('maturin') == '1.16.0' and m.version('ziglang') == '0.17.1' and m.version('uv') == '0.13.9' and m.version('twine') == '6.2.0'))" 2>/dev/null; then
  echo "installing maturin, zig, uv and twine for the packaging tests"
  python3 -m pip install --quiet 'maturin==1.16.0' 'ziglang==0.17.1' 'uv==0.13.9' 'twine==6.2.0' ||
    python3 -m pip install --quiet --break-system-packages 'maturin==1.16.0' 'ziglang==0.17.1' 'uv==0.13.9' 'twine==6.2.0'
fi
rustup target list --installed | grep -qx aarch64-unknown-linux-gnu ||
  rustup target add aarch64-unknown-linux-gnu

# The Windows driver and server, cross-built with mingw-w64 and run under Wine 8 on a
# private Xvfb (docs/TESTING.md "Windows under Wine"): wine64 alone runs 64-bit
# programs (no i386 multiarch); fonts-wine draws title-bar glyphs; setxkbmap gives the
# desk's Xvfb a keymap where Ctrl+Alt+F12 (the emergency chord) is a key, not the X
# server's own screen switch.
pkgs=()
[ -x /usr/lib/wine/wine64 ] || pkgs+=(wine64 fonts-wine)
command -v setxkbmap >/dev/null 2>&1 || pkgs+=(x11-xkb-utils)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || pkgs+=(gcc-mingw-w64-x86-64)
if [ ${#pkgs[@]} -gt 0 ]; then
  echo "installing Wine and mingw-w64 for the Windows tests: ${pkgs[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi
rustup target list --installed | grep -qx x86_64-pc-windows-gnu ||
  rustup target add x86_64-pc-windows-gnu

# A clean machine gains nothing from incremental caches (a third of a clean build's disk).
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi

cargo fmt --all -- --check
# The crates still package for the crates registry (manifests, metadata, file lists,
# dependency resolution across the workspace's packages; scripts/package-crates.sh runs
# the full verifying dry run and the install check).
scripts/package-crates.sh --no-verify
# The workspace denies `unsafe_code`; only the MIT-SHM segment, the allocator's tuning
# (one `mallopt` call), the Windows driver's Win32 calls (`win/`, whose module root
# allows it) and the GNOME driver's PipeWire calls (`libpipewire.rs`: the client library
# loaded at run time, so the shipped binary starts without it, through a few functions
# bound by hand) may.
allowed=$(grep -rlE 'allow\((.*[ ,])?unsafe_code' crates --include='*.rs' | sort | tr '\n' ' ')
if [ "$allowed" != "crates/computer-control/src/allocator.rs crates/desktop-gnome/src/libpipewire.rs crates/desktop-windows/src/win/mod.rs crates/desktop-x11/src/shm.rs " ]; then
  echo "unsafe_code is allowed outside shm.rs, allocator.rs, libpipewire.rs and desktop-windows/src/win/: $allowed" >&2
  exit 1
fi
# Lint the library as its users get it (default features), then with every feature.
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy --workspace --all-targets --all-features -- -D warnings
# The release artifacts, built once (x86-64 and aarch64 wheels, their binaries, the npm
# tarballs; the Windows wheel and package from the debug build the Wine tests below
# reuse, so the Windows target is built once); the packaging tests install these
# instead of building their own.
export DIST="${CARGO_TARGET_DIR:-target}/dist"
PACKAGE_WINDOWS_DEBUG=1 scripts/package.sh
export COMPUTER_CONTROL_DIST="$(cd "$DIST" && pwd)"
# The desk fleet (tests/fleet.rs, docs/FLEET.md): podman and mmdebstrap to build the
# desk image from the release binary above and play deploy/kubernetes as three desks,
# and kubernetes-validate (pinned) for the manifests. The image and its base are cached
# (scripts/image.sh), so only a changed binary or image input rebuilds.
fleet=()
for cmd in podman buildah mmdebstrap runc; do
  command -v "$cmd" >/dev/null 2>&1 || fleet+=("$cmd")
done
if [ ${#fleet[@]} -gt 0 ]; then
  echo "installing the fleet test's container tools (missing: ${fleet[*]})"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends podman buildah mmdebstrap runc uidmap \
    slirp4netns containernetworking-plugins golang-github-containernetworking-plugin-dnsname \
    iptables catatonit fuse-overlayfs >/dev/null
fi
if ! python3 -c "import importlib.metadata as m, sys; sys.exit(m.version('kubernetes-validate') != '1.37.0')" 2>/dev/null; then
  echo "installing kubernetes-validate for the fleet test"
  python3 -m pip install --quiet 'kubernetes-validate==1.37.0' ||
    python3 -m pip install --quiet --break-system-packages 'kubernetes-validate==1.37.0'
fi
fleet_start=$(date +%s)
COMPUTER_CONTROL_DESK_IMAGE="$(scripts/image.sh "$DIST/bin/x86_64/computer-control" | tail -1)"
export COMPUTER_CONTROL_DESK_IMAGE
echo "desk image $COMPUTER_CONTROL_DESK_IMAGE ready in $(( $(date +%s) - fleet_start )) s"

# Windows (docs/TESTING.md "Windows under Wine"): the Wine prefix with the
# bcryptprimitives stand-in and the desk's cc-form.exe (made once per target
# directory), the driver and the server built for x86_64-pc-windows-gnu once, linted
# there, the driver's tests run under Wine on a private Xvfb; the driver conformance
# suite's Wine desk (conformance::windows::) runs in the test build below.
scripts/wine/prefix.sh >/dev/null
cargo clippy -p computer-control-desktop-windows --target x86_64-pc-windows-gnu --all-targets -- -D warnings
cargo clippy -p computer-control --target x86_64-pc-windows-gnu --no-default-features --features windows -- -D warnings
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$PWD/scripts/wine/runner.sh" \
  cargo test -p computer-control-desktop-windows --target x86_64-pc-windows-gnu
cargo build -p computer-control --target x86_64-pc-windows-gnu --no-default-features --features windows

# One test build with every feature, so the client library's in-process runtime (`local`,
# off by default) is tested too. Testing it in a second `cargo test -p` would resolve the
# dependencies' features differently and build everything twice: twice the disk.
cargo test --workspace --all-features

# The published upstream client (adk-computer-use 2.3.0, pinned in its own workspace so it
# never enters the product's dependency graph) against the server binary the test build
# above made. Same target directory: the crates both workspaces share are built once.
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
(cd interop/upstream-adk && cargo fmt -- --check)
COMPUTER_CONTROL_BIN="$target_dir/debug/computer-control" CARGO_TARGET_DIR="$target_dir" \
  cargo test --locked --manifest-path interop/upstream-adk/Cargo.toml
