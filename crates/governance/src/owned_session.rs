//! Where every governed operation on a session starts: the session, loaded as its own
//! principal's (another principal's session is refused, never shown), and whether it
//! may act. The lifecycle that changes a session's state is `sessions.rs`.

use cc_contract::{ErrorCode, Session, SessionState};
use rusqlite::params;
use serde_json::json;

use crate::error::{GovResult, fail, fail_with};
use crate::store::get_one;

/// Loads a session and checks it belongs to `principal` (`session_not_found`,
/// `principal_mismatch`). Every governed operation starts here.
pub(crate) fn load_owned(
    tx: &rusqlite::Connection,
    session_id: &str,
    principal: &str,
) -> GovResult<Session> {
    let session: Session = get_one(
        tx,
        "SELECT data FROM sessions WHERE session_id = ?1",
        params![session_id],
    )?
    .ok_or_else(|| {
        fail(
            ErrorCode::SessionNotFound,
            format!("no session {session_id}"),
        )
    })?;
    if session.principal_id != principal {
        return Err(fail(
            ErrorCode::PrincipalMismatch,
            format!("session {session_id} belongs to another principal"),
        ));
    }
    Ok(session)
}

/// `session_not_running` unless the session is `running`.
pub(crate) fn require_running(session: &Session) -> GovResult<()> {
    if session.state != SessionState::Running {
        return Err(fail_with(
            ErrorCode::SessionNotRunning,
            format!(
                "session {} is {}",
                session.session_id,
                session.state.as_str()
            ),
            json!({"state": session.state.as_str()}),
        ));
    }
    Ok(())
}
