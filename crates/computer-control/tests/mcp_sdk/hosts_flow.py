"""What a user in an MCP host meets, driven with the official MCP Python SDK.

Run by tests/mcp_sdk.rs:

  hosts_flow.py BINARY DIR

starts `serve --transport mcp --platform virtual --operator-listen 127.0.0.1:0` over
stdio (config and journal in DIR), and plays the operator as an HTTP client of the
operator channel (its `/rpc` and `/events`, the operator token). Scenarios:

  every_tool            every listed tool called once; the SDK validates each
                        successful result against the tool's outputSchema
  progress              keyboard_type, wait_for and batch_execute with a progressToken
                        report characters typed, seconds waited and items done
  cancel                a cancelled wait_for stops (action.finished: safety_stopped)
                        and the next call runs
  approval_no_callback  a client without elicitation, with a progressToken: the call
                        waits, reports the seconds left, is recorded "declined or
                        unavailable" (not_supported), and answers the approved action's
                        own result once the operator approves on the operator channel
  approval_decline      elicitation declined: URL mode to the console's page for the
                        request, no token in it; recorded; the action still waits; the
                        operator's denial ends the call
  vocabulary_decline    the same for a vendor vocabulary's safety check, which waits
                        inside the call
  governed_decline      a governed action pending the operator, announced the same way
  approval_unanswered   the operator decides while the prompt is open: recorded as
                        never answered, the call answers the approved result
  approval_accept       an auto-accepting client approves nothing: recorded
                        "acknowledged", the action waits and expires

Then `serve --transport http` runs approval_decline again over Streamable HTTP
(`/mcp`, the agent token; the console on the same port), printing
`PASS approval_decline_over_http`.

Each scenario prints `PASS <name>`; the first failed check raises.
"""

import asyncio
import json
import os
import sys
import time

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.streamable_http import streamable_http_client

OPERATOR = "hosts-operator-token-0123456789abcdef012345"
AGENT = "hosts-agent-token-fedcba9876543210fedcba9876"
# Liveness bounds only (never a timing assertion).
LIMIT = 60.0


class Check(Exception):
    """A failed expectation."""


def expect(cond, what, got=None):
    if not cond:
        raise Check(f"{what}: {json.dumps(got, default=str)[:3000]}")


def passed(name):
    print(f"PASS {name}", flush=True)


class Operator:
    """The person on the operator channel: `/rpc` and `/events` with the operator token."""

    def __init__(self, base):
        self.base = base
        self.client = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=httpx2.Timeout(30.0)
        )

    async def rpc(self, method, params=None):
        body = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            body["params"] = params
        r = await self.client.post(f"{self.base}/rpc", json=body)
        expect(r.status_code == 200, f"{method} over the operator channel", r.text)
        return r.json()["result"]

    async def pending(self):
        status = await self.rpc("system.status")
        return (status.get("result") or {}).get("pending_confirmation")

    async def event(self, kind, request_id=None, **members):
        """The first event of `kind` in the trail (about `request_id`, with these payload
        `members`), waiting for it."""
        deadline = time.monotonic() + LIMIT
        while time.monotonic() < deadline:
            async with self.client.stream("GET", f"{self.base}/events",
                                          timeout=httpx2.Timeout(5.0, read=2.0)) as r:
                try:
                    async for line in r.aiter_lines():
                        if not line.startswith("data:"):
                            continue
                        ev = json.loads(line[5:])
                        p = ev.get("payload") or {}
                        if ev.get("type") != kind:
                            continue
                        if request_id is not None and p.get("request_id") != request_id:
                            continue
                        if any(p.get(k) != v for k, v in members.items()):
                            continue
                        return p
                except httpx2.ReadTimeout:
                    pass
        raise Check(f"no {kind} event for {request_id} {members}")

    async def close(self):
        await self.client.aclose()


def structured(r, what):
    expect(not r.is_error, f"{what} succeeds", r.model_dump(mode="json"))
    return r.structured_content


