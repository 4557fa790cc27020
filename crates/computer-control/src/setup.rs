//! `computer-control setup --print HOST`: the snippet that adds this server to an MCP
//! host, in the host's own format. The one home of every host snippet: README.md shows
//! the `--portable` form (a test checks that it equals this output), and without
//! `--portable` the snippet names this binary's path and the desktop session found here.
//! For the dsh harness the "snippet" is a plugin directory: `setup --print dsh` writes
//! its `manifest.json` ([`write_plugin`]). Each snippet is written for the system it is
//! printed on ([`Os`]): on Windows `npx` is started through `cmd /c` (it is a batch
//! file hosts cannot start directly) and command lines are quoted for PowerShell; the
//! file the snippet belongs in is named on stderr ([`crate::places::host_config`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use serde_json::{Map, Value, json};

use crate::hosts::Host;
use crate::places::Os;
use crate::session::Session;

/// The name hosts show for the server.
pub const SERVER_NAME: &str = "computer-control";

/// `setup`'s options.
#[derive(Debug, clap::Args)]
pub struct SetupArgs {
    /// Print the snippet for this host.
    #[arg(
        long,
        value_enum,
        value_name = "HOST",
        required_unless_present = "gnome_extension"
    )]
    print: Option<Host>,
    /// Install and enable the GNOME Shell extension through which the GNOME driver
    /// learns where windows are (`crates/desktop-gnome/extension`), for this user.
    #[arg(long, conflicts_with_all = ["print", "portable"])]
    gnome_extension: bool,
    /// The form for any machine (README.md): `npx` of the published package, and no
    /// environment (the server finds the desktop session itself).
    #[arg(long)]
    portable: bool,
    /// For `dsh`: the plugin directory to write (created if missing; its
    /// `manifest.json` is replaced).
    #[arg(long, value_name = "DIR", default_value = "computer-control-plugin")]
    dir: PathBuf,
}

/// How a host starts the server.
pub struct Launch {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl Launch {
    /// Through npx, pinned to this version: what README.md shows.
    pub fn portable() -> Launch {
        Launch::portable_on(Os::current())
    }

    /// [`Launch::portable`] for `os`: on Windows `npx` is `npx.cmd`, which a host's
    /// process spawn does not run by itself, so `cmd /c` starts it.
    pub fn portable_on(os: Os) -> Launch {
        let npx = vec![
            "-y".into(),
            format!("{SERVER_NAME}@{}", env!("CARGO_PKG_VERSION")),
            "mcp".into(),
        ];
        let (command, args) = match os {
            Os::Windows => (
                "cmd".to_string(),
                ["/c".to_string(), "npx".to_string()]
                    .into_iter()
                    .chain(npx)
                    .collect(),
            ),
            Os::Linux | Os::MacOs => ("npx".to_string(), npx),
        };
        Launch {
            command,
            args,
            env: Vec::new(),
        }
    }

    /// This binary, with the parts of `session` a host would not pass and that stay
    /// valid across logins (the display; the session bus and cookie when at their
    /// usual places); on Windows none.
    pub fn here(session: &Session) -> Launch {
        let command = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| SERVER_NAME.into());
        let mut env = Vec::new();
        // A Windows desktop needs no session variables (under Wine, DISPLAY is Wine's own).
        if Os::current() == Os::Windows {
            return Launch {
                command,
                args: vec!["mcp".into()],
                env,
            };
        }
        if let Some(d) = session.get("DISPLAY") {
            env.push(("DISPLAY".to_string(), d.to_string()));
        }
        if let Some(w) = session.get("WAYLAND_DISPLAY") {
            env.push(("WAYLAND_DISPLAY".to_string(), w.to_string()));
        }
        if let Some(x) = session
            .get("XAUTHORITY")
            .filter(|x| x.ends_with("/.Xauthority"))
        {
            env.push(("XAUTHORITY".to_string(), x.to_string()));
        }
        if let (Some(bus), Some(rt)) = (
            session.get("DBUS_SESSION_BUS_ADDRESS"),
            session.get("XDG_RUNTIME_DIR"),
        ) && bus == format!("unix:path={rt}/bus")
        {
            env.push(("DBUS_SESSION_BUS_ADDRESS".to_string(), bus.to_string()));
        }
        Launch {
            command,
            args: vec!["mcp".into()],
            env,
        }
    }

    fn env_json(&self) -> Map<String, Value> {
        self.env
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect()
    }

    /// The `mcpServers` entry most hosts share.
    fn entry(&self, typed: bool) -> Value {
        let mut m = Map::new();
        if typed {
            m.insert("type".into(), json!("stdio"));
        }
        m.insert("command".into(), json!(self.command));
        m.insert("args".into(), json!(self.args));
        if !self.env.is_empty() {
            m.insert("env".into(), Value::Object(self.env_json()));
        }
        Value::Object(m)
    }
}

