//! Where this user's files are, per operating system: the server's state (the
//! governance journal) and each MCP host's configuration file. One home for these
//! conventions, written as plain functions of the OS and an environment lookup so the
//! Windows and macOS answers are unit-tested on Linux too.
//!
//! * Linux: `$XDG_STATE_HOME` (else `~/.local/state`); hosts under `~/.config` or `~`.
//! * macOS: the same state place; Claude Desktop under `~/Library/Application Support`.
//! * Windows: `%LOCALAPPDATA%` (machine-local, not roamed: a journal is this machine's);
//!   Claude Desktop under `%APPDATA%`, the other hosts under `%USERPROFILE%`.

use std::path::PathBuf;

use crate::hosts::Host;

/// The operating systems with their own conventions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux and the other Unix systems that follow XDG.
    Linux,
    /// macOS.
    MacOs,
    /// Windows.
    Windows,
}

impl Os {
    /// The system this binary runs on.
    pub fn current() -> Os {
        if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "macos") {
            Os::MacOs
        } else {
            Os::Linux
        }
    }
}

/// An environment lookup: the process's own (`from_env`) or a test's.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process's environment, empty values as unset.
pub fn from_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn set(env: Env, name: &str) -> Option<String> {
    env(name).filter(|v| !v.is_empty())
}

/// Joins `parts` onto `base` with the separator of `os` (a Windows path printed on
/// Linux in a test still reads as Windows writes it).
fn join(os: Os, base: &str, parts: &[&str]) -> String {
    let sep = if os == Os::Windows { '\\' } else { '/' };
    let mut out = base.trim_end_matches(['/', '\\']).to_string();
    for p in parts {
        out.push(sep);
        out.push_str(p);
    }
    out
}

/// The directory of this server's state (the journal's default place), or what to set.
pub fn state_dir(os: Os, env: Env) -> Result<PathBuf, String> {
    let dir = match os {
        Os::Windows => set(env, "LOCALAPPDATA")
            .map(|d| join(os, &d, &["computer-control"]))
            .ok_or("LOCALAPPDATA is not set; pass --journal")?,
        Os::Linux | Os::MacOs => set(env, "XDG_STATE_HOME")
            .or_else(|| set(env, "HOME").map(|h| join(os, &h, &[".local", "state"])))
            .map(|d| join(os, &d, &["computer-control"]))
            .ok_or("neither XDG_STATE_HOME nor HOME is set; pass --journal")?,
    };
    Ok(PathBuf::from(dir))
}

/// Where the journal is, without creating anything: `configured` if set, else
/// `governance.db` in this system's state place ([`state_dir`]: `$XDG_STATE_HOME` or
/// `~/.local/state`, on Windows `%LOCALAPPDATA%`).
pub fn default_journal(configured: &str) -> anyhow::Result<PathBuf> {
    if !configured.is_empty() {
        return Ok(PathBuf::from(configured));
    }
    let state = state_dir(Os::current(), &from_env).map_err(anyhow::Error::msg)?;
    Ok(state.join("governance.db"))
}

/// What a host's environment must carry for [`state_dir`] to have an answer.
pub fn state_dir_step(os: Os) -> &'static str {
    match os {
        Os::Windows => {
            "set LOCALAPPDATA in the host's `env` (Windows sets it at sign-in), or pass --journal PATH"
        }
        Os::Linux | Os::MacOs => {
            "set HOME or XDG_STATE_HOME in the host's `env`, or pass --journal PATH"
        }
    }
}

