//! Host setups: README.md shows, for each host, exactly what `setup --print HOST
//! --portable` prints (one home: the binary), each snippet parses with its format's own
//! parser, and `setup --print HOST` for this machine names this binary and starts the
//! server it names (an MCP initialize and a capture through the official SDK).

use std::path::Path;
use std::process::Command;

use crate::common::tempfile_dir::TempDir;
use crate::hosts_support::{HOSTS, launch, load_plugin, readme_snippet};

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn setup(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("setup")
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("setup");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn the_readme_shows_what_setup_prints() {
    for host in HOSTS {
        let printed = setup(&["--print", host, "--portable"]);
        assert_eq!(
            readme_snippet(host),
            printed,
            "README.md's {host} snippet differs from `setup --print {host} --portable`"
        );
        let (command, args) = launch(host, &printed);
        let version = format!("computer-control@{}", env!("CARGO_PKG_VERSION"));
        assert_eq!(command, "npx", "{host}");
        assert!(
            args.contains(&version) && args.last().map(String::as_str) == Some("mcp"),
            "{host}: {args:?}"
        );
    }
}

#[test]
fn setup_for_this_machine_starts_this_binary() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/packaging/mcp_smoke.py");
    // Removed on drop, also when an assertion below fails.
    let dir = TempDir::new();
    for host in HOSTS {
        let (command, args) = launch(host, &setup(&["--print", host]));
        assert_eq!(
            Path::new(&command),
            Path::new(BIN).canonicalize().expect("bin"),
            "{host}"
        );
        assert_eq!(args, ["mcp"], "{host}");
    }
    // One real start with what the stdio snippet names, as an SDK client would.
    let (command, args) = launch("stdio", &setup(&["--print", "stdio"]));
    let out = Command::new("python3")
        .arg(&script)
        .args(["--env", "COMPUTER_CONTROL_PLATFORM=virtual"])
        .arg("--env")
        .arg(format!(
            "COMPUTER_CONTROL_JOURNAL={}",
            dir.path().join("j.db").display()
        ))
        .arg("--")
        .arg(&command)
        .args(&args)
        .output()
        .expect("python3 with the MCP SDK");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("DONE"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_unknown_host_is_a_usage_error_listing_the_hosts() {
    let out = Command::new(BIN)
        .args(["setup", "--print", "notepad"])
        .output()
        .expect("setup");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    for host in HOSTS {
        assert!(err.contains(host), "{err}");
    }
}

/// `setup --print dsh` writes a plugin directory a harness loads: its manifest is the
/// plugin manifest with an entry naming this binary, and that entry, started in the
/// plugin directory as the harness starts it, serves the plugin protocol on stdio
/// (`tools.list` answers the tools the manifest declares).
#[test]
fn setup_for_dsh_writes_a_plugin_directory_that_loads() {
    let dir = TempDir::new();
    let plugin = dir.path().join("plugins/computer-control");
    let out = setup(&[
        "--print",
        "dsh",
        "--dir",
        plugin.to_str().expect("UTF-8 path"),
    ]);
    let path = plugin
        .join("manifest.json")
        .canonicalize()
        .expect("written");
    assert!(out.contains(&path.display().to_string()), "{out}");
    let (manifest, tools) = load_plugin(&plugin, None, None, &dir.path().join("j.db"));
    assert_eq!(
        manifest["entry"]["command"],
        serde_json::json!([Path::new(BIN).canonicalize().expect("bin"), "serve"])
    );
    assert!(tools.iter().any(|t| t == "screen.capture"), "{tools:?}");
}

/// The packages' plugin manifests, checked in beside them, are what `manifest --entry`
/// prints for each (npm: the launcher from the package's directory; PyPI: the
/// original's `python -m computer_control serve`).
#[test]
fn the_packages_plugin_manifests_are_generated() {
    for (entry, file) in [
        ("npm", "packaging/npm/computer-control/manifest.json"),
        (
            "python",
            "packaging/pypi/python/computer_control/manifest.json",
        ),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(file);
        let checked_in: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect(file)).expect("JSON");
        let printed: serde_json::Value = serde_json::from_slice(
            &Command::new(BIN)
                .args(["manifest", "--entry", entry])
                .output()
                .expect("manifest")
                .stdout,
        )
        .expect("JSON");
        assert_eq!(
            checked_in, printed,
            "{file} is stale: regenerate it with `computer-control manifest --entry {entry} > {file}`"
        );
    }
}
