//! A per-thread flag set for the length of a scope: how a caller's thread tells the
//! engine something about the caller without passing it through every call between
//! (which caller writes its events with its answer, which caller is looked for).

use std::cell::Cell;
use std::thread::LocalKey;

/// Sets a thread-local flag until dropped, then puts back what it was (scopes nest;
/// tested through [`crate::Looking`]).
pub(crate) struct FlagScope {
    flag: &'static LocalKey<Cell<bool>>,
    before: bool,
}

impl FlagScope {
    /// Sets `flag` on the current thread.
    pub(crate) fn enter(flag: &'static LocalKey<Cell<bool>>) -> FlagScope {
        FlagScope {
            flag,
            before: flag.with(|f| f.replace(true)),
        }
    }
}

impl Drop for FlagScope {
    fn drop(&mut self) {
        let before = self.before;
        self.flag.with(|f| f.set(before));
    }
}
