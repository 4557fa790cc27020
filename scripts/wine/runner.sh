#!/usr/bin/env bash
# CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER: runs a Windows test binary under Wine on
# a private 1280x1024x24 Xvfb (cargo splits the runner on spaces, so the screen option
# needs this script). The prefix must exist (scripts/wine/prefix.sh).
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/env.sh"
exec xvfb-run -a -s "-screen 0 1280x1024x24 -nolisten tcp" "$CC_WINE64" "$@"
