"""Drives computer-control's governed tools with the official MCP Python SDK.

Run by tests/mcp_sdk.rs, once per endpoint:

  governed_flow.py stdio BINARY JOURNAL
      `serve --transport mcp` over stdio (the host's principal, `--principal-id`);
      a second stdio server on the same journal, with another principal, owns the
      foreign session.
  governed_flow.py http URL TOKEN PRINCIPAL OTHER_TOKEN OTHER_PRINCIPAL
      Streamable HTTP at URL (`--transport mcp-http`, or `/mcp` under
      `--transport http`); TOKEN and OTHER_TOKEN are bearer tokens whose identities
      are PRINCIPAL and OTHER_PRINCIPAL, so OTHER_TOKEN's sessions are foreign to
      TOKEN.

Each scenario prints `PASS <name>`; the first failed check raises, so the process
exits non-zero with the reason on stderr.
"""

import asyncio
import base64
import contextlib
import datetime
import hashlib
import json
import sys

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

EXPECTED_ERROR_KEYS = {"error", "message", "details"}


class Check(Exception):
    """A failed expectation."""


def expect(cond, what, got=None):
    if not cond:
        raise Check(f"{what}: {json.dumps(got, default=str)[:2000]}")


def passed(name):
    print(f"PASS {name}", flush=True)


async def ok(session, name, args):
    """The structured result of a successful call."""
    r = await session.call_tool(name, args)
    expect(not r.is_error, f"{name} succeeds", r.model_dump(mode="json"))
    expect(isinstance(r.structured_content, dict), f"{name} has structuredContent")
    return r.structured_content


async def refused(session, name, args, code):
    """A call that must fail with `code`, on the wire as GOVERNANCE.md says: isError
    and `{error, message, details}` as structured content and as text."""
    r = await session.call_tool(name, args)
    dump = r.model_dump(mode="json")
    expect(r.is_error is True, f"{name} is an error ({code})", dump)
    err = r.structured_content
    expect(isinstance(err, dict) and set(err) == EXPECTED_ERROR_KEYS,
           f"{name}: structured error is {{error, message, details}}", dump)
    expect(err["error"] == code, f"{name}: error code {code}", err)
    expect(isinstance(err["message"], str) and err["message"], f"{name}: a message", err)
    expect(isinstance(err["details"], dict), f"{name}: details is an object", err)
    texts = [c.text for c in r.content if getattr(c, "type", None) == "text"]
    expect(any(json.loads(t) == err for t in texts), f"{name}: the same error as text", dump)
    return err


def now_rfc3339():
    t = datetime.datetime.now(datetime.timezone.utc)
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def value_digest(value):
    return "sha256:" + hashlib.sha256(value.encode("utf-8")).hexdigest()


def find(node, role, name):
    if node.get("role") == role and node.get("name") == name:
        return node
    for child in node.get("children") or []:
        hit = find(child, role, name)
        if hit:
            return hit
    return None


