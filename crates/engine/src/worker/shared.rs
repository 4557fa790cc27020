//! The worker behind a lock, with its queue. An action whose caller finds nothing
//! queued runs on the caller's own thread: a hand-off to another thread and back costs
//! two wake-ups, and on an idle machine each wakes a sleeping CPU (tens of
//! microseconds in a virtual machine, more than the action itself). Anything queued
//! runs on the worker thread in order, and nothing runs ahead of it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use super::{Job, Worker};

/// How often the worker thread ticks while no job comes.
const TICK: Duration = Duration::from_millis(20);

/// The worker, its queue, and how many queued jobs have not finished.
pub struct SharedWorker {
    worker: Mutex<Worker>,
    jobs: Sender<Job>,
    /// Jobs sent and not yet finished: while any is, no caller runs ahead of it.
    unfinished: AtomicUsize,
}

impl SharedWorker {
    /// Shares a worker and starts its thread (the queue and the ticks).
    pub fn start(worker: Worker) -> Arc<SharedWorker> {
        let (tx, rx) = std::sync::mpsc::channel();
        let shared = Arc::new(SharedWorker {
            worker: Mutex::new(worker),
            jobs: tx,
            unfinished: AtomicUsize::new(0),
        });
        // The thread holds the worker weakly: it ends with the last engine handle.
        let weak = Arc::downgrade(&shared);
        let spawned = std::thread::Builder::new()
            .name("cc-worker".into())
            .spawn(move || serve(&weak, &rx));
        if let Err(e) = spawned {
            tracing::error!("cannot start the worker thread: {e}");
        }
        shared
    }

    /// Queues a job behind everything queued before; false when the worker is gone.
    pub fn send(&self, job: Job) -> bool {
        self.unfinished.fetch_add(1, Ordering::SeqCst);
        let sent = self.jobs.send(job).is_ok();
        if !sent {
            self.unfinished.fetch_sub(1, Ordering::SeqCst);
        }
        sent
    }

    /// The worker for the caller's own thread, when nothing is queued and nothing runs.
    /// Callers ask while holding the engine's lock, as they do before queueing, so a
    /// job queued under that lock (an approved action) is never overtaken.
    pub fn claim(&self) -> Option<MutexGuard<'_, Worker>> {
        if self.unfinished.load(Ordering::SeqCst) != 0 {
            return None;
        }
        match self.worker.try_lock() {
            Ok(w) => Some(w),
            // A job panicked inside the lock's scope (it was caught; the worker is
            // consistent: everything was released).
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Worker> {
        self.worker.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for SharedWorker {
    /// Nothing stays held once the last engine handle is gone.
    fn drop(&mut self) {
        self.worker
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .release();
    }
}

/// The worker thread: queued jobs in order, and a tick between them.
fn serve(shared: &std::sync::Weak<SharedWorker>, rx: &Receiver<Job>) {
    loop {
        let job = match rx.recv_timeout(TICK) {
            Ok(job) => Some(job),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let Some(shared) = shared.upgrade() else {
            break;
        };
        let mut w = shared.lock();
        if let Some(job) = job {
            w.handle_caught(job);
            shared.unfinished.fetch_sub(1, Ordering::SeqCst);
        }
        w.tick();
    }
}
