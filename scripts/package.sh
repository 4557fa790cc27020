#!/usr/bin/env bash
# Builds the release artifacts once, from this checkout, into $DIST (default
# $CARGO_TARGET_DIR/dist, else target/dist): the PyPI wheels (maturin, binary bindings),
# the binaries they carry, and the npm tarballs (a launcher package plus one package per
# platform). Nothing is published. The packaging tests (crates/computer-control/tests/
# packaging.rs) install these artifacts; scripts/test.sh runs this first.
#
#   x86-64:  maturin --zig, manylinux_2_17 (runs on glibc 2.17 and later)
#   aarch64: maturin with Debian's cross toolchain (gcc-aarch64-linux-gnu); its glibc
#            floor is what that toolchain links against (see docs/PERFORMANCE.md)
#   windows: maturin for x86_64-pc-windows-gnu with mingw-w64 (the Windows driver's
#            feature set): a win_amd64 wheel and the @computer-control/win32-x64 package
#
# Needs: maturin and ziglang (pip), gcc-aarch64-linux-gnu + libc6-dev-arm64-cross
# (apt), rustup's aarch64-unknown-linux-gnu and x86_64-pc-windows-gnu std,
# gcc-mingw-w64-x86-64, npm. scripts/test.sh installs them.
# Skip aarch64 with PACKAGE_ARCHES="x86_64 windows". PACKAGE_QUICK=1 checks the packaging
# itself in seconds: x86-64 and Windows only, the debug binaries a test build already
# made, the Linux one linked for this host's glibc (not for release: its wheel is not
# portable). PACKAGE_WINDOWS_DEBUG=1 builds the Windows artifacts from the debug build
# the Wine tests use (scripts/test.sh: the Windows target is built once per run).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
dist="${DIST:-$target/dist}"
arches="${PACKAGE_ARCHES:-x86_64 aarch64 windows}"
quick="${PACKAGE_QUICK:-}"
[ -z "$quick" ] || arches="x86_64 windows"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"

rm -rf "$dist"
mkdir -p "$dist/wheels" "$dist/npm" "$dist/stage"
# Absolute: maturin and npm run from other directories.
dist="$(cd "$dist" && pwd)"

wheel_of() { ls "$dist/wheels"/computer_control-"$version"-*"$1".whl; }

for arch in $arches; do
  start=$(date +%s)
  case "$arch" in
    x86_64)
      if [ -n "$quick" ]; then
        (cd "$root/packaging/pypi" && maturin build --out "$dist/wheels")
      else
        (cd "$root/packaging/pypi" && maturin build --release --zig \
          --target x86_64-unknown-linux-gnu --compatibility manylinux_2_17 \
          --out "$dist/wheels")
      fi
      npm_arch=x64 ;;
    aarch64)
      (cd "$root/packaging/pypi" &&
        CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
        CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc \
        AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar \
        maturin build --release --target aarch64-unknown-linux-gnu \
        --out "$dist/wheels")
      npm_arch=arm64 ;;
    windows)
      release=--release
      [ -z "$quick" ] && [ -z "${PACKAGE_WINDOWS_DEBUG:-}" ] || release=
      (cd "$root/packaging/pypi" && maturin build $release \
        --target x86_64-pc-windows-gnu --no-default-features --features windows \
        --out "$dist/wheels")
      echo "built $arch in $(( $(date +%s) - start )) s"
      mkdir -p "$dist/bin/windows"
      unzip -p "$(wheel_of win_amd64)" "computer_control-$version.data/scripts/computer-control.exe" \
        > "$dist/bin/windows/computer-control.exe"
      pkg="$dist/stage/win32-x64"
      cp -r "$root/packaging/npm/platforms/win32-x64" "$pkg"
      mkdir -p "$pkg/bin"
      cp "$dist/bin/windows/computer-control.exe" "$pkg/bin/computer-control.exe"
      (cd "$dist/npm" && npm pack --silent "$pkg" >/dev/null)
      continue ;;
    *) echo "unknown architecture $arch" >&2; exit 2 ;;
  esac
  echo "built $arch in $(( $(date +%s) - start )) s"
  wheel="$(wheel_of "$arch")"
  mkdir -p "$dist/bin/$arch"
  unzip -p "$wheel" "computer_control-$version.data/scripts/computer-control" \
    > "$dist/bin/$arch/computer-control"
  chmod 0755 "$dist/bin/$arch/computer-control"
  pkg="$dist/stage/linux-$npm_arch-gnu"
  cp -r "$root/packaging/npm/platforms/linux-$npm_arch-gnu" "$pkg"
  mkdir -p "$pkg/bin"
  cp "$dist/bin/$arch/computer-control" "$pkg/bin/computer-control"
  (cd "$dist/npm" && npm pack --silent "$pkg" >/dev/null)
done

cp -r "$root/packaging/npm/computer-control" "$dist/stage/computer-control"
cp "$root/packaging/pypi/README.md" "$dist/stage/computer-control/README.md"
(cd "$dist/npm" && npm pack --silent "$dist/stage/computer-control" >/dev/null)
rm -rf "$dist/stage"
echo "artifacts in $dist:"
(cd "$dist" && find . -type f | sort)
