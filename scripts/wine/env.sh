# Sourced: the Wine settings every Windows test run uses.
#   WINEPREFIX        the test prefix (scripts/wine/prefix.sh makes it), by default in
#                     the cargo target directory so one CI run makes it once
#   WINEDEBUG=-all    Wine's own chatter off
#   WINEDLLOVERRIDES  no Mono/Gecko download prompts; winedbg disabled, so a call to an
#                     unimplemented Wine stub ends the process instead of hanging it
_cc_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export WINEPREFIX="${WINEPREFIX:-${CARGO_TARGET_DIR:-$_cc_root/target}/wine-prefix}"
export WINEDEBUG="${WINEDEBUG:--all}"
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=;winedbg.exe=d}"
# Debian's wine64 package does not put wine64 on PATH.
export CC_WINE64="${CC_WINE64:-/usr/lib/wine/wine64}"
