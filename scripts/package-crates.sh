#!/usr/bin/env bash
# Packages the workspace's crates for the crates registry, without publishing anything.
#
#   scripts/package-crates.sh               cargo publish --workspace --dry-run: packages
#                                           every crate in dependency order and builds each
#                                           package on its own, against the others' packages
#   scripts/package-crates.sh --no-verify   the same without building the packages (checks
#                                           the manifests, metadata, file lists and that the
#                                           dependencies resolve; seconds, so CI runs it)
#   scripts/package-crates.sh --install     proves `cargo install computer-control` works
#                                           from the packages alone: a directory registry of
#                                           the packages plus their vendored dependencies, a
#                                           fresh CARGO_HOME whose crates-io source is replaced
#                                           by it, and no repository in sight
#
# The real publishing commands are in docs/RELEASING.md. The crates that are not published
# (`publish = false`) are left out by cargo itself.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-verify}
target=${CARGO_TARGET_DIR:-target}

case "$mode" in
  verify | --verify)
    # --allow-dirty: a dry run may check work in progress; a real publish does not pass it.
    cargo publish --workspace --dry-run --allow-dirty
    ;;
  --no-verify)
    cargo publish --workspace --dry-run --allow-dirty --no-verify
    ;;
  --install)
    work=$(mktemp -d "${TMPDIR:-/tmp}/cc-install.XXXXXX")
    echo "install check in $work"
    # 1. The packages, exactly as `cargo publish` would upload them.
    rm -f "$target"/package/*.crate
    # (`cargo package` does not skip `publish = false` crates as `cargo publish` does.)
    cargo package --workspace --exclude cc-fuzz-checks --exclude cc-test-kit --no-verify --allow-dirty >/dev/null
    # 2. Their third-party dependencies, at the versions of Cargo.lock.
    cargo vendor --locked --versioned-dirs "$work/registry" >/dev/null
    # 3. Our packages beside them, as a directory source wants them: unpacked, with the
    #    .crate's checksum (the one the packaged Cargo.lock records).
    for crate in "$target"/package/*.crate; do
      tar -xzf "$crate" -C "$work/registry"
      dir="$work/registry/$(basename "$crate" .crate)"
      sum=$(sha256sum "$crate" | cut -d' ' -f1)
      printf '{"files":{},"package":"%s"}\n' "$sum" >"$dir/.cargo-checksum.json"
    done
    # 4. A fresh CARGO_HOME that knows only that directory, and a directory with no
    #    repository in it to run from.
    mkdir -p "$work/cargo-home" "$work/elsewhere"
    cat >"$work/cargo-home/config.toml" <<EOF
[source.crates-io]
replace-with = "packaged"

[source.packaged]
directory = "$work/registry"
EOF
    # A debug build: the point is that it resolves and builds, not how fast it runs.
    (cd "$work/elsewhere" &&
      CARGO_HOME="$work/cargo-home" cargo install computer-control --locked --offline --debug \
        --root "$work/root")
    "$work/root/bin/computer-control" --version
    "$work/root/bin/computer-control" list >/dev/null
    echo "installed: $work/root/bin/computer-control"
    ;;
  *)
    echo "usage: $0 [--verify | --no-verify | --install]" >&2
    exit 2
    ;;
esac
