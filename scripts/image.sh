#!/usr/bin/env bash
# Builds the desk image (docs/FLEET.md) from this checkout, with podman and no image
# registry: a Debian bookworm root filesystem made by mmdebstrap from this machine's
# apt sources (Xvfb, openbox, the session bus and AT-SPI, tini, the user `desk` uid
# 10001), imported as the base image, then packaging/desk/Containerfile adds the
# binary and the entry script. Prints the image's name as its last line.
#
#   scripts/image.sh [BINARY]
#
# BINARY defaults to `cargo build --release -p computer-control` (x86-64 Linux, glibc
# 2.36 or older: the base is bookworm). scripts/test.sh passes the release binary
# scripts/package.sh built.
#
# Cached under $DESK_IMAGE_CACHE (default /var/tmp/computer-control-desk): the base
# tarball and image are rebuilt only when the package list, the excludes or the apt
# sources change; the desk image only when the base, the binary, the entry script or
# the Containerfile change. Older desk images of this script are removed.
#
# Needs root (rootful podman) and podman, buildah and mmdebstrap (scripts/test.sh
# installs them). CONTAINERS_CONF, when unset, points at a file this script writes:
# the runc runtime and ulimits within this shell's hard limits (docs/FLEET.md says
# why some machines need both).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${DESK_IMAGE_CACHE:-/var/tmp/computer-control-desk}"
mkdir -p "$cache"

# What the desk runs, and what it leaves out: Mesa's drivers and LLVM (Xvfb's GLX needs
# them only for OpenGL clients), imlib2's image loaders and the codecs only they use
# (openbox draws no images on a desk), documentation and translations.
packages=xvfb,openbox,dbus,dbus-bin,at-spi2-core,tini
libs=/usr/lib/x86_64-linux-gnu
excludes=(
  "$libs/dri/*" "$libs/libLLVM*" "$libs/libz3*" "$libs/imlib2/loaders/*"
  "$libs/libgs.so*" "$libs/libx265*" "$libs/libaom*" "$libs/libheif*" "$libs/libjxl*"
  "$libs/libdav1d*" "$libs/libde265*" "$libs/libspectre*"
  "/usr/share/doc/*" "/usr/share/man/*" "/usr/share/locale/*" "/usr/share/info/*"
)
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || { echo "image.sh: no $sources (a deb822 Debian sources file)" >&2; exit 2; }

if [ -z "${CONTAINERS_CONF:-}" ]; then
  conf="$cache/containers.conf"
  runtime=""
  command -v runc >/dev/null 2>&1 && runtime='runtime = "runc"'
  # A desk needs far fewer processes than 32768; above that, some runtimes see a lower
  # hard limit than this shell does and fail to start the container.
  nproc="$(ulimit -Hu)"
  if [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; then nproc=32768; fi
  nofile="$(ulimit -Hn)"
  if [ "$nofile" = unlimited ] || [ "$nofile" -gt 1048576 ]; then nofile=1048576; fi
  cat >"$conf.new" <<EOF
# Written by scripts/image.sh: rootful podman's default rlimits exceed what a process
# without CAP_SYS_RESOURCE may set, and crun refuses hybrid cgroup layouts.
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
$runtime
EOF
  mv "$conf.new" "$conf"
  export CONTAINERS_CONF="$conf"
fi

hash() { sha256sum | cut -c1-16; }

# The base: a root filesystem tarball, then an image.
base_key="$(
  {
    echo "bookworm minbase $packages"
    printf '%s\n' "${excludes[@]}"
    cat "$sources"
    sed -n '/# base-hooks$/,/# end base-hooks$/p' "$0"
  } | hash
)"
base_image="localhost/computer-control-desk-base:$base_key"
base_tar="$cache/base-$base_key.tar"
if ! podman image exists "$base_image"; then
  if [ ! -f "$base_tar" ]; then
    start=$(date +%s)
    opts=()
    for e in "${excludes[@]}"; do opts+=(--dpkgopt="path-exclude=$e"); done
    # base-hooks
    mmdebstrap --variant=minbase --mode=root --include="$packages" \
      --aptopt='APT::Install-Recommends "false"' "${opts[@]}" \
      --customize-hook='chroot "$1" useradd --uid 10001 --user-group --no-create-home --home-dir /tmp/home --shell /usr/sbin/nologin desk' \
      --customize-hook='mkdir -p "$1/var/lib/computer-control" && chown 10001:10001 "$1/var/lib/computer-control"' \
      --customize-hook='rm -rf "$1/var/cache/apt" "$1/var/lib/apt/lists"' \
      bookworm "$cache/partial-$base_key.tar" "$sources" >&2
    # end base-hooks
    mv "$cache/partial-$base_key.tar" "$base_tar"
    echo "image.sh: base root filesystem in $(( $(date +%s) - start )) s" >&2
  fi
  podman import --quiet "$base_tar" "$base_image" >/dev/null
  # Older bases of this script.
  for old in "$cache"/base-*.tar; do [ "$old" = "$base_tar" ] || rm -f "$old"; done
fi

# The desk: the binary and the entry script over the base.
binary="${1:-}"
if [ -z "$binary" ]; then
  (cd "$root" && cargo build --release -p computer-control >&2)
  binary="${CARGO_TARGET_DIR:-$root/target}/release/computer-control"
fi
[ -x "$binary" ] || { echo "image.sh: $binary is not an executable" >&2; exit 2; }
desk_key="$(
  {
    echo "$base_key"
    sha256sum <"$binary"
    cat "$root/packaging/desk/desk-entry" "$root/packaging/desk/Containerfile"
  } | hash
)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
image="localhost/computer-control-desk:$version-$desk_key"
if ! podman image exists "$image"; then
  start=$(date +%s)
  context="$(mktemp -d "$cache/context.XXXXXX")"
  trap 'rm -rf "$context"' EXIT
  cp "$binary" "$context/computer-control"
  cp "$root/packaging/desk/desk-entry" "$context/desk-entry"
  podman build --quiet --network=none --build-arg "BASE=$base_image" \
    -f "$root/packaging/desk/Containerfile" -t "$image" "$context" >/dev/null
  echo "image.sh: desk image in $(( $(date +%s) - start )) s" >&2
fi
podman tag "$image" localhost/computer-control-desk:latest
# Older desk images of this script (their tags only; podman keeps shared layers).
podman images --format '{{.Repository}}:{{.Tag}}' --filter reference=localhost/computer-control-desk |
  while read -r old; do
    case "$old" in "$image" | localhost/computer-control-desk:latest) ;; *) podman rmi "$old" >/dev/null || true ;; esac
  done
echo "$image"
