//! The governed tools (GOVERNANCE.md Part A), one table: each tool's name, what a host
//! shows for it, what it changes and the members of its result. The kernel dispatches
//! these names, MCP lists them with their annotations and output schemas, and the fuzz
//! checks draw from them; none keeps a list of its own. Approval is deliberately
//! absent: it is never a model tool.

/// What calling a governed tool changes: MCP's hints follow from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changes {
    /// Nothing, on the desktop or in the journal (read-only, may be repeated).
    Nothing,
    /// Governance state in the journal only (sessions, leases, reservations, the stop).
    Journal,
    /// Deletes journaled sessions (destructive, may be repeated).
    Deletes,
    /// Acts on the desktop (`execute_action`; replaying an action id answers its
    /// receipt without acting again).
    Desktop,
}

/// One governed tool.
#[derive(Debug, Clone, Copy)]
pub struct GovernedTool {
    /// The tool's name, on MCP and the kernel alike (`preview_action`).
    pub name: &'static str,
    /// What a host shows a person beside the name.
    pub title: &'static str,
    /// One line for the tool's description.
    pub summary: &'static str,
    /// What calling it changes.
    pub changes: Changes,
    /// The members of its result (the upstream v8 shapes), documented for output
    /// schemas.
    pub outputs: &'static [(&'static str, &'static str)],
}

/// Every governed tool, in the order they are listed.
pub const GOVERNED_TOOLS: &[GovernedTool] = &[
    GovernedTool {
        name: "start_session",
        title: "Start a governed session",
        summary: "Start a governed session for the host's principal.",
        changes: Changes::Journal,
        outputs: &[("session", "the governed session")],
    },
    GovernedTool {
        name: "get_session",
        title: "Read a governed session",
        summary: "Read a session.",
        changes: Changes::Nothing,
        outputs: &[("session", "the governed session")],
    },
    GovernedTool {
        name: "pause_session",
        title: "Pause a governed session",
        summary: "Pause a running session; the reason is journaled.",
        changes: Changes::Journal,
        outputs: &[("session", "the governed session")],
    },
    GovernedTool {
        name: "resume_session",
        title: "Resume a governed session",
        summary: "Resume a paused session.",
        changes: Changes::Journal,
        outputs: &[("session", "the governed session")],
    },
    GovernedTool {
        name: "stop_session",
        title: "Stop a governed session",
        summary: "Stop a session; its leases are revoked, its reservations cancelled.",
        changes: Changes::Journal,
        outputs: &[("session", "the governed session")],
    },
    GovernedTool {
        name: "get_session_events",
        title: "Export a session's journal",
        summary: "Export the session's hash-chained journal.",
        changes: Changes::Nothing,
        outputs: &[
            ("schema_uri", "the audit export's schema"),
            ("events", "hash-chained session events"),
        ],
    },
    GovernedTool {
        name: "get_execution_capabilities",
        title: "Read what a tool can do here",
        summary: "What a plain tool can do on this backend.",
        changes: Changes::Nothing,
        outputs: &[],
    },
    GovernedTool {
        name: "preview_action",
        title: "Preview a governed action",
        summary: "Preview a governed action: envelope, capability, policy, blocker.",
        changes: Changes::Nothing,
        outputs: &[
            ("envelope", "the action envelope (argsDigest)"),
            ("capability", "what the backend can do"),
            ("policy", "decision, policyDigest, reasons"),
            ("executable", "whether execute_action would proceed"),
            ("blocker", "why not"),
        ],
    },
    GovernedTool {
        name: "execute_action",
        title: "Execute a governed action",
        summary: "Execute a governed action under a control lease; answers its receipt.",
        changes: Changes::Desktop,
        outputs: &[
            ("receipt", "the execution receipt"),
            (
                "replay",
                "whether the receipt was replayed (nothing performed now)",
            ),
            (
                "output",
                "the tool's result when performed now (images as image blocks)",
            ),
        ],
    },
    GovernedTool {
        name: "acquire_control_lease",
        title: "Acquire a control lease",
        summary: "Acquire a control lease (budget, TTL, boundaries).",
        changes: Changes::Journal,
        outputs: &[("lease", "the control lease")],
    },
    GovernedTool {
        name: "release_control_lease",
        title: "Release a control lease",
        summary: "Release a control lease.",
        changes: Changes::Journal,
        outputs: &[("lease", "the control lease")],
    },
    GovernedTool {
        name: "reserve_target",
        title: "Reserve a target",
        summary: "Reserve a target (advisory; never authorizes a mutation).",
        changes: Changes::Journal,
        outputs: &[("reservation", "the target reservation")],
    },
    GovernedTool {
        name: "release_target_reservation",
        title: "Release a target reservation",
        summary: "Release a target reservation.",
        changes: Changes::Journal,
        outputs: &[("reservation", "the target reservation")],
    },
    GovernedTool {
        name: "emergency_stop",
        title: "Emergency stop",
        summary: "Engage the panic and revoke every active lease.",
        changes: Changes::Journal,
        outputs: &[],
    },
    GovernedTool {
        name: "get_follow_ups",
        title: "Read follow-up instructions",
        summary: "Read the session's follow-up instructions after a cursor.",
        changes: Changes::Nothing,
        outputs: &[
            (
                "follow_ups",
                "the session's follow-up instructions after the cursor",
            ),
            ("next_sequence", "the cursor for the next page"),
        ],
    },
    GovernedTool {
        name: "submit_follow_up",
        title: "Add a follow-up instruction",
        summary: "Add a follow-up instruction to a live session.",
        changes: Changes::Journal,
        outputs: &[("follow_up", "the follow-up as stored")],
    },
    GovernedTool {
        name: "delete_session",
        title: "Delete a session's journal",
        summary: "Delete a terminal session's journal (confirm must be true).",
        changes: Changes::Deletes,
        outputs: &[("deletion", "what was deleted")],
    },
    GovernedTool {
        name: "prune_sessions",
        title: "Delete old sessions",
        summary: "Delete the caller's terminal sessions last updated before a time (confirm must be true).",
        changes: Changes::Deletes,
        outputs: &[("deletions", "one deletion per pruned session")],
    },
];

/// The governed tool called `name`.
pub fn governed_tool(name: &str) -> Option<&'static GovernedTool> {
    GOVERNED_TOOLS.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eighteen_tools_named_once_and_described() {
        assert_eq!(GOVERNED_TOOLS.len(), 18);
        for t in GOVERNED_TOOLS {
            let named = GOVERNED_TOOLS.iter().filter(|o| o.name == t.name).count();
            assert_eq!(named, 1, "{}", t.name);
            assert_eq!(governed_tool(t.name).map(|f| f.title), Some(t.title));
            assert!(!t.title.is_empty() && !t.summary.is_empty(), "{}", t.name);
        }
        assert!(governed_tool("approve").is_none());
    }
}
