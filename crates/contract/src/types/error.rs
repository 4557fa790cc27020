//! Error codes of the governed tools (the structured error that carries one is
//! `contract_error.rs`).

wire_enum! {
    /// Every error code of GOVERNANCE.md ("Errors"), in its order, then two codes only the
    /// upstream server emits (kept so an upstream error decodes).
    pub enum ErrorCode {
        /// The capability cannot act in the requested (background) mode.
        ForegroundRequired = "foreground_required",
        /// A mutating tool was asked to run in shadow mode.
        ShadowMutation = "shadow_mutation",
        /// The target changed, the evidence is too old, or the envelope expired.
        StaleTarget = "stale_target",
        /// Another lease holds the desktop.
        LeaseConflict = "lease_conflict",
        /// The lease is past its expiry.
        LeaseExpired = "lease_expired",
        /// The lease was revoked.
        LeaseRevoked = "lease_revoked",
        /// The lease is not active (released, unknown, or budget exhausted).
        LeaseNotActive = "lease_not_active",
        /// Another agent reserved the target.
        TargetConflict = "target_conflict",
        /// The reservation is not active.
        ReservationNotActive = "reservation_not_active",
        /// Stopped by revocation or emergency stop.
        Interrupted = "interrupted",
        /// A `confirm` decision without a matching grant.
        ApprovalRequired = "approval_required",
        /// The policy denies the action.
        PolicyDenied = "policy_denied",
        /// The action id was reused with another digest.
        ActionIdConflict = "action_id_conflict",
        /// The effect may or may not have happened; never retried.
        Indeterminate = "indeterminate",
        /// The driver failed before any effect.
        ExecutionFailed = "execution_failed",
        /// The postcondition cannot be verified here.
        PostconditionUnavailable = "postcondition_unavailable",
        /// No such session.
        SessionNotFound = "session_not_found",
        /// The session is paused, stopping or terminal.
        SessionNotRunning = "session_not_running",
        /// The caller's principal does not own the object.
        PrincipalMismatch = "principal_mismatch",
        /// Arguments fail validation.
        InvalidArguments = "invalid_arguments",
        /// Upstream only: physical input while injected input cannot be told apart.
        InputAttributionUnavailable = "input_attribution_unavailable",
        /// Deleting a session that is not terminal (an upstream code this server emits too).
        SessionNotTerminal = "session_not_terminal",
        /// A replayed receipt that was `rejected` (upstream answers a replayed
        /// non-committed receipt with its status as the error).
        Rejected = "rejected",
    }
}

impl ErrorCode {
    /// Whether the code is one GOVERNANCE.md lists (and so one this server may emit).
    pub fn is_governance_code(self) -> bool {
        !matches!(
            self,
            ErrorCode::InputAttributionUnavailable
                | ErrorCode::SessionNotTerminal
                | ErrorCode::Rejected
        )
    }
}