/// A word for the shell of `os`: as is when safe, else single-quoted (a POSIX shell
/// ends the quote for a `'`; PowerShell doubles it). Backslashes are safe in
/// PowerShell, where they separate a path's parts.
fn shell_word(w: &str, os: Os) -> String {
    // PowerShell makes an array of words around a comma.
    let allowed = if os == Os::Windows {
        "@%+=:./-_\\"
    } else {
        "@%+=:,./-_"
    };
    let safe = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || allowed.contains(c))
        && !(os == Os::Windows && w.starts_with('@'));
    if safe {
        w.to_string()
    } else if os == Os::Windows {
        format!("'{}'", w.replace('\'', "''"))
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// A TOML basic string (JSON's escapes are TOML's, and serde_json never writes `\/`).
fn toml_string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

/// The snippet for `host`, as printed on this system (ends with a newline).
pub fn snippet(host: Host, l: &Launch) -> String {
    snippet_on(host, l, Os::current())
}

/// The snippet for `host` as printed on `os`: the command lines (Claude Code, the
/// Inspector) are quoted for that system's shell.
pub fn snippet_on(host: Host, l: &Launch, os: Os) -> String {
    let shell_word = |w: &str| shell_word(w, os);
    match host {
        Host::ClaudeDesktop | Host::Cursor => {
            pretty(&json!({"mcpServers": {SERVER_NAME: l.entry(false)}}))
        }
        Host::ClaudeCode => {
            let mut s = String::from("claude mcp add");
            for (k, v) in &l.env {
                let _ = write!(s, " --env {}", shell_word(&format!("{k}={v}")));
            }
            let _ = write!(s, " {SERVER_NAME} -- {}", shell_word(&l.command));
            for a in &l.args {
                let _ = write!(s, " {}", shell_word(a));
            }
            s + "\n"
        }
        Host::Codex => {
            let mut s = format!("[mcp_servers.{SERVER_NAME}]\n");
            let _ = writeln!(s, "command = {}", toml_string(&l.command));
            let args: Vec<String> = l.args.iter().map(|a| toml_string(a)).collect();
            let _ = writeln!(s, "args = [{}]", args.join(", "));
            // A first npx start downloads the package: more than Codex's default 10 s.
            let _ = writeln!(s, "startup_timeout_sec = 60");
            if !l.env.is_empty() {
                let _ = writeln!(s, "\n[mcp_servers.{SERVER_NAME}.env]");
                for (k, v) in &l.env {
                    let _ = writeln!(s, "{k} = {}", toml_string(v));
                }
            }
            s
        }
        Host::Inspector => {
            // The Inspector's CLI mode takes every dash-leading word for its own: the
            // server's command line must have none (npx assumes --yes without a TTY).
            let mut s = String::from("npx @modelcontextprotocol/inspector --cli");
            for (k, v) in &l.env {
                let _ = write!(s, " -e {}", shell_word(&format!("{k}={v}")));
            }
            let _ = write!(s, " {}", shell_word(&l.command));
            for a in l.args.iter().filter(|a| *a != "-y") {
                let _ = write!(s, " {}", shell_word(a));
            }
            s + " --method tools/list\n"
        }
        Host::Stdio => pretty(&l.entry(true)),
        Host::Dsh => pretty(&crate::manifest::manifest_with(plugin_command(l))),
    }
}

/// The plugin's `entry.command`: the same launch, with `serve` (the plugin protocol on
/// stdio) for `mcp`. The environment is left out: a manifest has none, and the server
/// finds the desktop session itself.
fn plugin_command(l: &Launch) -> Vec<String> {
    std::iter::once(l.command.clone())
        .chain(l.args.iter().map(|a| match a.as_str() {
            "mcp" => "serve".to_string(),
            other => other.to_string(),
        }))
        .collect()
}

/// Writes the dsh plugin directory `dir` (created if missing): its `manifest.json`,
/// whose entry starts the server `l` names. Answers the manifest's path.
pub fn write_plugin(dir: &Path, l: &Launch) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the plugin directory {}", dir.display()))?;
    let path = dir.join("manifest.json");
    std::fs::write(&path, snippet(Host::Dsh, l))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// Prints the snippet for `args.print` (for `dsh`, writes the plugin directory and
/// says where).
pub fn run(args: &SetupArgs, session: &Session) -> anyhow::Result<()> {
    let Some(host) = args.print else {
        return crate::gnome_extension::install();
    };
    let launch = if args.portable {
        Launch::portable()
    } else {
        Launch::here(session)
    };
    if host == Host::Dsh {
        let path = write_plugin(&args.dir, &launch)?;
        let shown = path.canonicalize().unwrap_or(path);
        println!("wrote {}", shown.display());
        println!("entry: {}", plugin_command(&launch).join(" "));
        return Ok(());
    }
    if let Some(file) = crate::places::host_config(host, Os::current(), &crate::places::from_env) {
        eprintln!("add this to {file}");
    }
    print!("{}", snippet(host, &launch));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch() -> Launch {
        Launch {
            command: "/opt/my dir/computer-control".into(),
            args: vec!["mcp".into()],
            env: vec![
                ("DISPLAY".into(), ":1".into()),
                ("X".into(), "it's \"q\"".into()),
            ],
        }
    }

    #[test]
    fn words_with_spaces_and_quotes_survive_each_format() {
        let l = launch();
        let code = snippet(Host::ClaudeCode, &l);
        assert_eq!(
            code,
            "claude mcp add --env DISPLAY=:1 --env 'X=it'\\''s \"q\"' computer-control -- \
             '/opt/my dir/computer-control' mcp\n"
        );
        let codex = snippet(Host::Codex, &l);
        assert!(
            codex.contains("command = \"/opt/my dir/computer-control\""),
            "{codex}"
        );
        assert!(codex.contains("X = \"it's \\\"q\\\"\""), "{codex}");
        let desktop: Value = serde_json::from_str(&snippet(Host::ClaudeDesktop, &l)).expect("JSON");
        assert_eq!(
            desktop["mcpServers"]["computer-control"]["env"]["DISPLAY"],
            ":1"
        );
        let stdio: Value = serde_json::from_str(&snippet(Host::Stdio, &l)).expect("JSON");
        assert_eq!(stdio["type"], "stdio");
    }

    #[test]
    fn the_dsh_manifest_starts_the_plugin_protocol_where_the_launch_points() {
        let m: Value = serde_json::from_str(&snippet(Host::Dsh, &launch())).expect("JSON");
        assert_eq!(
            m["entry"],
            json!({"command": ["/opt/my dir/computer-control", "serve"], "working_directory": "."})
        );
        let portable: Value =
            serde_json::from_str(&snippet(Host::Dsh, &Launch::portable())).expect("JSON");
        let version = format!("{SERVER_NAME}@{}", env!("CARGO_PKG_VERSION"));
        assert_eq!(
            portable["entry"]["command"],
            json!(["npx", "-y", version, "serve"])
        );
        // Everything but the entry is the plugin manifest.
        let mut rest = m.clone();
        rest["entry"] = crate::manifest::manifest()["entry"].clone();
        assert_eq!(rest, crate::manifest::manifest());
    }

    #[test]
    fn a_plugin_directory_that_cannot_be_made_says_which() {
        let dir = std::env::temp_dir().join(format!("cc-setup-{}", std::process::id()));
        std::fs::write(&dir, "a file, not a directory").expect("write");
        let e = write_plugin(&dir, &launch()).expect_err("a file is in the way");
        assert!(e.to_string().contains(&dir.display().to_string()), "{e}");
        std::fs::remove_file(&dir).expect("remove");
    }

    #[test]
    fn on_windows_npx_starts_through_cmd_and_lines_are_quoted_for_powershell() {
        let portable = Launch::portable_on(Os::Windows);
        assert_eq!(portable.command, "cmd");
        assert_eq!(&portable.args[..3], ["/c", "npx", "-y"]);
        assert_eq!(portable.args.last().map(String::as_str), Some("mcp"));
        let desktop: Value =
            serde_json::from_str(&snippet_on(Host::ClaudeDesktop, &portable, Os::Windows))
                .expect("JSON");
        assert_eq!(desktop["mcpServers"]["computer-control"]["command"], "cmd");
        let here = Launch {
            command: r"C:\Program Files\cc\computer-control.exe".into(),
            args: vec!["mcp".into()],
            env: vec![("X".into(), "it's".into())],
        };
        assert_eq!(
            snippet_on(Host::ClaudeCode, &here, Os::Windows),
            "claude mcp add --env 'X=it''s' computer-control -- \
             'C:\\Program Files\\cc\\computer-control.exe' mcp\n"
        );
        let plain = Launch {
            command: r"C:\cc\computer-control.exe".into(),
            ..here
        };
        let line = snippet_on(Host::Inspector, &plain, Os::Windows);
        assert!(line.contains(r" C:\cc\computer-control.exe mcp "), "{line}");
        // A JSON snippet keeps the path as it is (JSON escapes the backslashes).
        let json: Value =
            serde_json::from_str(&snippet_on(Host::Stdio, &plain, Os::Windows)).expect("JSON");
        assert_eq!(json["command"], r"C:\cc\computer-control.exe");
        // The Inspector line has no dash word for the server on Windows either.
        let s = snippet_on(
            Host::Inspector,
            &Launch::portable_on(Os::Windows),
            Os::Windows,
        );
        assert!(s.contains(" cmd /c npx computer-control@"), "{s}");
    }

    #[test]
    fn the_inspector_line_has_no_dash_word_for_the_server() {
        let s = snippet(Host::Inspector, &Launch::portable());
        let server: Vec<&str> = s
            .trim_end()
            .trim_end_matches(" --method tools/list")
            .split(' ')
            .skip(3)
            .collect();
        assert!(server.iter().all(|w| !w.starts_with('-')), "{s}");
        assert_eq!(server.first(), Some(&"npx"));
    }
}
