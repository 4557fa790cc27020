/* The Wine desk's own Windows program (built with mingw by prefix.sh).
 *
 *   cc-form.exe                 a window titled "cc-form": three named checkboxes, a
 *                               password edit (ES_PASSWORD) and a read-only plain edit
 *                               that mirrors it, so a suite can tell the password
 *                               arrived without reading the password edit
 *   cc-form.exe probe           prints "X Y VK..." : the cursor and every virtual key
 *                               or button down, as another process sees them
 *   cc-form.exe minimize HWND   minimizes a window, as a taskbar would
 *   cc-form.exe kill PID        ends a process
 *   cc-form.exe paste           prints the clipboard's text (UTF-8)
 *   cc-form.exe copy TEXT [secret]
 *                               takes the clipboard with TEXT (marked secret as a
 *                               password manager marks it) and keeps running, its owner
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

#define ID_PASSWORD 10
#define ID_MIRROR 11

static HWND password, mirror;

static LRESULT CALLBACK form_proc(HWND h, UINT msg, WPARAM w, LPARAM l)
{
    if (msg == WM_COMMAND && LOWORD(w) == ID_PASSWORD && HIWORD(w) == EN_CHANGE) {
        WCHAR buf[512];
        GetWindowTextW(password, buf, 512);
        SetWindowTextW(mirror, buf);
        return 0;
    }
    if (msg == WM_DESTROY) {
        PostQuitMessage(0);
        return 0;
    }
    return DefWindowProcW(h, msg, w, l);
}

static HWND child(HWND parent, const WCHAR *cls, const WCHAR *text, DWORD style, int x,
                  int y, int w, int h, int id)
{
    return CreateWindowExW(0, cls, text, WS_CHILD | WS_VISIBLE | style, x, y, w, h, parent,
                           (HMENU)(INT_PTR)id, GetModuleHandleW(NULL), NULL);
}

static int form(void)
{
    WNDCLASSW wc = {0};
    MSG msg;
    HWND top;
    wc.lpfnWndProc = form_proc;
    wc.hInstance = GetModuleHandleW(NULL);
    wc.hbrBackground = (HBRUSH)(COLOR_BTNFACE + 1);
    wc.lpszClassName = L"CcForm";
    wc.hCursor = LoadCursorW(NULL, (LPCWSTR)IDC_ARROW);
    RegisterClassW(&wc);
    top = CreateWindowExW(0, L"CcForm", L"cc-form", WS_OVERLAPPEDWINDOW | WS_VISIBLE, 200,
                          150, 480, 320, NULL, NULL, wc.hInstance, NULL);
    child(top, L"Button", L"Alpha", BS_AUTOCHECKBOX | WS_TABSTOP, 20, 20, 200, 28, 1);
    child(top, L"Button", L"Beta", BS_AUTOCHECKBOX | WS_TABSTOP, 20, 56, 200, 28, 2);
    child(top, L"Button", L"Gamma", BS_AUTOCHECKBOX | WS_TABSTOP, 20, 92, 200, 28, 3);
    child(top, L"Static", L"Password", 0, 20, 140, 100, 24, 4);
    password = child(top, L"Edit", L"", ES_PASSWORD | ES_AUTOHSCROLL | WS_BORDER | WS_TABSTOP,
                     130, 136, 300, 30, ID_PASSWORD);
    child(top, L"Static", L"Shown", 0, 20, 190, 100, 24, 5);
    mirror = child(top, L"Edit", L"", ES_READONLY | ES_AUTOHSCROLL | WS_BORDER, 130, 186, 300,
                   30, ID_MIRROR);
    while (GetMessageW(&msg, NULL, 0, 0) > 0) {
        if (!IsDialogMessageW(top, &msg)) {
            TranslateMessage(&msg);
            DispatchMessageW(&msg);
        }
    }
    return 0;
}

static int probe(void)
{
    POINT p = {0, 0};
    int vk;
    GetCursorPos(&p);
    printf("%ld %ld", p.x, p.y);
    for (vk = 1; vk < 255; vk++)
        if (GetAsyncKeyState(vk) & 0x8000)
            printf(" %d", vk);
    printf("\n");
    return 0;
}

static void print_utf8(const WCHAR *text)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, text, -1, NULL, 0, NULL, NULL);
    char *out = malloc(n > 0 ? n : 1);
    DWORD written;
    if (n > 0 && out) {
        WideCharToMultiByte(CP_UTF8, 0, text, -1, out, n, NULL, NULL);
        WriteFile(GetStdHandle(STD_OUTPUT_HANDLE), out, n - 1, &written, NULL);
    }
    free(out);
}

static int paste(void)
{
    HANDLE data;
    int i;
    for (i = 0; i < 50 && !OpenClipboard(NULL); i++)
        Sleep(20);
    data = GetClipboardData(CF_UNICODETEXT);
    if (data) {
        const WCHAR *text = GlobalLock(data);
        if (text)
            print_utf8(text);
        GlobalUnlock(data);
    }
    CloseClipboard();
    return data ? 0 : 1;
}

static int copy(const WCHAR *text, int secret)
{
    size_t bytes = (wcslen(text) + 1) * sizeof(WCHAR);
    HGLOBAL mem = GlobalAlloc(GMEM_MOVEABLE, bytes);
    HWND owner = CreateWindowExW(0, L"Static", L"cc-form copy", 0, 0, 0, 0, 0, NULL, NULL,
                                 GetModuleHandleW(NULL), NULL);
    MSG msg;
    int i;
    memcpy(GlobalLock(mem), text, bytes);
    GlobalUnlock(mem);
    for (i = 0; i < 50 && !OpenClipboard(owner); i++)
        Sleep(20);
    EmptyClipboard();
    SetClipboardData(CF_UNICODETEXT, mem);
    if (secret) {
        UINT fmt = RegisterClipboardFormatW(L"ExcludeClipboardContentFromMonitorProcessing");
        HGLOBAL mark = GlobalAlloc(GMEM_MOVEABLE, 1);
        SetClipboardData(fmt, mark);
    }
    CloseClipboard();
    printf("copied\n");
    fflush(stdout);
    while (GetMessageW(&msg, NULL, 0, 0) > 0)
        DispatchMessageW(&msg);
    return 0;
}

int main(void)
{
    int argc;
    WCHAR **argv = CommandLineToArgvW(GetCommandLineW(), &argc);
    if (argc < 2)
        return form();
    if (!wcscmp(argv[1], L"probe"))
        return probe();
    if (!wcscmp(argv[1], L"paste"))
        return paste();
    if (argc >= 3 && !wcscmp(argv[1], L"minimize"))
        return !ShowWindow((HWND)(UINT_PTR)_wcstoui64(argv[2], NULL, 10), SW_MINIMIZE);
    if (argc >= 3 && !wcscmp(argv[1], L"kill")) {
        HANDLE p = OpenProcess(PROCESS_TERMINATE, FALSE, wcstoul(argv[2], NULL, 10));
        return !(p && TerminateProcess(p, 1));
    }
    if (argc >= 3 && !wcscmp(argv[1], L"copy"))
        return copy(argv[2], argc >= 4 && !wcscmp(argv[3], L"secret"));
    fprintf(stderr, "usage: cc-form.exe [probe | paste | minimize HWND | kill PID | copy TEXT [secret]]\n");
    return 2;
}
