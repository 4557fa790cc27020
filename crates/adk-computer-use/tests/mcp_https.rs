//! `ComputerUseMcpRuntime` over https (feature `rustls`): the real `computer-control serve
//! --transport mcp-http` behind a TLS terminator, with a certificate made for the test.
//!
//! The client trusts the certificate through `SSL_CERT_FILE`, which the platform verifier
//! reads once per process, so each client runs in a child process: this test executable
//! re-run with `CC_HTTPS_URL` set (`https_client`; without it that test returns at once).
//! The same client trusting another authority must fail verification: TLS is checked,
//! not merely spoken.
#![cfg(feature = "rustls")]

use crate::runtime_support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use adk_computer_use::governed::{GovernedRuntime, RuntimeOptions};
use adk_computer_use::mcp::McpToolClient;
use runtime_support::{Recording, scenario, server_binary};
use serde_json::json;

const AGENT: &str = "adk-https-agent-token-0123456789abcdef012345";

/// A child process killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the openssl command line with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run openssl");
    assert!(status.success(), "openssl {args:?} failed");
}

/// A certificate authority made for the test and a server certificate for `::1` signed by
/// it (a verifier refuses a CA certificate as the server's own): `(ca, cert, key)`.
fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    let ca = [
        &["req", "-x509"][..],
        &ec,
        &["-days", "1", "-subj", "/CN=test CA"],
    ]
    .concat();
    openssl(
        dir,
        &[&ca[..], &["-keyout", "ca.key", "-out", "ca.pem"]].concat(),
    );
    let csr = [&["req"][..], &ec, &["-subj", "/CN=localhost"]].concat();
    openssl(
        dir,
        &[&csr[..], &["-keyout", "key.pem", "-out", "server.csr"]].concat(),
    );
    std::fs::write(
        dir.join("server.ext"),
        "basicConstraints=CA:FALSE\nsubjectAltName=IP:::1,DNS:localhost\n\
         extendedKeyUsage=serverAuth\n",
    )
    .expect("extensions");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            "server.ext",
            "-out",
            "cert.pem",
        ],
    );
    (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    )
}

/// Another authority, which signed nothing here: the trust store of the refused client
/// (an empty store would not even let a TLS client be built).
fn other_ca(dir: &Path) -> PathBuf {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    let ca = [
        &["req", "-x509"][..],
        &ec,
        &["-days", "1", "-subj", "/CN=other CA"],
    ]
    .concat();
    openssl(
        dir,
        &[&ca[..], &["-keyout", "other.key", "-out", "other.pem"]].concat(),
    );
    dir.join("other.pem")
}

/// `serve --transport mcp-http` on 127.0.0.1 and a free port; returns it with the port.
fn serve(dir: &Path) -> (Killed, u16) {
    let config = dir.join("config.json");
    std::fs::write(&config, json!({"http": {"token": AGENT}}).to_string()).expect("config");
    let mut child = Command::new(server_binary())
        .args([
            "serve",
            "--transport",
            "mcp-http",
            "--port",
            "0",
            "--platform",
            "virtual",
        ])
        .arg("--journal")
        .arg(dir.join("journal.db"))
        .arg("--config")
        .arg(&config)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env_remove("COMPUTER_CONTROL_PRINCIPAL")
        .env_remove("COMPUTER_CONTROL_JOURNAL")
        .env("COMPUTER_CONTROL_LOG", "warn")
        .env("XDG_RUNTIME_DIR", dir)
        .env("XDG_STATE_HOME", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn computer-control");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(url) = line.strip_prefix("computer-control: mcp endpoint at ") {
                    break url.trim().to_string();
                }
            }
            _ => panic!("the server exited before listening"),
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let port = url
        .trim_end_matches("/mcp")
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {url}"));
    (Killed(child), port)
}

/// The TLS terminator on `[::1]:port`, forwarding to the server on `127.0.0.1:port`.
fn tls_proxy(cert: &Path, key: &Path, port: u16) -> Killed {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/https/tls_proxy.py");
    let mut child = Command::new("python3")
        .arg(script)
        .arg(cert)
        .arg(key)
        .args(["::1", "127.0.0.1", &port.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the TLS proxy");
    let mut ready = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut ready)
        .expect("proxy output");
    assert_eq!(ready.trim(), "ready", "the TLS proxy did not start");
    Killed(child)
}

/// Runs `https_client` in a child process against `url`, trusting only `ca`.
fn client(url: &str, ca: &Path, expect: &str) -> std::process::Output {
    Command::new(std::env::current_exe().expect("test executable"))
        .args([
            "--ignored",
            "--exact",
            // This test, by its name in the crate's one test binary.
            "mcp_https::https_client",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("CC_HTTPS_URL", url)
        .env("CC_HTTPS_EXPECT", expect)
        .env_remove("SSL_CERT_DIR")
        .env("SSL_CERT_FILE", ca)
        .output()
        .expect("run the client")
}

#[test]
fn a_governed_click_over_https_commits_and_an_untrusted_certificate_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (ca, cert, key) = certificates(dir.path());
    let (_server, port) = serve(dir.path());
    let _proxy = tls_proxy(&cert, &key, port);
    let url = format!("https://[::1]:{port}/mcp");

    let trusted = client(&url, &ca, "commit");
    let out = String::from_utf8_lossy(&trusted.stdout);
    assert!(
        trusted.status.success() && out.contains("https client: committed"),
        "{out}\n{}",
        String::from_utf8_lossy(&trusted.stderr)
    );

    let untrusted = client(&url, &other_ca(dir.path()), "refused");
    let out = String::from_utf8_lossy(&untrusted.stdout);
    assert!(
        untrusted.status.success() && out.contains("https client: refused"),
        "{out}\n{}",
        String::from_utf8_lossy(&untrusted.stderr)
    );
}

/// The client half, run by the test above in a child process (with `--ignored`; in the
/// suite it would check nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the client half of the https test, run by it"]
async fn https_client() {
    let Ok(url) = std::env::var("CC_HTTPS_URL") else {
        return;
    };
    let connected = McpToolClient::connect_http(&url, Some(AGENT)).await;
    match std::env::var("CC_HTTPS_EXPECT").as_deref() {
        Ok("commit") => {
            let client = connected.expect("connect over https");
            let rt =
                GovernedRuntime::with_caller(Recording::new(client), RuntimeOptions::default());
            scenario::governed_click_commits_a_verified_receipt(&rt).await;
            println!("https client: committed");
        }
        _ => {
            let err = connected.expect_err("an untrusted certificate must be refused");
            println!("https client: refused ({err})");
        }
    }
}
