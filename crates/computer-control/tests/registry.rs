//! The MCP Registry entry (`server.json` at the repository root) against the registry's
//! own schema (vendored in packaging/mcp-registry with its source), and the checks its
//! publisher makes beyond the schema: one exact version everywhere (Cargo, npm, the
//! entry), the npm package's `mcpName` and the PyPI README's `mcp-name:` line naming
//! this server, and arguments, environment variables and backends the binary really
//! takes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read_json(rel: &str) -> Value {
    let p = repo().join(rel);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The schema's complaints about `doc` (Draft 7 with format checks), one per line.
fn schema_errors(doc: &Value) -> String {
    let code = "import json, sys, jsonschema\n\
                schema = json.load(open(sys.argv[1]))\n\
                jsonschema.Draft7Validator.check_schema(schema)\n\
                v = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)\n\
                for e in v.iter_errors(json.load(sys.stdin)): print(list(e.absolute_path), e.message)";
    let schema = repo().join("packaging/mcp-registry/server.schema.json");
    let mut child = Command::new("python3")
        .args(["-c", code, schema.to_str().expect("utf-8")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 with jsonschema (scripts/test.sh installs it)");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(doc.to_string().as_bytes()).expect("write");
    }
    let out = child.wait_with_output().expect("validator");
    assert!(
        out.status.success(),
        "validator failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn server_json_is_valid_against_the_registry_schema() {
    let doc = read_json("server.json");
    let errors = schema_errors(&doc);
    assert!(errors.is_empty(), "server.json:\n{errors}");
    assert_eq!(
        doc["$schema"],
        read_json("packaging/mcp-registry/server.schema.json")["$id"],
        "server.json names the vendored schema"
    );
    // The validator is not blind: what the registry's schema refuses, it refuses. (A
    // server `version` of "latest" passes the schema; the publisher refuses it, and
    // `one_name_and_one_version_everywhere` pins the exact version.)
    for (path, bad) in [
        ("/name", json!("computer-control")),
        ("/description", json!("x".repeat(101))),
        ("/packages/0/version", json!("latest")),
        ("/packages/0/transport", json!({"type": "carrier-pigeon"})),
    ] {
        let mut broken = doc.clone();
        *broken.pointer_mut(path).expect("path") = bad;
        assert!(!schema_errors(&broken).is_empty(), "{path} not refused");
    }
}

#[test]
fn one_name_and_one_version_everywhere() {
    let doc = read_json("server.json");
    let name = doc["name"].as_str().expect("name");
    assert_eq!(doc["version"], VERSION);
    let npm = read_json("packaging/npm/computer-control/package.json");
    assert_eq!(npm["mcpName"], name, "npm's mcpName");
    assert_eq!(npm["version"], VERSION);
    for (dep, v) in npm["optionalDependencies"]
        .as_object()
        .expect("optionalDependencies")
    {
        assert_eq!(v, VERSION, "{dep}");
        let dir = dep.trim_start_matches("@computer-control/");
        let p = read_json(&format!("packaging/npm/platforms/{dir}/package.json"));
        assert_eq!(&p["name"], dep);
        assert_eq!(p["version"], VERSION);
        if dir.starts_with("win32-") {
            assert_eq!(p["os"], json!(["win32"]), "{dep}");
            assert!(p.get("libc").is_none(), "{dep}: no libc on Windows");
        } else {
            assert_eq!(p["os"], json!(["linux"]), "{dep}");
            assert_eq!(
                p["libc"],
                json!(["glibc"]),
                "{dep}: libc, else npm installs it on musl"
            );
        }
    }
    // PyPI: `mcp-name: <name>` in the description, followed by whitespace or `-->`.
    let readme = std::fs::read_to_string(repo().join("packaging/pypi/README.md")).expect("README");
    let token = format!("mcp-name: {name}");
    let at = readme
        .find(&token)
        .expect("the PyPI README names the server");
    let after = &readme[at + token.len()..];
    assert!(
        after.starts_with(char::is_whitespace) || after.starts_with("-->"),
        "{after:?}"
    );
    for p in doc["packages"].as_array().expect("packages") {
        assert_eq!(p["version"], VERSION);
        assert_eq!(p["identifier"], "computer-control");
    }
}

#[test]
fn the_arguments_and_variables_are_the_binarys() {
    let doc = read_json("server.json");
    let help = Command::new(BIN)
        .args(["mcp", "--help"])
        .output()
        .expect("mcp --help");
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    for p in doc["packages"].as_array().expect("packages") {
        let args: Vec<&str> = p["packageArguments"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a["value"].as_str())
            .collect();
        assert_eq!(args, ["mcp"], "{p}");
        for v in p["environmentVariables"].as_array().expect("env") {
            let name = v["name"].as_str().expect("name");
            if name.starts_with("COMPUTER_CONTROL_") && name != "COMPUTER_CONTROL_LOG" {
                assert!(help.contains(name), "`mcp --help` does not name {name}");
            }
            // The backends offered are exactly those the Linux binary accepts, the
            // GNOME and portal drivers included.
            if name == "COMPUTER_CONTROL_PLATFORM" {
                let mut offered: Vec<&str> = v["choices"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c.as_str())
                    .collect();
                let mut accepted = platforms(&help);
                offered.sort_unstable();
                accepted.sort_unstable();
                assert_eq!(offered, accepted, "{v}");
                assert!(accepted.contains(&"gnome") && accepted.contains(&"portal"));
            }
        }
    }
}

/// The `--platform` values a `--help` text lists (clap's `[possible values: …]`).
pub fn platforms(help: &str) -> Vec<&str> {
    let at = help.find("--platform").expect("--platform in --help");
    let rest = &help[at..];
    let start = rest.find("[possible values: ").expect("possible values") + 18;
    let end = rest[start..].find(']').expect("closing bracket") + start;
    rest[start..end].split(", ").collect()
}
