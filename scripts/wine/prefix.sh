#!/usr/bin/env bash
# Makes the Wine prefix the Windows tests run in, once (kept until the target directory
# goes): `wineboot` on a throwaway Xvfb, then the bcryptprimitives stand-in DLL
# (bcryptprimitives.c) into its system32, and the desk's own test program (cc-form.c)
# into C:\cc-test. Prints the prefix.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
dll="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  mkdir -p "$WINEPREFIX"
  xvfb-run -a "$CC_WINE64" wineboot -i >/dev/null 2>&1
  # wineboot returns before its wineserver has written the registry out.
  WINEPREFIX="$WINEPREFIX" /usr/lib/wine/wineserver -w
fi
if [ ! -f "$dll" ] || [ "$here/bcryptprimitives.c" -nt "$dll" ]; then
  x86_64-w64-mingw32-gcc -O2 -shared -s -o "$dll" "$here/bcryptprimitives.c" -lbcrypt
fi
form="$WINEPREFIX/drive_c/cc-test/cc-form.exe"
if [ ! -f "$form" ] || [ "$here/cc-form.c" -nt "$form" ]; then
  mkdir -p "$(dirname "$form")"
  x86_64-w64-mingw32-gcc -O2 -s -Wall -o "$form" "$here/cc-form.c" -lshell32
fi
echo "$WINEPREFIX"