/// Where the HTTP server writes the agent token it generated, or what to set. A token
/// another local user can read is theirs to drive the desktop with, so the place is
/// this user's alone:
///
/// * Windows: `%LOCALAPPDATA%\computer-control`, inside the user's profile, whose ACL
///   (inherited by what is created there) admits the user, SYSTEM and Administrators
///   only. Never `%TEMP%`: a file there gets no ACL of its own, and a service's or a
///   changed environment can point it at a shared directory. Unset, it is an error.
/// * Linux and macOS: `$XDG_RUNTIME_DIR` (the user's, mode 0700, cleared at logout)
///   when set, else `None`: the temp directory, where the file's own mode (0600)
///   keeps other users out.
pub fn token_dir(os: Os, env: Env) -> Result<Option<PathBuf>, String> {
    match os {
        Os::Windows => set(env, "LOCALAPPDATA")
            .map(|d| Some(PathBuf::from(join(os, &d, &["computer-control"]))))
            .ok_or_else(|| {
                "LOCALAPPDATA is not set, so there is no directory of this user's alone for \
                 the agent token file: set it in the server's environment (Windows sets it \
                 at sign-in), or hand the token in with `http.token`"
                    .to_string()
            }),
        Os::Linux | Os::MacOs => Ok(set(env, "XDG_RUNTIME_DIR").map(PathBuf::from)),
    }
}

