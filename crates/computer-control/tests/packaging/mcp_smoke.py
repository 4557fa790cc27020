"""An MCP host's first minute with computer-control, through the official MCP Python
SDK: start the server with exactly the given command and arguments (and only the
environment variables a host passes, plus any given with --env), initialize, list the
tools, call `check_setup` (the SDK validates the result against its output schema) and
`screen_capture` (an image block).

  mcp_smoke.py [--env K=V]... [--cwd DIR] -- COMMAND [ARG...]

Prints `PASS <step>` per step and the check report as `CHECK <json>`; the first failed
step raises, so the process exits non-zero with the reason on stderr.
"""

import asyncio
import base64
import json
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client


def expect(cond, what, got=None):
    if not cond:
        raise SystemExit(f"FAIL {what}: {json.dumps(got, default=str)[:3000]}")


async def main(env, cwd, command, args):
    params = StdioServerParameters(command=command, args=args, env=env or None, cwd=cwd)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            expect(init.server_info.name == "computer-control", "server name", init.model_dump(mode="json"))
            print("PASS initialize", flush=True)
            tools = {t.name: t for t in (await session.list_tools()).tools}
            for name in ("check_setup", "screen_capture", "start_session"):
                expect(name in tools, f"tool {name} listed", sorted(tools))
            expect(tools["check_setup"].annotations.read_only_hint is True, "check_setup is read-only")
            print("PASS tools", flush=True)
            r = await session.call_tool("check_setup", {})
            expect(not r.is_error, "check_setup succeeds", r.model_dump(mode="json"))
            report = r.structured_content
            expect(isinstance(report, dict) and "blockers" in report, "check report", report)
            print("CHECK " + json.dumps(report), flush=True)
            print("PASS check_setup", flush=True)
            r = await session.call_tool("screen_capture", {"format": "png", "scale": 0.25})
            expect(not r.is_error, "screen_capture succeeds", r.model_dump(mode="json"))
            images = [c for c in r.content if c.type == "image"]
            expect(images and images[0].mime_type == "image/png", "an image block", r.model_dump(mode="json"))
            png = base64.b64decode(images[0].data)
            expect(png.startswith(b"\x89PNG\r\n\x1a\n"), "PNG bytes")
            print(f"PASS screen_capture {len(png)} bytes", flush=True)
    print("DONE", flush=True)


if __name__ == "__main__":
    argv = sys.argv[1:]
    env, cwd = {}, None
    while argv and argv[0] != "--":
        flag = argv.pop(0)
        if flag == "--env":
            k, _, v = argv.pop(0).partition("=")
            env[k] = v
        elif flag == "--cwd":
            cwd = argv.pop(0)
        else:
            raise SystemExit(f"unknown option {flag}")
    expect(argv[:1] == ["--"] and len(argv) >= 2, "usage: mcp_smoke.py [--env K=V]... -- COMMAND [ARG...]")
    asyncio.run(main(env, cwd, argv[1], argv[2:]))
