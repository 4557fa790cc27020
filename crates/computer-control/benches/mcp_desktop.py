#!/usr/bin/env python3
"""The MCP server as an MCP host drives it: through the official MCP Python SDK, on a
private X11 desk (Xvfb 1920x1080x24, a session bus, openbox, gtk3-widget-factory).

Two measurements, each printed as a markdown table:

* ``click``: the round trip of one ``pointer_click`` (``call_tool`` to its result, in
  the client; on the bare desktop, or with ``--window`` into an xterm), beside a ``wait_pause {ms: 0}`` through the same client (no desktop
  work: what our MCP path costs) and the same call answered by a server that does
  nothing else (``floor-server`` below: what the client alone costs), and the peers
  started on the same desk in the same run: the npm ``computer-use-mcp`` server's
  ``computer`` tool ``left_click`` when ``CC_PEER_COMPUTER_USE_MCP`` names its
  ``dist/main.js``, and ``xdotool click`` as a process per action.
* ``memory``: the server's resident memory after a workload of captures, clicks, typed
  text and accessibility snapshots, and where it goes: ``/proc/PID/status`` and every
  mapping of ``/proc/PID/smaps`` grouped into the heap, thread stacks, other anonymous
  memory and the mapped files.

Run (after ``cargo build --release -p computer-control --all-features``)::

    python3 crates/computer-control/benches/mcp_desktop.py click  [--bin PATH] [--n 500] [--window]
    python3 crates/computer-control/benches/mcp_desktop.py memory [--bin PATH] [--rounds 50]
    python3 crates/computer-control/benches/mcp_desktop.py floor-server   (an MCP server on stdio)

``--bin`` defaults to ``$CARGO_TARGET_DIR/release/computer-control`` (or
``target/release``). Nothing here asserts a time: it measures and prints.
"""

import argparse
import asyncio
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def default_bin():
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "computer-control")


class Desk:
    """Xvfb, a session bus and openbox in a private directory; killed on exit."""

    def __init__(self, app=True, window=False):
        self.dir = tempfile.mkdtemp(prefix="cc-mcp-bench-")
        os.chmod(self.dir, 0o700)
        self.children = []
        xvfb = subprocess.Popen(
            ["Xvfb", "-displayfd", "1", "-screen", "0", "1920x1080x24", "-nolisten", "tcp", "-noreset"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.children.append(xvfb)
        self.display = ":" + xvfb.stdout.readline().decode().strip()
        bus = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--print-address=1", f"--address=unix:dir={self.dir}"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env())
        self.children.append(bus)
        self.bus = bus.stdout.readline().decode().strip()
        self.spawn(["openbox", "--sm-disable"])
        if app:
            self.spawn(["gtk3-widget-factory"])
        if window:
            # An xterm under the clicked point (700, 500): a listed window in a frame.
            self.spawn(["xterm", "-geometry", "160x50+100+100"])
        time.sleep(2.0)  # openbox and the factory mapped; nothing here is timed

    def env(self):
        env = dict(os.environ)
        env.update({
            "DISPLAY": getattr(self, "display", ""),
            "DBUS_SESSION_BUS_ADDRESS": getattr(self, "bus", ""),
            "XDG_RUNTIME_DIR": self.dir,
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "GTK_THEME": "Adwaita",
        })
        for k in ("AT_SPI_BUS_ADDRESS", "NO_AT_BRIDGE", "COMPUTER_CONTROL_CONFIG"):
            env.pop(k, None)
        return env

    def spawn(self, argv):
        self.children.append(subprocess.Popen(
            argv, env=self.env(), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def close(self):
        for c in reversed(self.children):
            c.send_signal(signal.SIGTERM)
        for c in self.children:
            try:
                c.wait(5)
            except subprocess.TimeoutExpired:
                c.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def ours(desk, binary):
    env = desk.env()
    env.update({
        "COMPUTER_CONTROL_PLATFORM": "x11",
        "COMPUTER_CONTROL_JOURNAL": os.path.join(desk.dir, "journal.db"),
        "COMPUTER_CONTROL_LOG": "error",
    })
    return StdioServerParameters(command=binary, args=["mcp"], env=env)


def floor_server():
    """An MCP server that answers every request at once and does nothing else: one
    thread, one line in, one line out. What the client costs, with no server to speak
    of."""
    import json
    tools = [{"name": "wait_pause", "inputSchema": {"type": "object"}}]
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method = msg.get("method")
        if method == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"],
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "floor", "version": "0"}}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "{}"}], "isError": False}
        else:
            result = {}
        sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode() + b"\n")
        sys.stdout.buffer.flush()


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def row(name, xs):
    ms = [x * 1000 for x in xs]
    return (f"| {name} | {len(ms)} | {percentile(ms, 50):.3f} ms | {percentile(ms, 99):.3f} ms "
            f"| {min(ms):.3f} ms |")


