//! One kernel, several principals: `Governance::for_principal` acts for another
//! identity (an HTTP token's) on the same journal connection; each principal sees
//! only its own sessions, and an empty principal is refused.

use cc_contract::ErrorCode;
use cc_desktop::VirtualDesktop;
use cc_engine::Engine;
use cc_engine::config::ConfigStack;
use cc_governance::Governance;
use serde_json::json;

#[test]
fn another_principal_shares_the_journal_but_not_the_sessions() {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = Engine::new(Box::new(VirtualDesktop::default()), ConfigStack::new());
    let host = Governance::open(engine, &dir.path().join("j.db"), "local-user").expect("open");
    let other = host.for_principal("agent-b").expect("another principal");
    assert_eq!(other.principal(), "agent-b");
    assert_eq!(host.principal(), "local-user");

    let started = other
        .call("start_session", &json!({"objective": "b's"}))
        .expect("a governed tool")
        .expect("started");
    let sid = started["session"]["sessionId"].clone();
    assert_eq!(started["session"]["principalId"], "agent-b");

    let foreign = host
        .call("get_session", &json!({"session_id": sid}))
        .expect("a governed tool")
        .expect_err("another principal's session");
    assert_eq!(foreign.error, ErrorCode::PrincipalMismatch);
    let own = other
        .call("get_session", &json!({"session_id": sid}))
        .expect("a governed tool")
        .expect("its own session");
    assert_eq!(own["session"]["sessionId"], sid);

    let empty = host.for_principal("").err().expect("refused");
    assert_eq!(empty.error, ErrorCode::InvalidArguments);
}
