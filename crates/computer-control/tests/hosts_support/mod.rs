//! The host snippets of README.md, each parsed with its own format's parser (serde_json,
//! the toml crate, POSIX shell words) into the command and arguments the host would
//! start. Shared by tests/hosts.rs (README equals `setup --print`) and
//! tests/packaging.rs (the named command really starts the server from the packages).
#![allow(dead_code)]

use std::path::Path;

/// Every host `setup --print` knows, as named on its command line.
pub const HOSTS: [&str; 6] = [
    "claude-desktop",
    "claude-code",
    "codex",
    "cursor",
    "inspector",
    "stdio",
];

/// The fenced block after `<!-- host-snippet: HOST -->` in README.md (without fences).
pub fn readme_snippet(host: &str) -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README.md");
    let marker = format!("<!-- host-snippet: {host} -->");
    let at = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("README.md has no {marker}"));
    let rest = &readme[at + marker.len()..];
    let open = rest.find("```").expect("a fenced block after the marker");
    let body_start = open + rest[open..].find('\n').expect("fence line") + 1;
    let body_len = rest[body_start..].find("\n```").expect("closing fence") + 1;
    rest[body_start..body_start + body_len].to_string()
}

/// POSIX shell words (single and double quotes, backslash escapes; no expansions).
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = line.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if let Some(w) = cur.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = cur.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    w.push(q);
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(String::new);
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        _ => w.push(q),
                    }
                }
            }
            '\\' => cur.get_or_insert_with(String::new).extend(chars.next()),
            _ => cur.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(cur);
    words
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|s| s.as_str().expect("a string").to_string())
        .collect()
}

/// The command and arguments a host starts for `host`'s snippet `text`.
pub fn launch(host: &str, text: &str) -> (String, Vec<String>) {
    match host {
        "claude-desktop" | "cursor" => {
            let v: serde_json::Value = serde_json::from_str(text).expect("the snippet is JSON");
            let e = &v["mcpServers"]["computer-control"];
            (
                e["command"].as_str().expect("command").into(),
                strings(&e["args"]),
            )
        }
        "stdio" => {
            let v: serde_json::Value = serde_json::from_str(text).expect("the snippet is JSON");
            assert_eq!(v["type"], "stdio");
            (
                v["command"].as_str().expect("command").into(),
                strings(&v["args"]),
            )
        }
        "codex" => {
            let v: toml::Table = text.parse().expect("the snippet is TOML");
            let e = v["mcp_servers"]["computer-control"]
                .as_table()
                .expect("a server table");
            let args = e["args"]
                .as_array()
                .expect("args")
                .iter()
                .map(|a| a.as_str().expect("a string").to_string())
                .collect();
            (e["command"].as_str().expect("command").into(), args)
        }
        "claude-code" => {
            let w = shell_words(text);
            assert_eq!(w[..3], ["claude", "mcp", "add"], "{w:?}");
            let dash = w
                .iter()
                .position(|x| x == "--")
                .expect("`--` before the command");
            (w[dash + 1].clone(), w[dash + 2..].to_vec())
        }
        "inspector" => {
            let w = shell_words(text);
            let cli = w.iter().position(|x| x == "--cli").expect("--cli");
            let method = w.iter().position(|x| x == "--method").expect("--method");
            // `-e K=V` (the server's environment) comes first; after it, the Inspector's
            // CLI takes every dash-leading word as its own.
            let mut first = cli + 1;
            while w.get(first).is_some_and(|x| x == "-e") {
                first += 2;
            }
            let server = &w[first..method];
            assert!(server.iter().all(|x| !x.starts_with('-')), "{server:?}");
            (server[0].clone(), server[1..].to_vec())
        }
        other => panic!("no parser for {other}"),
    }
}

/// Loads the plugin directory `plugin` as a dsh harness does: reads its
/// `manifest.json`, checks it is the plugin manifest of `manifest --entry ENTRY`
/// (`entry`: `path`, `npm`, `python`; `None` for an entry naming a binary, checked by
/// the caller) in every member but the entry's command, starts that command in the
/// directory with stdin and stdout as pipes (`path_prefix` first on `PATH`: a virtual
/// environment's `bin`), and asks `tools.list`. Answers the manifest and the names of
/// the tools the server answered, which must be the manifest's.
pub fn load_plugin(
    plugin: &Path,
    entry: Option<&str>,
    path_prefix: Option<&Path>,
    journal: &Path,
) -> (serde_json::Value, Vec<String>) {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let text = std::fs::read_to_string(plugin.join("manifest.json"))
        .unwrap_or_else(|e| panic!("{}/manifest.json: {e}", plugin.display()));
    let manifest: serde_json::Value = serde_json::from_str(&text).expect("manifest.json is JSON");
    let mut printed = Command::new(env!("CARGO_BIN_EXE_computer-control"));
    printed.arg("manifest");
    if let Some(entry) = entry {
        printed.args(["--entry", entry]);
    }
    let printed: serde_json::Value =
        serde_json::from_slice(&printed.output().expect("manifest").stdout).expect("JSON");
    if entry.is_some() {
        assert_eq!(manifest, printed, "{}", plugin.display());
    } else {
        let mut rest = manifest.clone();
        rest["entry"] = printed["entry"].clone();
        assert_eq!(rest, printed, "the plugin manifest but for its entry");
    }
    let command: Vec<String> =
        serde_json::from_value(manifest["entry"]["command"].clone()).expect("entry.command");
    let cwd = plugin.join(
        manifest["entry"]["working_directory"]
            .as_str()
            .expect("working_directory"),
    );
    let mut start = Command::new(&command[0]);
    start
        .args(&command[1..])
        .current_dir(&cwd)
        .env("COMPUTER_CONTROL_PLATFORM", "virtual")
        .env("COMPUTER_CONTROL_JOURNAL", journal)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(prefix) = path_prefix {
        let path = std::env::var("PATH").unwrap_or_default();
        start.env("PATH", format!("{}:{path}", prefix.display()));
    }
    let mut child = start
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?} in {}: {e}", cwd.display()));
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"tools.list"}}"#).expect("send");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("an answer");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let answer: serde_json::Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("{command:?} answered {line:?}: {e}"));
    assert_eq!(answer["id"], 1, "{answer}");
    let names = |tools: &serde_json::Value| -> Vec<String> {
        tools
            .as_array()
            .unwrap_or_else(|| panic!("no tools in {tools}"))
            .iter()
            .map(|t| t["name"].as_str().expect("name").to_string())
            .collect()
    };
    let answered = names(&answer["result"]["result"]["tools"]);
    assert_eq!(answered, names(&manifest["tools"]), "{command:?}");
    (manifest, answered)
}