async def time_calls(params, tool, arguments, n, warm):
    """`n` timed calls of one tool after `warm` untimed ones, over one session."""
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(warm):
                r = await session.call_tool(tool, arguments)
                if r.is_error:
                    raise SystemExit(f"{tool} failed: {r.content}")
            out = []
            for _ in range(n):
                t = time.perf_counter()
                await session.call_tool(tool, arguments)
                out.append(time.perf_counter() - t)
            return out


def click(args):
    desk = Desk(app=False, window=args.window)
    try:
        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min), {os.cpu_count()} CPUs")
        print()
        print("| MCP click, official Python client, Xvfb | n | p50 | p99 | min |")
        print("|---|---|---|---|---|")
        rows = []
        xs = asyncio.run(time_calls(ours(desk, args.bin), "pointer_click", {"x": 700, "y": 500}, args.n, 50))
        rows.append(row("computer-control `pointer_click`", xs))
        print(rows[-1], flush=True)
        # The same client and server with no desktop work, then the client alone.
        xs = asyncio.run(time_calls(ours(desk, args.bin), "wait_pause", {"ms": 0}, args.n, 50))
        rows.append(row("computer-control `wait_pause {ms: 0}` (no desktop work)", xs))
        print(rows[-1], flush=True)
        floor = StdioServerParameters(command=sys.executable, args=[os.path.abspath(__file__), "floor-server"])
        xs = asyncio.run(time_calls(floor, "wait_pause", {"ms": 0}, args.n, 50))
        rows.append(row("a server that answers at once (`floor-server`: the client alone)", xs))
        print(rows[-1], flush=True)
        peer = os.environ.get("CC_PEER_COMPUTER_USE_MCP")
        if peer:
            params = StdioServerParameters(command="node", args=[peer], env=desk.env())
            xs = asyncio.run(time_calls(
                params, "computer", {"action": "left_click", "coordinate": [700, 500]},
                max(10, args.n // 20), 3))
            rows.append(row("computer-use-mcp 1.8.0 `computer` `left_click`", xs))
            print(rows[-1], flush=True)
        else:
            print("| computer-use-mcp: not compared (set CC_PEER_COMPUTER_USE_MCP) | | | | |")
        if shutil.which("xdotool"):
            xs = []
            for _ in range(max(10, args.n // 20)):
                t = time.perf_counter()
                subprocess.run(["xdotool", "mousemove", "700", "500", "click", "--delay", "0", "1"],
                               env=desk.env(), check=True)
                xs.append(time.perf_counter() - t)
            print(row("`xdotool mousemove 700 500 click --delay 0 1` (a process per action)", xs))
        print(f"\nload average afterwards {os.getloadavg()[0]:.2f}")
    finally:
        desk.close()


def children_of(pid):
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            out.append(int(p))
    return out


def server_pids(binary):
    """Our children running `binary` (the SDK starts the server as our child)."""
    out = []
    for pid in children_of(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0].decode()
        except OSError:
            continue
        if os.path.basename(argv0) == os.path.basename(binary):
            out.append(pid)
    return out


def status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v.strip()
    return fields


def thread_stack_pointers(pid):
    """Each thread's stack pointer, from /proc/PID/task/TID/syscall (its last but one
    field; "running" threads have none)."""
    sps = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                fields = f.read().split()
        except OSError:
            continue
        if len(fields) >= 3 and fields[-2].startswith("0x"):
            sps.append(int(fields[-2], 16))
    return sps


ARENA_ALIGN = 64 << 20  # glibc's non-main arenas are 64 MiB-aligned heaps


def kind_of(path, perms, start, end, sps):
    if path == "[heap]":
        return "malloc: main arena (brk heap)"
    if path == "[stack]":
        return "main thread stack"
    if path.startswith("/SYSV"):
        return "MIT-SHM capture segment (shared with the X server)"
    if path.startswith("/memfd:"):
        return "memfd"
    if path.startswith("/") and "computer-control" in path:
        return "the binary (code and read-only data, mapped from its file)"
    if path.startswith("/"):
        return "shared libraries and other files"
    if path:
        return path
    if perms == "---p":
        return "guard pages and reserved address space"
    if any(start <= sp < end for sp in sps):
        return "thread stacks"
    if start % ARENA_ALIGN == 0:
        return "malloc: other threads' arenas"
    return "other anonymous memory (large blocks malloc maps on their own)"


def smaps(pid):
    """Resident KiB per kind of mapping."""
    groups = {}
    sps = thread_stack_pointers(pid)
    with open(f"/proc/{pid}/smaps") as f:
        lines = f.read().splitlines()
    name = None
    for line in lines:
        parts = line.split()
        if parts and "-" in parts[0] and len(parts) >= 5 and not parts[0].endswith(":"):
            start, end = (int(x, 16) for x in parts[0].split("-"))
            path = " ".join(parts[5:]) if len(parts) >= 6 else ""
            name = kind_of(path, parts[1], start, end, sps)
        elif parts and parts[0] == "Rss:" and name is not None:
            groups[name] = groups.get(name, 0) + int(parts[1])
    return groups


async def workload(params, rounds, pid_box):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            pid_box.extend(server_pids(params.command))
            before = None
            for i in range(rounds):
                for tool, arguments in (
                    ("screen_capture", {}),
                    ("pointer_click", {"x": 700 + i % 7, "y": 500}),
                    ("keyboard_type", {"text": "hello, world"}),
                    ("a11y_snapshot", {}),
                ):
                    r = await session.call_tool(tool, arguments)
                    if r.is_error and i == 0:
                        print(f"note: {tool} answered an error: {str(r.content)[:200]}", file=sys.stderr)
                if i == 0 and pid_box:
                    before = status(pid_box[0])
            pid = pid_box[0]
            after = status(pid)
            groups = smaps(pid)
            return before, after, groups


def memory(args):
    desk = Desk(app=True)
    try:
        params = ours(desk, args.bin)
        pid_box = []
        before, after, groups = asyncio.run(workload(params, args.rounds, pid_box))
        print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} rounds of capture, click, type, snapshot")
        print()
        print("| server memory | KiB |")
        print("|---|---|")
        if before:
            print(f"| VmRSS after the first round | {before['VmRSS'].split()[0]} |")
        for k in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "VmData", "Threads"):
            print(f"| {k} after {args.rounds} rounds | {after.get(k, '?').split()[0]} |")
        print()
        print("| resident, by mapping | KiB |")
        print("|---|---|")
        for k, v in sorted(groups.items(), key=lambda kv: -kv[1]):
            if v:
                print(f"| {k} | {v} |")
    finally:
        desk.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=["click", "memory", "floor-server"])
    p.add_argument("--bin", default=default_bin())
    p.add_argument("--n", type=int, default=500, help="timed clicks (ours)")
    p.add_argument("--window", action="store_true",
                   help="click into a window (an xterm) rather than the bare desktop")
    p.add_argument("--rounds", type=int, default=50, help="workload rounds (memory)")
    args = p.parse_args()
    if args.what == "floor-server":
        return floor_server()
    if not os.path.exists(args.bin):
        raise SystemExit(f"no server binary at {args.bin}: build it or pass --bin")
    {"click": click, "memory": memory}[args.what](args)


if __name__ == "__main__":
    main()
