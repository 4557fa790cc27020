//! The panic-file watcher (PROTOCOL §5.4): while `safety.panic_file` exists the
//! session is stopped. The file is watched on its own thread, so its appearance stops
//! an action in flight and emits `safety.panic_triggered {source:"file"}` without any
//! call; its removal releases the stop. The file is only ever looked at, never created
//! or deleted.

use std::sync::Weak;
use std::time::Duration;

use crate::core::Core;

/// How often the file is looked at.
pub const POLL: Duration = Duration::from_millis(10);

/// Starts the watcher; it ends when the engine is gone.
pub fn spawn(core: Weak<Core>) {
    let spawned = std::thread::Builder::new()
        .name("cc-panic-file".into())
        .spawn(move || {
            loop {
                std::thread::sleep(POLL);
                match core.upgrade() {
                    Some(core) => core.sync_panic_file(),
                    None => return,
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start the panic-file watcher: {e}");
    }
}
