"""Agents on played desks, through the official MCP Python SDK (Streamable HTTP). Run
by tests/fleet.rs; prints one JSON line per desk and exits non-zero on the first
failed expectation.

  agents.py govern TOKEN DESK...   a session on each desk, then a governed capture
      (`screen_capture` under a lease, action `capture-1`) executed until the
      operator has decided: first `approval_required`, then retried until it commits.
      Prints {"desk", "session_id", "lease_id", "receipt"}.
  agents.py type TOKEN DESK...     a long `keyboard_type` on every desk at once.
      Prints {"desk", "is_error", "structured"} as each answers.
  agents.py replay TOKEN SESSION LEASE DESK   the same governed capture again: its
      stored receipt. Prints {"desk", "receipt", "replay"}.

DESK is NAME=ADDRESS: the desk's name under the headless Service (sent as Host, as a
cluster's DNS would have resolved it) and the pod's address.
"""

import asyncio
import json
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

PORT = 8765
LONG = "the quick brown fox jumps over the lazy dog, " * 6
CAPTURE = {"tool": "screen_capture", "arguments": {"format": "png"}, "mode": "foreground",
           "action_id": "capture-1"}


class Check(Exception):
    """A failed expectation."""


def expect(cond, what, got=None):
    if not cond:
        raise Check(f"{what}: {json.dumps(got, default=str)[:2000]}")


def say(**line):
    print(json.dumps(line), flush=True)


async def on_desk(desk, token, work):
    name, address = desk.split("=", 1)
    headers = {"Authorization": f"Bearer {token}", "Host": f"{name}:{PORT}"}
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as client:
        url = f"http://{address}:{PORT}/mcp"
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await work(name, session)


async def govern(name, session):
    r = await session.call_tool("start_session", {"objective": "a governed capture"})
    expect(not r.is_error, "start_session", r.model_dump(mode="json"))
    sid = r.structured_content["session"]["sessionId"]
    r = await session.call_tool("acquire_control_lease", {
        "session_id": sid, "kind": "cooperative", "mode": "foreground", "ttl_ms": 300000,
        "action_budget": 10})
    expect(not r.is_error, "acquire_control_lease", r.model_dump(mode="json"))
    lease = r.structured_content["lease"]["leaseId"]
    args = dict(CAPTURE, session_id=sid, lease_id=lease)
    r = await session.call_tool("execute_action", args)
    err = r.structured_content or {}
    expect(r.is_error and err.get("error") == "approval_required",
           "the capture waits for the operator", r.model_dump(mode="json"))
    for _ in range(600):
        await asyncio.sleep(0.25)
        r = await session.call_tool("execute_action", args)
        if not (r.is_error and (r.structured_content or {}).get("error") == "approval_required"):
            break
    expect(not r.is_error, "the approved capture commits", r.model_dump(mode="json"))
    receipt = r.structured_content["receipt"]
    expect(receipt["status"] == "committed", "committed", receipt)
    say(desk=name, session_id=sid, lease_id=lease, receipt=receipt)


async def type_long(name, session):
    r = await session.call_tool("keyboard_type", {"text": LONG, "interval_ms": 40})
    say(desk=name, is_error=bool(r.is_error), structured=r.structured_content,
        text=[c.text for c in r.content if getattr(c, "type", None) == "text"])


def replay(sid, lease):
    async def work(name, session):
        r = await session.call_tool("execute_action", dict(CAPTURE, session_id=sid, lease_id=lease))
        expect(not r.is_error, "the replay answers the stored receipt", r.model_dump(mode="json"))
        say(desk=name, receipt=r.structured_content["receipt"],
            replay=r.structured_content.get("replay"))
    return work


async def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    mode, token = argv[0], argv[1]
    if mode == "replay":
        await on_desk(argv[4], token, replay(argv[2], argv[3]))
        return
    work = {"govern": govern, "type": type_long}.get(mode)
    if work is None:
        sys.exit(__doc__)
    await asyncio.gather(*(on_desk(d, token, work) for d in argv[2:]))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
