//! Where the worker's state sits between jobs: its own thread takes it for each job and
//! tick, and a caller inside an [`crate::Inline`] scope may take it to run its own
//! action when nothing is queued and nothing runs ([`Jobs::run_inline`]). Either way
//! one thread at a time drives the desktop, jobs keep the order they were sent in, and
//! the worker's thread watches an action run by its caller ([`Watch`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use super::{Job, TICK, Worker};
use crate::handed::Handed;
use crate::inline::{InlineCaller, Watch};
use crate::lookout::Lookout;

/// The worker's state, and what tells whether a caller may take it now.
pub struct Seat {
    worker: Mutex<Worker>,
    /// Jobs sent and not yet taken by the worker's thread: a caller runs its own
    /// action only when this is zero, so it never overtakes one.
    queued: AtomicUsize,
    watch: Watch,
}

/// How often the worker's thread, holding a job, looks again whether a caller's own
/// action has ended (and watches it meanwhile).
const RETRY: Duration = Duration::from_millis(1);

impl Seat {
    /// Seats a worker; its thread runs [`Seat::serve`].
    pub fn new(worker: Worker) -> Arc<Seat> {
        Arc::new(Seat {
            worker: Mutex::new(worker),
            queued: AtomicUsize::new(0),
            watch: Watch::default(),
        })
    }

    /// The worker's thread: runs jobs until every sender is gone, ticks between them,
    /// and watches an action its caller runs.
    pub fn serve(self: Arc<Self>, rx: Receiver<Job>) {
        // A caller sending back to back finds the worker awake.
        let lookout = Lookout::default();
        loop {
            match lookout.recv_timeout(&rx, TICK) {
                Ok(job) => {
                    self.queued.fetch_sub(1, Ordering::SeqCst);
                    if !job.looking() {
                        lookout.rest();
                    }
                    self.take().handle_caught(job);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.watch.check();
            // Busy means a caller runs its own action: no tick meanwhile, as none
            // comes while the worker's thread runs one.
            match self.worker.try_lock() {
                Ok(mut w) => w.tick(),
                Err(TryLockError::Poisoned(p)) => p.into_inner().tick(),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        self.take().release();
    }

    /// The worker's state for its own thread, waiting (and watching) while a caller
    /// runs its own action.
    fn take(&self) -> MutexGuard<'_, Worker> {
        loop {
            match self.worker.try_lock() {
                Ok(w) => return w,
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    self.watch.check();
                    std::thread::sleep(RETRY);
                }
            }
        }
    }
}

/// The sending end of the worker's queue.
#[derive(Clone)]
pub struct Jobs {
    tx: Sender<Job>,
    seat: Arc<Seat>,
}

impl Jobs {
    /// The queue to `seat`'s thread, which receives from `rx`'s other end.
    pub fn new(tx: Sender<Job>, seat: Arc<Seat>) -> Jobs {
        Jobs { tx, seat }
    }

    /// Queues a job for the worker's thread; `Err` when that thread is gone.
    pub fn send(&self, job: Job) -> Result<(), Gone> {
        self.seat.queued.fetch_add(1, Ordering::SeqCst);
        self.tx.send(job).map_err(|_| {
            self.seat.queued.fetch_sub(1, Ordering::SeqCst);
            Gone
        })
    }

    /// Runs an action on the calling thread when nothing is queued for the worker and
    /// nothing runs (`None`); gives the job back otherwise. While it runs, the worker's
    /// thread watches it for `caller` under `handed`'s bound.
    pub fn run_inline(
        &self,
        job: Job,
        caller: Arc<dyn InlineCaller>,
        handed: Handed,
    ) -> Option<Job> {
        if self.seat.queued.load(Ordering::SeqCst) != 0 {
            return Some(job);
        }
        let mut w = match self.seat.worker.try_lock() {
            Ok(w) => w,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Some(job),
        };
        self.seat.watch.begin(caller, handed);
        w.handle_caught(job);
        self.seat.watch.end();
        None
    }
}

/// The worker's thread is gone: nothing can be queued.
#[derive(Debug)]
pub struct Gone;