async def form_target(session):
    """The form window's evidence and the centre of its Submit button (plain tools)."""
    windows = await ok(session, "window_list", {})
    form = next((w for w in windows["windows"] if w["app_id"] == "cc-form"), None)
    expect(form is not None, "the form window is listed", windows)
    snap = await ok(session, "a11y_snapshot", {"window": form["id"], "level": "full"})
    button = find(snap["tree"], "button", "Submit")
    expect(button is not None, "the Submit button is in the snapshot", snap)
    left, top, right, bottom = button["rect"]
    target = {
        "platform": "virtual", "appId": "cc-form", "pid": form["pid"],
        "windowId": form["id"], "bounds": form["rect"], "observationId": "obs-1",
        "confidence": 1, "capturedAt": now_rfc3339(),
    }
    return target, ((left + right) // 2, (top + bottom) // 2)


async def lease(session, sid, budget, ttl_ms):
    out = await ok(session, "acquire_control_lease", {
        "session_id": sid, "kind": "exclusive", "mode": "foreground",
        "ttl_ms": ttl_ms, "action_budget": budget,
    })
    return out["lease"]["leaseId"]


def click(sid, action_id, lease_id, target, at):
    return {
        "session_id": sid, "action_id": action_id, "lease_id": lease_id,
        "tool": "pointer_click", "arguments": {"x": at[0], "y": at[1]},
        "mode": "foreground", "target": target,
        "postcondition": {"kind": "ui_element", "role": "statusbar", "label": "Status",
                          "exists": True, "valueDigest": value_digest("Submitted: ")},
    }


async def governed_flow(session, principal, foreign_sid):
    """Every scenario, on one connected session acting for `principal`."""
    tools = await session.list_tools()
    names = {t.name for t in tools.tools}
    for expected in ("pointer_click", "start_session", "execute_action"):
        expect(expected in names, f"{expected} is listed", sorted(names))
    expect(not any("confirm" in n or "approv" in n for n in names),
           "no confirmation or approval tool", sorted(names))
    for t in tools.tools:
        expect(t.input_schema.get("type") == "object", f"{t.name}: an input schema", t.input_schema)
        expect((t.output_schema or {}).get("type") == "object", f"{t.name}: an output schema",
               t.output_schema)
        expect(t.annotations is not None, f"{t.name}: annotations")
    hints = {t.name: t.annotations for t in tools.tools}
    for observer in ("screen_capture", "a11y_snapshot", "window_list", "get_session"):
        expect(hints[observer].read_only_hint is True, f"{observer} is read-only", hints[observer])
    for actor in ("pointer_click", "keyboard_type", "execute_action"):
        expect(hints[actor].read_only_hint is False, f"{actor} is not read-only", hints[actor])
    expect(hints["execute_action"].destructive_hint is True, "execute_action may destroy")

    # A capture is an image content block; its structured result keeps the metadata
    # (the SDK validated it against the output schema).
    shot = await session.call_tool("screen_capture", {"format": "png", "scale": 0.25})
    expect(not shot.is_error, "screen_capture succeeds", shot.model_dump(mode="json"))
    images = [c for c in shot.content if getattr(c, "type", None) == "image"]
    expect(len(images) == 1 and images[0].mime_type == "image/png", "one PNG image block",
           [c.type for c in shot.content])
    expect(base64.b64decode(images[0].data)[:8] == b"\x89PNG\r\n\x1a\n", "PNG bytes")
    expect("data_url" not in shot.structured_content and shot.structured_content["format"] == "png",
           "metadata only in structuredContent", shot.structured_content)
    passed("tool_list_and_image")

    # The vendors' vocabularies, as the official client sees them: each answer's
    # screenshot is one PNG image block, the vendor's item the structured content
    # (validated by the SDK against the tool's output schema).
    for name, args, kind in (
        ("anthropic_computer", {"action": "screenshot"}, None),
        ("openai_computer", {"type": "computer_call", "call_id": "c1",
                             "actions": [{"type": "screenshot"}]}, "computer_call_output"),
        ("gemini_computer", {"name": "take_screenshot", "args": {}}, None),
    ):
        r = await session.call_tool(name, args)
        dump = r.model_dump(mode="json")
        expect(not r.is_error, f"{name} succeeds", dump)
        images = [c for c in r.content if getattr(c, "type", None) == "image"]
        expect(len(images) == 1 and base64.b64decode(images[0].data)[:8] == b"\x89PNG\r\n\x1a\n",
               f"{name}: one PNG image block", [c.type for c in r.content])
        expect(isinstance(r.structured_content, dict), f"{name}: structured content", dump)
        if kind:
            expect(r.structured_content["type"] == kind, f"{name}: {kind}", r.structured_content)
    bad = await session.call_tool("anthropic_computer", {"action": "fly"})
    expect(bad.is_error is True and "invalid_arguments" in bad.content[0].text,
           "a bad vendor call is the vendor's error answer", bad.model_dump(mode="json"))
    passed("vendor_vocabularies")

    # The principal is the transport's, never an argument.
    await refused(session, "start_session", {"principal_id": "mallory"}, "invalid_arguments")
    passed("principal_not_an_argument")

    target, at = await form_target(session)
    started = await ok(session, "start_session", {"objective": "submit the form"})
    sid = started["session"]["sessionId"]
    expect(started["session"]["principalId"] == principal,
           "the session belongs to the caller's principal", started)

    # A governed action with a postcondition: committed, verified by read-back.
    lease_id = await lease(session, sid, budget=1, ttl_ms=60_000)
    first = (await ok(session, "execute_action", click(sid, "a1", lease_id, target, at)))["receipt"]
    expect(first["status"] == "committed", "the receipt is committed", first)
    expect(first["result"]["verification"]["satisfied"] is True,
           "the postcondition is satisfied", first)
    passed("committed_and_verified")

    # Replay: the same action id and arguments answer the stored receipt, no effect.
    again = (await ok(session, "execute_action", click(sid, "a1", lease_id, target, at)))["receipt"]
    expect(again == first, "the replay answers the same receipt", {"first": first, "again": again})
    events = await ok(session, "get_session_events", {"session_id": sid})
    started_a1 = [e for e in events["events"]
                  if e["type"] == "action.started" and e.get("actionId") == "a1"]
    expect(len(started_a1) == 1, "a1 was performed once", events["events"])
    passed("replay")

    # The same action id with other arguments.
    other = click(sid, "a1", lease_id, target, (at[0] + 1, at[1]))
    await refused(session, "execute_action", other, "action_id_conflict")
    passed("action_id_conflict")

    # The lease's one action is spent, and a spent lease is revoked with it.
    err = await refused(session, "execute_action", click(sid, "a2", lease_id, target, at),
                        "lease_revoked")
    expect(err["details"].get("reason") == "action_budget_exhausted",
           "the spent budget is the reason", err)
    passed("budget_exhausted")

    # An expired lease (1 ms TTL; the wait only makes sure it has passed).
    short = await lease(session, sid, budget=5, ttl_ms=1)
    await asyncio.sleep(0.05)
    target, at = await form_target(session)
    await refused(session, "execute_action", click(sid, "a3", short, target, at), "lease_expired")
    passed("lease_expired")

    # A session of another principal.
    await refused(session, "get_session", {"session_id": foreign_sid}, "principal_mismatch")
    await refused(session, "acquire_control_lease", {
        "session_id": foreign_sid, "kind": "cooperative", "mode": "background",
        "ttl_ms": 60_000, "action_budget": 1,
    }, "principal_mismatch")
    passed("principal_mismatch")

    # A high-risk plain action waits for a person: a normal result (validated by the SDK
    # against the tool's output schema), never an error, and no tool to approve it.
    pending = await session.call_tool("keyboard_combo", {"keys": ["win", "r"]})
    expect(not pending.is_error, "awaiting_confirmation is a normal result",
           pending.model_dump(mode="json"))
    body = pending.structured_content
    expect(body["status"] == "awaiting_confirmation" and body["request_id"],
           "awaiting_confirmation with a request id", body)
    passed("awaiting_confirmation")


def stdio_params(binary, journal, principal):
    return StdioServerParameters(
        command=binary,
        args=["serve", "--transport", "mcp", "--platform", "virtual",
              "--journal", journal, "--principal-id", principal],
        env={"COMPUTER_CONTROL_LOG": "warn", "COMPUTER_CONTROL_CONFIG": ""},
    )


@contextlib.asynccontextmanager
async def stdio_session(binary, journal, principal):
    async with stdio_client(stdio_params(binary, journal, principal)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


@contextlib.asynccontextmanager
async def http_session(url, token):
    headers = {"Authorization": f"Bearer {token}"}
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


async def run_stdio(binary, journal):
    # The foreign session first: each server recovers the journal when it starts, so
    # the other principal's server is done before ours starts.
    async with stdio_session(binary, journal, "other-user") as other:
        foreign = await ok(other, "start_session", {"objective": "someone else's"})
    foreign_sid = foreign["session"]["sessionId"]
    expect(foreign["session"]["principalId"] == "other-user", "the foreign principal", foreign)
    async with stdio_session(binary, journal, "local-user") as session:
        await governed_flow(session, "local-user", foreign_sid)


async def run_http(url, token, principal, other_token, other_principal):
    async with http_session(url, other_token) as other:
        foreign = await ok(other, "start_session", {"objective": "someone else's"})
    foreign_sid = foreign["session"]["sessionId"]
    expect(foreign["session"]["principalId"] == other_principal,
           "the other token acts for its own identity", foreign)
    async with http_session(url, token) as session:
        await governed_flow(session, principal, foreign_sid)


def main(argv):
    if len(argv) == 4 and argv[1] == "stdio":
        asyncio.run(run_stdio(argv[2], argv[3]))
    elif len(argv) == 7 and argv[1] == "http":
        asyncio.run(run_http(*argv[2:7]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