/// The file a host reads its MCP servers from, where it is a file of this user's; the
/// variable itself (`%APPDATA%`, `~`) when the environment does not name it. `None`
/// for hosts configured by a command or a directory of one's choosing.
pub fn host_config(host: Host, os: Os, env: Env) -> Option<String> {
    let home = |var: &str, shown: &str| set(env, var).unwrap_or_else(|| shown.to_string());
    let user_home = || match os {
        Os::Windows => home("USERPROFILE", "%USERPROFILE%"),
        Os::Linux | Os::MacOs => home("HOME", "~"),
    };
    Some(match (host, os) {
        (Host::ClaudeDesktop, Os::Windows) => join(
            os,
            &home("APPDATA", "%APPDATA%"),
            &["Claude", "claude_desktop_config.json"],
        ),
        (Host::ClaudeDesktop, Os::MacOs) => join(
            os,
            &user_home(),
            &[
                "Library",
                "Application Support",
                "Claude",
                "claude_desktop_config.json",
            ],
        ),
        (Host::ClaudeDesktop, Os::Linux) => join(
            os,
            &set(env, "XDG_CONFIG_HOME").unwrap_or_else(|| join(os, &user_home(), &[".config"])),
            &["Claude", "claude_desktop_config.json"],
        ),
        (Host::Codex, _) => join(
            os,
            &set(env, "CODEX_HOME").unwrap_or_else(|| join(os, &user_home(), &[".codex"])),
            &["config.toml"],
        ),
        (Host::Cursor, _) => join(os, &user_home(), &[".cursor", "mcp.json"]),
        (
            Host::ClaudeCode | Host::Inspector | Host::Stdio | Host::Dsh,
            Os::Linux | Os::MacOs | Os::Windows,
        ) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_journal_lives_in_each_systems_state_place() {
        let win = env_of(&[
            ("LOCALAPPDATA", r"C:\Users\ada\AppData\Local"),
            ("HOME", "/ignored"),
        ]);
        assert_eq!(
            state_dir(Os::Windows, &win).unwrap(),
            PathBuf::from(r"C:\Users\ada\AppData\Local\computer-control")
        );
        let xdg = env_of(&[("XDG_STATE_HOME", "/s"), ("HOME", "/home/ada")]);
        assert_eq!(
            state_dir(Os::Linux, &xdg).unwrap(),
            PathBuf::from("/s/computer-control")
        );
        let home = env_of(&[("HOME", "/home/ada"), ("XDG_STATE_HOME", "")]);
        assert_eq!(
            state_dir(Os::MacOs, &home).unwrap(),
            PathBuf::from("/home/ada/.local/state/computer-control")
        );
    }

    #[test]
    fn without_the_variables_the_error_names_them() {
        let none = env_of(&[("HOME", "/home/ada")]);
        let e = state_dir(Os::Windows, &none).unwrap_err();
        assert!(e.contains("LOCALAPPDATA"), "{e}");
        assert!(state_dir_step(Os::Windows).contains("LOCALAPPDATA"));
        let e = state_dir(Os::Linux, &env_of(&[])).unwrap_err();
        assert!(e.contains("HOME"), "{e}");
    }

    #[test]
    fn the_token_file_goes_where_only_this_user_reads() {
        let win = env_of(&[
            ("LOCALAPPDATA", r"C:\Users\ada\AppData\Local"),
            ("TEMP", r"C:\Windows\Temp"),
            ("XDG_RUNTIME_DIR", "/run/user/1000"),
        ]);
        assert_eq!(
            token_dir(Os::Windows, &win).unwrap(),
            Some(PathBuf::from(
                r"C:\Users\ada\AppData\Local\computer-control"
            ))
        );
        let unix = env_of(&[("XDG_RUNTIME_DIR", "/run/user/1000"), ("TEMP", "/tmp")]);
        for os in [Os::Linux, Os::MacOs] {
            assert_eq!(
                token_dir(os, &unix).unwrap(),
                Some(PathBuf::from("/run/user/1000"))
            );
            // Without it: the temp directory, with the file's own mode.
            assert_eq!(token_dir(os, &env_of(&[("TEMP", "/tmp")])).unwrap(), None);
        }
    }

    #[test]
    fn without_localappdata_windows_writes_no_token_file_elsewhere() {
        let temp_only = env_of(&[("TEMP", r"C:\Windows\Temp"), ("LOCALAPPDATA", "")]);
        let e = token_dir(Os::Windows, &temp_only).unwrap_err();
        assert!(
            e.contains("LOCALAPPDATA") && e.contains("http.token"),
            "{e}"
        );
    }

    #[test]
    fn host_files_follow_each_systems_convention() {
        let win = env_of(&[
            ("APPDATA", r"C:\Users\ada\AppData\Roaming"),
            ("USERPROFILE", r"C:\Users\ada"),
        ]);
        assert_eq!(
            host_config(Host::ClaudeDesktop, Os::Windows, &win).as_deref(),
            Some(r"C:\Users\ada\AppData\Roaming\Claude\claude_desktop_config.json")
        );
        assert_eq!(
            host_config(Host::Cursor, Os::Windows, &win).as_deref(),
            Some(r"C:\Users\ada\.cursor\mcp.json")
        );
        assert_eq!(
            host_config(Host::Codex, Os::Windows, &win).as_deref(),
            Some(r"C:\Users\ada\.codex\config.toml")
        );
        // Unset variables are shown as the variable, for the user's shell to expand.
        let bare = env_of(&[]);
        assert_eq!(
            host_config(Host::ClaudeDesktop, Os::Windows, &bare).as_deref(),
            Some(r"%APPDATA%\Claude\claude_desktop_config.json")
        );
        assert_eq!(
            host_config(Host::Cursor, Os::Linux, &bare).as_deref(),
            Some("~/.cursor/mcp.json")
        );
        let mac = env_of(&[("HOME", "/Users/ada")]);
        assert_eq!(
            host_config(Host::ClaudeDesktop, Os::MacOs, &mac).as_deref(),
            Some("/Users/ada/Library/Application Support/Claude/claude_desktop_config.json")
        );
        let linux = env_of(&[("HOME", "/home/ada"), ("CODEX_HOME", "/opt/codex")]);
        assert_eq!(
            host_config(Host::ClaudeDesktop, Os::Linux, &linux).as_deref(),
            Some("/home/ada/.config/Claude/claude_desktop_config.json")
        );
        assert_eq!(
            host_config(Host::Codex, Os::Linux, &linux).as_deref(),
            Some("/opt/codex/config.toml")
        );
        assert_eq!(host_config(Host::ClaudeCode, Os::Windows, &win), None);
        assert_eq!(host_config(Host::Stdio, Os::Linux, &linux), None);
    }
}