async def every_tool(session, operator):
    """Each listed tool once; the SDK checks every success against its outputSchema."""
    tools = (await session.list_tools()).tools
    names = {t.name for t in tools}
    for t in tools:
        expect(t.title and t.title != t.name, f"{t.name}: a title", t.title)
        expect(t.icons, f"{t.name}: an icon")
        a = t.annotations
        for hint in ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"):
            expect(getattr(a, hint) is not None, f"{t.name}: {hint} stated", a)
        for schema in (t.input_schema, t.output_schema):
            text = json.dumps(schema)
            expect('"format": "uint' not in text, f"{t.name}: no uint format", schema)
    ok = set()

    async def call(name, args):
        r = await session.call_tool(name, args)
        structured(r, name)
        ok.add(name)
        return r.structured_content

    await call("check_setup", {})
    await call("screen_capture", {"scale": 0.25})
    await call("pointer_move", {"x": 5, "y": 5})
    await call("pointer_position", {})
    windows = await call("window_list", {})
    form = next(w for w in windows["windows"] if w["app_id"] == "cc-form")
    await call("window_focus", {"id": form["id"]})
    snap = await call("a11y_snapshot", {"window": form["id"], "level": "full"})
    expect(snap.get("tree"), "a snapshot tree", snap)
    await call("a11y_input", {"selector": {"role": "edit", "name": "Name"}, "text": "Ada"})
    await call("a11y_activate", {"selector": {"role": "button", "name": "Submit"}})
    rect = form["rect"]
    cx, cy = rect["x"] + rect["width"] // 2, rect["y"] + rect["height"] // 2
    await call("pointer_click", {"x": cx, "y": cy})
    await call("pointer_scroll", {"x": cx, "y": cy, "amount": 1})
    await call("pointer_drag", {"from": {"x": cx, "y": cy}, "to": {"x": cx + 1, "y": cy}})
    await call("keyboard_press", {"key": "shift"})
    await call("keyboard_combo", {"keys": ["ctrl", "a"]})
    await call("keyboard_type", {"text": "hi"})
    await call("wait_pause", {"ms": 1})
    await call("wait_for", {"condition": "stable", "stable_ms": 1, "timeout_ms": 5000})
    await call("clipboard_write", {"text": "copied"})
    await call("clipboard_read", {})
    await call("batch_execute", {"items": [{"tool": "pointer.move", "arguments": {"x": 6, "y": 6}}]})
    await call("anthropic_computer", {"action": "screenshot"})
    await call("openai_computer", {"type": "computer_call", "call_id": "c1",
                                   "actions": [{"type": "screenshot"}]})
    await call("gemini_computer", {"name": "take_screenshot", "args": {}})
    # The governed tools, in the order a governed run uses them.
    sid = (await call("start_session", {"objective": "every tool"}))["session"]["sessionId"]
    await call("get_session", {"session_id": sid})
    await call("get_execution_capabilities", {"tool": "pointer_click"})
    await call("preview_action", {"session_id": sid, "tool": "pointer_position",
                                  "arguments": {}, "mode": "shadow"})
    lease = (await call("acquire_control_lease", {
        "session_id": sid, "kind": "cooperative", "mode": "background", "ttl_ms": 60000,
        "action_budget": 5}))["lease"]["leaseId"]
    await call("execute_action", {"session_id": sid, "action_id": "e1",
                                  "tool": "pointer_position", "arguments": {}, "mode": "shadow"})
    reserved = await call("reserve_target", {"session_id": sid, "intent_id": "i1",
                                             "app_id": "cc-form", "ttl_ms": 60000})
    await call("release_target_reservation", {
        "session_id": sid, "reservation_id": reserved["reservation"]["reservationId"]})
    await call("get_session_events", {"session_id": sid})
    await call("release_control_lease", {"session_id": sid, "lease_id": lease})
    await call("submit_follow_up", {"session_id": sid, "instruction": "and then stop"})
    await call("get_follow_ups", {"session_id": sid})
    await call("pause_session", {"session_id": sid, "reason": "a pause"})
    await call("resume_session", {"session_id": sid})
    await call("stop_session", {"session_id": sid})
    await call("delete_session", {"session_id": sid, "confirm": True})
    await call("prune_sessions", {"older_than": "2000-01-01T00:00:00Z", "confirm": True})
    # Last: a high-risk launch parks (a normal result), and the stop cancels it.
    await call("app_launch", {"app": "cc-form"})
    await call("emergency_stop", {"reason": "end of the tour"})
    released = await operator.rpc("control.panic", {"on": False})
    expect(released.get("ok"), "the operator releases the stop", released)
    missing = names - ok
    expect(not missing, "every listed tool was called and validated", sorted(missing))
    passed("every_tool")


def recorder():
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    return seen, on_progress


