/* The Windows benchmark's peer (benches/wine.rs): what a program calling Win32
 * directly pays for a capture and a click, with no server, no protocol and no image
 * encoding, timed in-process with QueryPerformanceCounter.
 *
 *   wine_peer.exe capture N        N captures of the whole virtual screen
 *   wine_peer.exe click N X Y      N left clicks at (X, Y), physical pixels
 *
 * Prints one line per sample: its duration in nanoseconds. A capture is what a
 * one-shot screenshot function does (PIL's ImageGrab, pyautogui's screenshot): a
 * screen DC, a 32-bit top-down DIB section of the virtual screen, one BitBlt
 * (SRCCOPY | CAPTUREBLT), the pixels copied out to memory the caller owns, and
 * everything released. A click is SetCursorPos and one SendInput of the button's
 * down and up (what pyautogui's click does, without its pauses). */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static LONGLONG now(void) {
    LARGE_INTEGER t;
    QueryPerformanceCounter(&t);
    return t.QuadPart;
}

static int capture_once(unsigned char *out, size_t cap) {
    int x = GetSystemMetrics(SM_XVIRTUALSCREEN), y = GetSystemMetrics(SM_YVIRTUALSCREEN);
    int w = GetSystemMetrics(SM_CXVIRTUALSCREEN), h = GetSystemMetrics(SM_CYVIRTUALSCREEN);
    size_t n = (size_t)w * (size_t)h * 4;
    if (n > cap) return 0;
    HDC screen = GetDC(NULL);
    HDC mem = CreateCompatibleDC(screen);
    BITMAPINFO bi;
    memset(&bi, 0, sizeof bi);
    bi.bmiHeader.biSize = sizeof bi.bmiHeader;
    bi.bmiHeader.biWidth = w;
    bi.bmiHeader.biHeight = -h;
    bi.bmiHeader.biPlanes = 1;
    bi.bmiHeader.biBitCount = 32;
    bi.bmiHeader.biCompression = BI_RGB;
    void *bits = NULL;
    HBITMAP dib = CreateDIBSection(mem, &bi, DIB_RGB_COLORS, &bits, NULL, 0);
    int ok = 0;
    if (dib && bits) {
        HGDIOBJ old = SelectObject(mem, dib);
        ok = BitBlt(mem, 0, 0, w, h, screen, x, y, SRCCOPY | CAPTUREBLT);
        if (ok) memcpy(out, bits, n);
        SelectObject(mem, old);
        DeleteObject(dib);
    }
    DeleteDC(mem);
    ReleaseDC(NULL, screen);
    return ok;
}

static int click_once(int x, int y) {
    INPUT in[2];
    memset(in, 0, sizeof in);
    in[0].type = INPUT_MOUSE;
    in[0].mi.dwFlags = MOUSEEVENTF_LEFTDOWN;
    in[1].type = INPUT_MOUSE;
    in[1].mi.dwFlags = MOUSEEVENTF_LEFTUP;
    return SetCursorPos(x, y) && SendInput(2, in, sizeof(INPUT)) == 2;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: wine_peer.exe capture N | click N X Y\n");
        return 2;
    }
    /* Physical pixels on every monitor, as the server declares for itself. */
    SetProcessDPIAware();
    int n = atoi(argv[2]);
    LARGE_INTEGER f;
    QueryPerformanceFrequency(&f);
    int capture = strcmp(argv[1], "capture") == 0;
    if (!capture && (strcmp(argv[1], "click") != 0 || argc < 5)) {
        fprintf(stderr, "usage: wine_peer.exe capture N | click N X Y\n");
        return 2;
    }
    size_t cap = (size_t)GetSystemMetrics(SM_CXVIRTUALSCREEN) *
                 (size_t)GetSystemMetrics(SM_CYVIRTUALSCREEN) * 4;
    unsigned char *out = capture ? malloc(cap) : NULL;
    int x = capture ? 0 : atoi(argv[3]), y = capture ? 0 : atoi(argv[4]);
    for (int i = 0; i < n; i++) {
        LONGLONG t = now();
        int ok = capture ? capture_once(out, cap) : click_once(x, y);
        LONGLONG d = now() - t;
        if (!ok) {
            fprintf(stderr, "%s failed (error %lu)\n", argv[1], GetLastError());
            return 1;
        }
        printf("%lld\n", (long long)(d * 1000000000LL / f.QuadPart));
    }
    return 0;
}
