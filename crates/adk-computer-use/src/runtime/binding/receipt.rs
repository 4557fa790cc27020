//! Receipt binding. The digest is the strongest binding available: `argsDigest` is what
//! the approval was given for, so a receipt carrying another digest describes other work
//! even when every id matches.

use cc_contract::ExecutionReceipt;
use cc_contract::sha256::is_sha256_hex;

use super::{mismatch, require_eq};
use crate::bound::{BoundReceipt, FreshEnvelope};
use crate::error::{ComputerUseError, ResponseObject};

const OBJECT: ResponseObject = ResponseObject::Receipt;

/// Binds `receipt` to `envelope`.
///
/// Refused unless `sessionId` and `actionId` equal the envelope's and `actionDigest` is a
/// well-formed digest equal to its `argsDigest`. An empty or malformed digest is a
/// mismatch, never "unavailable". Whether the action's effect happened is a separate
/// question: see [`crate::verification`].
pub fn validate_receipt(
    receipt: &ExecutionReceipt,
    envelope: &FreshEnvelope,
) -> Result<BoundReceipt, ComputerUseError> {
    rebind_receipt(receipt, envelope.envelope())
}

/// The checks of [`validate_receipt`] against an envelope that need not be fresh any
/// more: the graph's `verify` node rebinds a checkpointed receipt after a restart, when
/// the envelope's window may have closed since the (fresh) execution. Freshness governs
/// the mutation, not the reading of its receipt.
pub(crate) fn rebind_receipt(
    receipt: &ExecutionReceipt,
    request: &cc_contract::ActionEnvelope,
) -> Result<BoundReceipt, ComputerUseError> {
    require_eq(
        OBJECT,
        "sessionId",
        &request.session_id,
        &receipt.session_id,
    )?;
    require_eq(OBJECT, "actionId", &request.action_id, &receipt.action_id)?;
    if !is_sha256_hex(&receipt.action_digest) {
        return Err(mismatch(
            OBJECT,
            "actionDigest",
            Some(&request.args_digest),
            Some(&receipt.action_digest),
        ));
    }
    require_eq(
        OBJECT,
        "actionDigest",
        &request.args_digest,
        &receipt.action_digest,
    )?;
    Ok(BoundReceipt {
        receipt: receipt.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::binding::fixtures::{T0, clock, envelope, receipt};
    use crate::runtime::binding::validate_envelope_freshness;
    use cc_contract::sha256_hex;

    fn fresh() -> FreshEnvelope {
        validate_envelope_freshness(&envelope(), clock(T0 + 2)).expect("fresh")
    }

    fn field_of(result: Result<BoundReceipt, ComputerUseError>) -> &'static str {
        match result {
            Err(ComputerUseError::IdentityMismatch {
                object: ResponseObject::Receipt,
                field,
                ..
            }) => field,
            other => panic!("expected a receipt identity mismatch, got {other:?}"),
        }
    }

    #[test]
    fn well_bound_receipt_is_accepted() {
        let bound = validate_receipt(&receipt(), &fresh()).expect("bound");
        assert_eq!(bound.receipt(), &receipt());
    }

    #[test]
    fn receipt_of_another_action_is_rejected() {
        let mut other = receipt();
        other.action_id = "action-0002".into();
        assert_eq!(field_of(validate_receipt(&other, &fresh())), "actionId");
    }

    #[test]
    fn receipt_of_another_session_is_rejected() {
        let mut other = receipt();
        other.session_id = "session-0002".into();
        assert_eq!(field_of(validate_receipt(&other, &fresh())), "sessionId");
    }

    #[test]
    fn receipt_of_another_digest_is_rejected() {
        // Every id matches; only the work differs.
        let mut other = receipt();
        other.action_digest = sha256_hex("right_click on Delete");
        assert_eq!(field_of(validate_receipt(&other, &fresh())), "actionDigest");
    }

    #[test]
    fn empty_or_malformed_digest_is_a_mismatch() {
        let upper = envelope().args_digest.to_uppercase();
        for bad in ["", "unavailable", "sha256:fixture", upper.as_str()] {
            let mut other = receipt();
            other.action_digest = bad.to_owned();
            assert_eq!(
                field_of(validate_receipt(&other, &fresh())),
                "actionDigest",
                "{bad}"
            );
        }
    }
}