async def progress(session):
    seen, cb = recorder()
    text = "progress!"
    structured(await session.call_tool("keyboard_type", {"text": text, "interval_ms": 5},
                                       progress_callback=cb), "keyboard_type")
    expect(seen, "typing reported progress", seen)
    values = [p for p, _, _ in seen]
    expect(values == sorted(values) and len(set(values)) == len(values),
           "progress only grows", seen)
    expect(seen[-1][0] == len(text) and seen[-1][1] == len(text)
           and "characters" in seen[-1][2], "the last report is every character", seen)

    seen, cb = recorder()
    r = await session.call_tool("wait_for", {"condition": "appears", "timeout_ms": 600,
                                             "element": {"role": "button", "name": "Never"}},
                                progress_callback=cb)
    expect(r.is_error, "the wait times out", r.model_dump(mode="json"))
    expect(seen and all(t == 0.6 for _, t, _ in seen) and "waited" in seen[-1][2],
           "the wait reported seconds waited of its timeout", seen)

    seen, cb = recorder()
    items = [{"tool": "pointer.move", "arguments": {"x": 7 + i, "y": 7}} for i in range(3)]
    structured(await session.call_tool("batch_execute", {"items": items, "gap_ms": 1},
                                       progress_callback=cb), "batch_execute")
    expect(seen and seen[-1][:2] == (3, 3) and "batch items" in seen[-1][2],
           "the batch reported its items", seen)
    passed("progress")


async def cancel(session, operator):
    seen = asyncio.Event()

    async def cb(progress, total, message):
        seen.set()

    call = asyncio.ensure_future(session.call_tool(
        "wait_for", {"condition": "appears", "timeout_ms": 600000,
                     "element": {"role": "button", "name": "Never"}},
        progress_callback=cb))
    await asyncio.wait_for(seen.wait(), LIMIT)
    call.cancel()
    try:
        await call
    except asyncio.CancelledError:
        pass
    finished = await operator.event("action.finished", tool="wait.for",
                                    error_code="safety_stopped")
    expect(finished["ok"] is False, "the cancelled wait stopped", finished)
    structured(await session.call_tool("pointer_position", {}), "the next call runs")
    state = await operator.rpc("system.status")
    expect(state["result"]["state"] == "ready", "only the call stopped, not the server", state)
    passed("cancel")


PARK = ("keyboard_combo", {"keys": ["win", "r"]})


async def approval_no_callback(session, operator):
    seen, cb = recorder()
    call = asyncio.ensure_future(session.call_tool(*PARK, progress_callback=cb))
    requested = await operator.event("safety.confirmation_requested",
                                     tool="keyboard.combo")
    rid = requested["request_id"]
    notice = await operator.event("safety.confirmation_notice", rid)
    expect(notice["outcome"] == "declined_or_unavailable" and notice["answer"] == "not_supported",
           "a client without elicitation is recorded as unavailable", notice)
    expect(not call.done(), "the call waits for the person", None)
    approved = await operator.rpc("session.confirm", {"request_id": rid, "approve": True})
    expect(approved.get("ok"), "the operator approves", approved)
    r = await asyncio.wait_for(call, LIMIT)
    body = structured(r, "the approved call")
    expect(body.get("status") != "awaiting_confirmation" and "keys" in json.dumps(body),
           "the answer is the approved action's own result", body)
    expect(seen and "s left" in seen[0][2], "the wait reported the seconds left", seen)
    passed("approval_no_callback")


async def approval_decline(session, operator, asked):
    call = asyncio.ensure_future(session.call_tool(*PARK))
    requested = await operator.event("safety.confirmation_requested",
                                     tool="keyboard.combo")
    rid = requested["request_id"]
    notice = await operator.event("safety.confirmation_notice", rid)
    expect(notice["outcome"] == "declined_or_unavailable" and notice["answer"] == "decline",
           "a declined elicitation is recorded", notice)
    expect(asked, "an elicitation was sent", asked)
    p = asked[-1]
    expect(p.mode == "url", "URL mode", p.model_dump(mode="json"))
    expect(p.url == f"{operator.base}/#approval={rid}", "the console's page for the request",
           p.url)
    expect("token" not in p.url.lower(), "no token in the link", p.url)
    for part in ("keyboard.combo", "win", "high", "Time left", "approves nothing"):
        expect(part in p.message, f"the message names {part}", p.message)
    pending = await operator.pending()
    expect(pending and pending["request_id"] == rid, "the decline left it pending", pending)
    expect(not call.done(), "the call still waits")
    denied = await operator.rpc("session.confirm", {"request_id": rid, "approve": False})
    expect(denied.get("ok"), "the operator denies", denied)
    r = await asyncio.wait_for(call, LIMIT)
    expect(r.is_error and r.structured_content["error"] == "policy_denied",
           "the denial ends the call", r.model_dump(mode="json"))
    passed("approval_decline")


