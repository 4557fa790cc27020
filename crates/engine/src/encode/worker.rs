//! Threads kept for the second core. Starting a thread for each image cost about
//! 0.16 ms on a virtual machine, and the calling thread had to wait for it to start
//! and end; a kept thread is handed the work instead, and the caller never waits for
//! it to start (the one-pass encoder lets the caller take every band itself).

use std::panic::AssertUnwindSafe;
use std::sync::{Mutex, mpsc};

/// Work for a kept thread.
pub(super) type Job = Box<dyn FnOnce() + Send + 'static>;

/// Kept threads waiting for work, each as the sender of its queue.
static IDLE: Mutex<Vec<mpsc::Sender<Job>>> = Mutex::new(Vec::new());

/// Idle threads kept: one per image encoded at the same time, beyond which a thread
/// ends after its work.
const MAX_IDLE: usize = 2;

/// Runs `job` on a kept thread, started when none is idle. `false` when no thread can
/// be started (the job is dropped without running).
pub(super) fn hand_off(mut job: Job) -> bool {
    loop {
        let idle = IDLE.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match idle {
            Some(queue) => match queue.send(job) {
                Ok(()) => return true,
                // Its thread is gone: try the next.
                Err(mpsc::SendError(back)) => job = back,
            },
            None => return start(job),
        }
    }
}

fn start(job: Job) -> bool {
    let (queue, jobs) = mpsc::channel::<Job>();
    if queue.send(job).is_err() {
        return false;
    }
    std::thread::Builder::new()
        .name("cc-encode".into())
        .spawn(move || {
            while let Ok(job) = jobs.recv() {
                // A panic ends the job, not the thread (the job reports its own failure).
                let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
                let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
                if idle.len() >= MAX_IDLE {
                    return;
                }
                idle.push(queue.clone());
            }
        })
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_on_kept_threads_and_a_panic_does_not_end_them() {
        let (tx, rx) = mpsc::channel();
        for k in 0..5 {
            let tx = tx.clone();
            assert!(hand_off(Box::new(move || {
                if k == 2 {
                    panic!("a job that panics");
                }
                tx.send((k, std::thread::current().name().map(String::from)))
                    .unwrap();
            })));
        }
        let mut got: Vec<_> = (0..4).map(|_| rx.recv().unwrap()).collect();
        got.sort();
        assert_eq!(
            got.iter().map(|g| g.0).collect::<Vec<_>>(),
            vec![0, 1, 3, 4]
        );
        assert!(got.iter().all(|g| g.1.as_deref() == Some("cc-encode")));
    }
}
