//! Two halves of an encoding stage on two cores, for the stages called one by one (the
//! default image takes one pass instead, `pipeline.rs`). Each stage splits into halves
//! that need nothing from each other, so on two cores the wall time nearly halves. On
//! one core (or for a small image) the halves run one after the other, as fast as the
//! unsplit stage.

use std::sync::{Mutex, OnceLock};

/// Below this much work (bytes of the stage's input) starting a thread, about 30–50 µs,
/// would cost more than it saves.
pub(crate) const MIN_SPLIT: usize = 256 * 1024;

pub(super) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Runs `a` here and `b` on a second thread when the work (bytes of the stage's input)
/// is worth it and the machine has two cores, else both here (also when no thread can
/// be started). A panic in either reaches the caller.
pub(crate) fn both<A: Send, B: Send>(
    work: usize,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if work < MIN_SPLIT || cores() < 2 {
        return (a(), b());
    }
    let slot = Mutex::new(Some(b));
    let take = || slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .name("cc-encode".into())
            .spawn_scoped(s, || take().map(|b| b()));
        let ra = a();
        let rb = match spawned {
            Ok(h) => match h.join() {
                Ok(rb) => rb,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(_) => None,
        };
        // Not started (or it found `b` taken, which cannot happen): run it here.
        let rb = match rb {
            Some(rb) => rb,
            None => match take() {
                Some(b) => b(),
                None => unreachable!("the second half ran nowhere"),
            },
        };
        (ra, rb)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_halves_run_and_keep_their_order() {
        for work in [0, MIN_SPLIT, 10 * MIN_SPLIT] {
            let (a, b) = both(work, || 1, || "two");
            assert_eq!((a, b), (1, "two"));
        }
    }

    #[test]
    #[should_panic(expected = "second half")]
    fn a_panic_in_the_second_half_reaches_the_caller() {
        let _ = both(10 * MIN_SPLIT, || (), || -> () { panic!("second half") });
    }
}