async def vocabulary_decline(session, operator, asked):
    """A vendor's safety check waits for a person inside the call: announced the same way."""
    call = asyncio.ensure_future(session.call_tool("openai_computer", {
        "type": "computer_call", "call_id": "c9", "action": {"type": "move", "x": 9, "y": 9},
        "pending_safety_checks": [{"id": "sc1", "code": "malicious_instructions",
                                   "message": "check this"}]}))
    requested = await operator.event("safety.confirmation_requested", tool="batch.execute")
    rid = requested["request_id"]
    notice = await operator.event("safety.confirmation_notice", rid)
    expect(notice["answer"] == "decline", "the declined announcement is recorded", notice)
    expect(asked and asked[-1].url == f"{operator.base}/#approval={rid}",
           "URL mode to the console's page for the request", [a.url for a in asked])
    expect(not call.done(), "the vendor call still waits")
    denied = await operator.rpc("session.confirm", {"request_id": rid, "approve": False})
    expect(denied.get("ok"), "the operator denies", denied)
    r = await asyncio.wait_for(call, LIMIT)
    expect(r.is_error and "policy_denied" in json.dumps(r.model_dump(mode="json")),
           "the denial ends the vendor call", r.model_dump(mode="json"))
    passed("vocabulary_decline")


async def governed_decline(session, operator, asked):
    """A governed action pending the operator is announced too; the preview answers once
    the elicitation is answered, and the approval stays pending on the operator channel."""
    sid = structured(await session.call_tool("start_session", {"objective": "governed"}),
                     "start_session")["session"]["sessionId"]
    before = len(asked)
    preview = structured(await session.call_tool("preview_action", {
        "session_id": sid, "action_id": "g1", "tool": "keyboard_combo",
        "arguments": {"keys": ["win", "r"]}, "mode": "foreground"}), "preview_action")
    expect(preview["policy"]["decision"] == "confirm", "the preview needs a person", preview)
    expect(len(asked) == before + 1, "one elicitation for the pending approval", len(asked))
    p = asked[-1]
    expect(p.mode == "url" and p.url == f"{operator.base}/#approval={sid}/g1",
           "URL mode to the console's page for the approval", p.model_dump(mode="json"))
    expect("keyboard" in p.message and "approves nothing" in p.message, "what waits", p.message)
    notice = await operator.event("safety.confirmation_notice", f"{sid}/g1")
    expect(notice["answer"] == "decline", "the decline is recorded", notice)
    r = await operator.client.get(f"{operator.base}/approvals")
    pending = [a for a in r.json().get("approvals", r.json()) if a.get("actionId") == "g1"]
    expect(pending and pending[0]["status"] == "pending", "the approval is still pending",
           r.json())
    passed("governed_decline")


async def approval_accept(session, operator):
    call = asyncio.ensure_future(session.call_tool(*PARK))
    requested = await operator.event("safety.confirmation_requested",
                                     tool="keyboard.combo")
    rid = requested["request_id"]
    notice = await operator.event("safety.confirmation_notice", rid)
    expect(notice["outcome"] == "acknowledged", "an accept is only an acknowledgement", notice)
    pending = await operator.pending()
    expect(pending and pending["request_id"] == rid, "accepting approved nothing", pending)
    r = await asyncio.wait_for(call, LIMIT)
    expect(r.is_error and r.structured_content["error"] == "confirmation_expired",
           "nobody approved it on the operator channel: it expired", r.model_dump(mode="json"))
    resolved = await operator.event("safety.confirmation_expired", rid)
    expect(resolved["request_id"] == rid, "the trail says it expired", resolved)
    passed("approval_accept")


async def approval_unanswered(session, operator, release):
    """The operator decides while the host's prompt is still open: the call answers the
    approved action's result, and the prompt is recorded as never answered."""
    call = asyncio.ensure_future(session.call_tool(*PARK))
    requested = await operator.event("safety.confirmation_requested",
                                     tool="keyboard.combo")
    rid = requested["request_id"]
    approved = await operator.rpc("session.confirm", {"request_id": rid, "approve": True})
    expect(approved.get("ok"), "the operator approves", approved)
    body = structured(await asyncio.wait_for(call, LIMIT), "the approved call")
    expect(body.get("keys") == ["win", "r"], "the approved action's own result", body)
    notice = await operator.event("safety.confirmation_notice", rid)
    expect(notice["outcome"] == "declined_or_unavailable" and notice["answer"] == "no_answer",
           "an unanswered prompt is recorded as such", notice)
    release.set()
    passed("approval_unanswered")


