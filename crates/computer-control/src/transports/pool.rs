//! An elastic thread pool: a job never waits for another job to finish, because a new
//! thread is started whenever no idle one is reserved. Threads idle for 30 s exit.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

type Job = Box<dyn FnOnce() + Send + 'static>;

/// The pool.
pub struct Pool {
    tx: Sender<Job>,
    rx: Arc<Mutex<Receiver<Job>>>,
    idle: Arc<AtomicUsize>,
    running: Arc<Running>,
}

/// Jobs submitted and not finished, with a condition to wait for none.
#[derive(Default)]
struct Running {
    count: Mutex<usize>,
    none: Condvar,
}

impl Running {
    fn add(&self) {
        *self.count.lock().unwrap_or_else(|p| p.into_inner()) += 1;
    }

    fn done(&self) {
        let mut n = self.count.lock().unwrap_or_else(|p| p.into_inner());
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.none.notify_all();
        }
    }

    fn get(&self) -> usize {
        *self.count.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait_none(&self) {
        let mut n = self.count.lock().unwrap_or_else(|p| p.into_inner());
        while *n > 0 {
            n = self.none.wait(n).unwrap_or_else(|p| p.into_inner());
        }
    }
}

const IDLE_EXIT: Duration = Duration::from_secs(30);

impl Pool {
    /// An empty pool.
    pub fn new() -> Pool {
        let (tx, rx) = channel();
        Pool {
            tx,
            rx: Arc::new(Mutex::new(rx)),
            idle: Arc::new(AtomicUsize::new(0)),
            running: Arc::new(Running::default()),
        }
    }

    /// Runs `job` on a pool thread, at once.
    pub fn execute(&self, job: impl FnOnce() + Send + 'static) {
        self.running.add();
        let mut job: Job = Box::new(job);
        let reserved = self
            .idle
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if reserved {
            match self.tx.send(job) {
                Ok(()) => return,
                Err(e) => job = e.0,
            }
        }
        let (rx, idle, running) = (self.rx.clone(), self.idle.clone(), self.running.clone());
        let first = job;
        let spawned = std::thread::Builder::new()
            .name("cc-rpc".into())
            .spawn(move || {
                first();
                running.done();
                loop {
                    idle.fetch_add(1, Ordering::SeqCst);
                    let next = {
                        let guard = rx.lock().unwrap_or_else(|p| p.into_inner());
                        guard.recv_timeout(IDLE_EXIT)
                    };
                    match next {
                        Ok(job) => {
                            job();
                            running.done();
                        }
                        Err(RecvTimeoutError::Timeout) => {
                            // Leave only if nobody reserved this thread meanwhile.
                            if idle
                                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                                    n.checked_sub(1)
                                })
                                .is_ok()
                            {
                                return;
                            }
                        }
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start a request thread: {e}");
            self.running.done();
        }
    }

    /// Jobs submitted and not finished yet.
    pub fn running(&self) -> usize {
        self.running.get()
    }

    /// Blocks until every job submitted so far has finished.
    pub fn wait_idle(&self) {
        self.running.wait_none();
    }
}

impl Default for Pool {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn a_blocked_job_never_blocks_the_next() {
        let pool = Pool::new();
        let (gate_tx, gate_rx) = channel::<()>();
        let (done_tx, done_rx) = channel();
        pool.execute(move || {
            let _ = gate_rx.recv();
        });
        for i in 0..5 {
            let d = done_tx.clone();
            pool.execute(move || {
                let _ = d.send(i);
            });
        }
        let mut got: Vec<i32> = (0..5)
            .map(|_| done_rx.recv_timeout(Duration::from_secs(5)).unwrap())
            .collect();
        got.sort();
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
        // The others may still be finishing their bookkeeping; the blocked one runs.
        assert!(pool.running() >= 1, "the blocked job still runs");
        gate_tx.send(()).unwrap();
        pool.wait_idle();
        assert_eq!(pool.running(), 0);
    }
}
