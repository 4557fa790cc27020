//! Starting an application on a real desktop: an application is named by a desktop-file
//! id or an executable on `PATH`, never a shell string, and runs detached from the
//! server (its own process group, no inherited standard streams), so it outlives the
//! session and cannot write into the protocol stream.

mod desktop_entry;
mod path;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::DriverError;

/// A program and its arguments, ready to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The executable, as found.
    pub program: PathBuf,
    /// Its arguments, passed as they are (never through a shell).
    pub args: Vec<String>,
}

/// Finds what `app` names: a desktop-file id (`org.gnome.Calculator`, with or without
/// `.desktop`) in the XDG data directories, else an executable on `PATH`. `Err` says
/// why there is nothing to start (not found, not an application, a path or shell
/// string, arguments an entry cannot take).
pub fn resolve(app: &str, args: &[String]) -> Result<Resolved, String> {
    check_name(app)?;
    let id = app.strip_suffix(".desktop");
    if let Some(entry) = desktop_entry::find(id.unwrap_or(app)) {
        return desktop_entry::command(&entry, args);
    }
    if id.is_some() {
        return Err(format!(
            "no desktop entry {app:?} in the XDG data directories ({})",
            desktop_entry::dirs_text()
        ));
    }
    match path::find(app) {
        Some(program) => Ok(Resolved {
            program,
            args: args.to_vec(),
        }),
        None => Err(format!(
            "no application {app:?}: no desktop entry {app}.desktop in {} and no executable {app:?} on PATH",
            desktop_entry::dirs_text()
        )),
    }
}

/// An application name is one word: no path, no whitespace, no shell syntax reaches a
/// shell anyway, but a name that looks like a command line is refused so nobody thinks
/// it is one.
fn check_name(app: &str) -> Result<(), String> {
    if app.is_empty() {
        return Err("the application name is empty".into());
    }
    if app.contains('/') {
        return Err(format!(
            "{app:?} is a path: name a desktop-file id or an executable on PATH"
        ));
    }
    if app.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{app:?} is not one name (a shell string is never run): put arguments in args"
        ));
    }
    Ok(())
}

/// Starts `cmd` detached with `env` added to the server's environment (the desktop's
/// `DISPLAY` or `WAYLAND_DISPLAY`): its own process group, standard streams on
/// `/dev/null`, working directory `$HOME`. A thread reaps it when it exits, so it
/// never lingers as a zombie. Returns its process id.
pub fn spawn(cmd: &Resolved, env: &[(&str, &str)]) -> Result<u32, DriverError> {
    let mut c = Command::new(&cmd.program);
    c.args(&cmd.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    for (k, v) in env {
        c.env(k, v);
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| std::path::Path::new(h).is_dir()) {
        c.current_dir(home);
    }
    let mut child = c
        .spawn()
        .map_err(|e| DriverError::Failed(format!("cannot start {}: {e}", cmd.program.display())))?;
    let pid = child.id();
    std::thread::Builder::new()
        .name(format!("reap-{pid}"))
        .spawn(move || {
            let _ = child.wait();
        })
        .map_err(|e| DriverError::Failed(format!("started {pid} but cannot reap it: {e}")))?;
    Ok(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_not_one_word_are_refused() {
        for bad in ["", "/usr/bin/true", "sh -c id", "a\tb", "x;\n"] {
            assert!(resolve(bad, &[]).is_err(), "{bad:?}");
        }
        let e = resolve("no-such-app-anywhere-1234", &[]).unwrap_err();
        assert!(e.contains("no application"), "{e}");
        let e = resolve("no-such-app-anywhere-1234.desktop", &[]).unwrap_err();
        assert!(e.contains("no desktop entry"), "{e}");
    }

    #[test]
    fn an_executable_on_path_starts_detached_and_is_reaped() {
        let cmd = resolve("sh", &["-c".into(), "exit 0".into()]).unwrap();
        assert!(cmd.program.is_absolute());
        let pid = spawn(&cmd, &[("CC_LAUNCH_TEST", "1")]).unwrap();
        assert!(pid > 0);
        // Reaped by its thread: the process disappears.
        let proc_dir = PathBuf::from(format!("/proc/{pid}"));
        for _ in 0..200 {
            if !proc_dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("{pid} was not reaped");
    }

    #[test]
    fn a_program_that_cannot_start_is_a_failure() {
        let cmd = Resolved {
            program: PathBuf::from("/nonexistent/prog"),
            args: vec![],
        };
        assert!(
            matches!(spawn(&cmd, &[]), Err(DriverError::Failed(m)) if m.contains("cannot start"))
        );
    }
}