async def operator_base(errlog_path):
    deadline = time.monotonic() + LIMIT
    prefix = "computer-control: operator channel listening on "
    while time.monotonic() < deadline:
        with open(errlog_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(prefix):
                    return line[len(prefix):].strip()
        await asyncio.sleep(0.05)
    raise Check("the operator channel never listened")


async def run(binary, directory, phase):
    config = os.path.join(directory, f"config-{phase}.json")
    with open(config, "w", encoding="utf-8") as f:
        json.dump({"http": {"token": AGENT, "operator_token": OPERATOR},
                   "safety": {"confirm_timeout_s": 8}}, f)
    params = StdioServerParameters(
        command=binary,
        args=["serve", "--transport", "mcp", "--platform", "virtual", "--operator-listen",
              "127.0.0.1:0", "--config", config, "--journal",
              os.path.join(directory, f"journal-{phase}.db")],
        env={"COMPUTER_CONTROL_LOG": "warn", "XDG_RUNTIME_DIR": directory,
             "XDG_STATE_HOME": directory, "PATH": os.environ.get("PATH", "")},
    )
    errlog_path = os.path.join(directory, f"stderr-{phase}.log")
    asked = []

    async def decline(context, p):
        asked.append(p)
        return types.ElicitResult(action="decline")

    async def accept(context, p):
        asked.append(p)
        return types.ElicitResult(action="accept")

    release = asyncio.Event()

    async def hold(context, p):
        asked.append(p)
        await release.wait()
        return types.ElicitResult(action="accept")

    callback = {"plain": None, "decline": decline, "accept": accept, "hold": hold}[phase]
    with open(errlog_path, "w", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, elicitation_callback=callback) as session:
                await session.initialize()
                operator = Operator(await operator_base(errlog_path))
                try:
                    if phase == "plain":
                        await every_tool(session, operator)
                        await progress(session)
                        await cancel(session, operator)
                        await approval_no_callback(session, operator)
                    elif phase == "decline":
                        await approval_decline(session, operator, asked)
                        await vocabulary_decline(session, operator, asked)
                        await governed_decline(session, operator, asked)
                    elif phase == "accept":
                        await approval_accept(session, operator)
                    else:
                        await approval_unanswered(session, operator, release)
                finally:
                    await operator.close()


async def run_http(binary, directory):
    """The decline scenario over Streamable HTTP (`/mcp` of `--transport http`, whose own
    port serves the console): the elicitation travels on the call's stream."""
    config = os.path.join(directory, "config-http.json")
    with open(config, "w", encoding="utf-8") as f:
        json.dump({"http": {"token": AGENT, "operator_token": OPERATOR},
                   "safety": {"confirm_timeout_s": 8}}, f)
    errlog_path = os.path.join(directory, "stderr-http.log")
    with open(errlog_path, "w", encoding="utf-8") as errlog:
        proc = await asyncio.create_subprocess_exec(
            binary, "serve", "--transport", "http", "--port", "0", "--platform", "virtual",
            "--config", config, "--journal", os.path.join(directory, "journal-http.db"),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=errlog,
            env={"COMPUTER_CONTROL_LOG": "warn", "XDG_RUNTIME_DIR": directory,
                 "XDG_STATE_HOME": directory, "PATH": os.environ.get("PATH", "")})
    try:
        base = await listening(errlog_path, "computer-control: http listening on ")
        asked = []

        async def decline(context, p):
            asked.append(p)
            return types.ElicitResult(action="decline")

        headers = {"Authorization": f"Bearer {AGENT}"}
        timeout = httpx2.Timeout(30.0, read=300.0)
        async with httpx2.AsyncClient(headers=headers, timeout=timeout) as client:
            async with streamable_http_client(f"{base}/mcp", http_client=client) as (read, write):
                async with ClientSession(read, write, elicitation_callback=decline) as session:
                    await session.initialize()
                    operator = Operator(base)
                    try:
                        await approval_decline(session, operator, asked)
                    finally:
                        await operator.close()
        print("PASS approval_decline_over_http", flush=True)
    finally:
        proc.terminate()
        await proc.wait()


async def listening(errlog_path, prefix):
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        with open(errlog_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(prefix):
                    return line[len(prefix):].strip()
        await asyncio.sleep(0.05)
    raise Check(f"never printed {prefix!r}")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    for phase in ("plain", "decline", "accept", "hold"):
        asyncio.run(run(argv[1], argv[2], phase))
    asyncio.run(run_http(argv[1], argv[2]))
    print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
