/* A stand-in for Windows' bcryptprimitives.dll, which Wine 8 lacks: Rust's standard
   library (1.78+) imports ProcessPrng from it, so without this DLL no Rust program
   starts under Wine 8 (exit 53, nothing printed). It fills the buffer from the
   system's preferred RNG, as the real export does. Built with mingw-w64 by
   scripts/wine/prefix.sh into the test prefix; never shipped. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
