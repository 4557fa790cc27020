//! The desk fleet (docs/FLEET.md) on this machine: the Kubernetes manifests of
//! `deploy/kubernetes` validated against the Kubernetes schemas (`kubernetes-validate`),
//! then played with `podman kube play` as three desks of the image `scripts/image.sh`
//! built (`COMPUTER_CONTROL_DESK_IMAGE`, which scripts/test.sh sets). Each desk is
//! reached by its name under the headless Service, as the operator plane will reach
//! it: `/health` ready, a capture over MCP with the agent token from its Secret, the
//! operator channel open to the operator token only, the journal on the desk's own
//! volume, a read-only root as an unprivileged user; then a desk whose X server died
//! is unready and `/health` names the display, until the desk is restarted.
//!
//! Then the operator plane over them, as its Deployment runs it (a pod on the same
//! network): it finds the three desks and shows a fourth, whose display never starts,
//! as not healthy; agents on the desks through the official MCP Python SDK
//! (`tests/fleet/agents.py`); governed captures waiting on two desks approved in the
//! fleet console in chromium; stop-all while every desk types (each stopped with
//! nothing held, each typing answered `safety_stopped`); a desk's server killed and
//! brought back by its restart policy, its receipt replayed from the journal and every
//! journal's chain verified by the plane. Everything is torn down after.
//!
//! What podman cannot play is rewritten by `tests/fleet/podman_play.py`, which names
//! each change. Needs root (rootful podman).

use crate::governed_http_support::Agent;
use crate::http_support;

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

const DESKS: usize = 3;
/// The Kubernetes version the manifests are validated against.
const KUBERNETES: &str = "1.33.0";
const AGENT_PORT: u16 = 8765;
const OPERATOR_PORT: u16 = 8766;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn base() -> PathBuf {
    repo().join("deploy/kubernetes")
}

/// The image; its absence fails with the command that makes it.
fn image() -> String {
    std::env::var("COMPUTER_CONTROL_DESK_IMAGE").unwrap_or_else(|_| {
        panic!(
            "COMPUTER_CONTROL_DESK_IMAGE is not set: build the desk image with \
             scripts/image.sh (it prints the name) and set it (scripts/test.sh does both)"
        )
    })
}

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env("CONTAINERS_CONF", containers_conf())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"))
}

fn ok(program: &str, args: &[&str]) -> String {
    let out = run(program, args);
    assert!(
        out.status.success(),
        "{program} {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The podman configuration scripts/image.sh wrote beside its cache (or the caller's).
fn containers_conf() -> String {
    std::env::var("CONTAINERS_CONF").unwrap_or_else(|_| {
        let cache = std::env::var("DESK_IMAGE_CACHE")
            .unwrap_or_else(|_| "/var/tmp/computer-control-desk".into());
        format!("{cache}/containers.conf")
    })
}

/// The resource files the kustomization lists.
fn resources() -> Vec<PathBuf> {
    let k = std::fs::read_to_string(base().join("kustomization.yaml")).expect("kustomization");
    let files: Vec<PathBuf> = k
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|f| base().join(f.trim()))
        .collect();
    assert!(files.len() >= 3, "{files:?}");
    files
}

fn validate(files: &[PathBuf]) -> Output {
    let mut args = vec!["-k", KUBERNETES, "--strict"];
    args.extend(files.iter().map(|f| f.to_str().expect("utf-8 path")));
    run("kubernetes-validate", &args)
}

#[test]
fn manifests_pass_the_kubernetes_schemas() {
    let files = resources();
    let out = validate(&files);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    for kind in [
        "statefulset/desk",
        "service/desks",
        "networkpolicy/desks",
        "configmap/computer-control-policy",
        "deployment/fleet-plane",
        "service/fleet-plane",
        "networkpolicy/fleet-plane",
    ] {
        assert!(
            text.contains(&format!("passed for resource {kind}")),
            "{kind}: {text}"
        );
    }
    // The validator rejects what a cluster would: a mistyped field fails.
    let dir = tempfile::tempdir().expect("temp dir");
    let broken = dir.path().join("statefulset.yaml");
    let s = std::fs::read_to_string(base().join("statefulset.yaml")).expect("statefulset");
    std::fs::write(&broken, s.replace("replicas: 3", "replicas: three")).expect("write");
    let out = validate(&[broken]);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("is not of type 'integer'"), "{text}");
}

/// 32 random bytes as hex: a token (hex is also valid base64, which podman 4.3 writes
/// into the Secret's file as it is, where Kubernetes would decode it).
fn token() -> String {
    let mut b = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
        .expect("random bytes");
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The played fleet; torn down on drop, volumes and secrets included.
struct Fleet {
    dir: tempfile::TempDir,
    play: PathBuf,
    agent: String,
    operator: String,
}

/// The policy ConfigMap (podman makes it a volume of that name).
const POLICY: &str = "computer-control-policy";

const SECRETS: [&str; 2] = [
    "computer-control-agent-token",
    "computer-control-operator-token",
];

/// One played fleet at a time: every play uses the same pod and volume names.
static PLAYING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

impl Fleet {
    fn play() -> Fleet {
        Fleet::play_with(&[])
    }

    /// Plays the base with `podman_play.py`'s options (`--policy FILE`, `--unready N`).
    fn play_with(options: &[&str]) -> Fleet {
        assert!(
            run("id", &["-u"]).stdout.starts_with(b"0"),
            "the fleet test plays pods with rootful podman: run it as root"
        );
        let image = image();
        let dir = tempfile::tempdir().expect("temp dir");
        let play = dir.path().join("play.json");
        let script = repo().join("crates/computer-control/tests/fleet/podman_play.py");
        let kustomization = base();
        let mut args = vec![
            script.to_str().expect("utf-8"),
            kustomization.to_str().expect("utf-8"),
            &image,
        ];
        args.extend_from_slice(options);
        let rendered = ok("python3", &args);
        std::fs::write(&play, rendered).expect("write the play file");
        let fleet = Fleet {
            dir,
            play,
            agent: token(),
            operator: token(),
        };
        // What an earlier, interrupted run left behind.
        fleet.teardown();
        for (name, value) in SECRETS.iter().zip([&fleet.agent, &fleet.operator]) {
            let file = fleet.dir.path().join(format!("{name}.json"));
            let secret = json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": name}, "data": {"token": value}});
            std::fs::write(&file, secret.to_string()).expect("write the secret");
            ok(
                "podman",
                &["secret", "create", name, file.to_str().expect("utf-8")],
            );
        }
        ok(
            "podman",
            &["kube", "play", fleet.play.to_str().expect("utf-8")],
        );
        fleet
    }

    fn teardown(&self) {
        let _ = run(
            "podman",
            &["kube", "down", self.play.to_str().unwrap_or_default()],
        );
        for s in SECRETS {
            let _ = run("podman", &["secret", "rm", s]);
        }
        // Volumes outlive `kube down`: the claims, the emptyDirs and the secrets' copies
        // (which a container restarting as `kube down` stops may make again: retried).
        let mut volumes: Vec<String> = SECRETS.iter().map(|s| s.to_string()).collect();
        volumes.push(POLICY.to_string());
        // The desks, and the ones `--unready` adds.
        for i in 0..DESKS + 1 {
            for v in ["journal", "tmp", "runtime"] {
                volumes.push(format!("{v}-desk-{i}"));
            }
        }
        for _ in 0..20 {
            for v in &volumes {
                let _ = run("podman", &["volume", "rm", "--force", v]);
            }
            let left = volumes
                .iter()
                .any(|v| run("podman", &["volume", "exists", v]).status.success());
            if !left {
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// The desk's container (podman names it `<pod>-<container>`).
    fn container(i: usize) -> String {
        format!("desk-{i}-desk")
    }

    /// The pod's address; `None` while it has none (its pod restarting).
    fn ip(i: usize) -> Option<IpAddr> {
        Fleet::address_of(&Fleet::container(i))
    }

    fn address_of(container: &str) -> Option<IpAddr> {
        let out = ok(
            "podman",
            &[
                "inspect",
                "--format",
                "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
                container,
            ],
        );
        out.split_whitespace().next().and_then(|a| a.parse().ok())
    }

    fn logs(i: usize) -> String {
        let out = run("podman", &["logs", &Fleet::container(i)]);
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// An HTTP client that finds `desk-N.desks` at the pod's address, as the cluster's DNS
/// would under the headless Service.
fn client_for(i: usize) -> (reqwest::Client, String) {
    try_client_for(i).unwrap_or_else(|| panic!("desk-{i} has no address"))
}

fn try_client_for(i: usize) -> Option<(reqwest::Client, String)> {
    let _ = http_support::client(); // installs the crypto provider
    let name = format!("desk-{i}.desks");
    let c = reqwest::Client::builder()
        .no_proxy()
        // A pod gone from its address does not refuse a connection, it lets it hang.
        .connect_timeout(Duration::from_secs(3))
        .timeout(Duration::from_secs(60))
        .resolve(&name, SocketAddr::new(Fleet::ip(i)?, 0))
        .build()
        .expect("client");
    Some((c, name))
}

async fn health(c: &reqwest::Client, name: &str) -> Option<(u16, Value)> {
    // Short: a poll stuck on a restarting pod's old address would eat the whole wait.
    let r = c
        .get(format!("http://{name}:{AGENT_PORT}/health"))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .ok()?;
    let status = r.status().as_u16();
    Some((status, r.json().await.ok()?))
}

/// Polls `/health` until `done` holds (60 s at most).
async fn health_until(i: usize, what: &str, done: impl Fn(u16, &Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = None;
    while Instant::now() < deadline {
        // Resolved again each time: a restarted pod may come back at another address.
        let answer = match try_client_for(i) {
            Some((c, name)) => health(&c, &name).await,
            None => None,
        };
        if let Some((status, body)) = answer {
            if done(status, &body) {
                return body;
            }
            last = Some((status, body));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!(
        "desk-{i}: {what} not reached; last /health {last:?}\n{}",
        Fleet::logs(i)
    );
}

async fn agent(i: usize, token: &str) -> Agent {
    let (c, name) = client_for(i);
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://{name}:{AGENT_PORT}/mcp"))
            .auth_header(token.to_string());
    let transport = StreamableHttpClientTransport::with_client(c, config);
    tokio::time::timeout(Duration::from_secs(60), ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_desks_play_from_the_manifests() {
    let _one = PLAYING.lock().await;
    let fleet = Fleet::play();

    for i in 0..DESKS {
        let h = health_until(i, "ready", |s, _| s == 200).await;
        for part in ["display", "driver", "journal"] {
            assert_eq!(h[part]["ready"], true, "desk-{i} {part}: {h}");
        }
        assert_eq!(h["platform"], "x11", "{h}");
        assert_eq!(h["ok"], true, "{h}");
    }

    for i in 0..DESKS {
        // A plain (governed-free) tool over MCP with the agent token of its Secret.
        let a = agent(i, &fleet.agent).await;
        let shot =
            crate::governed_http_support::call(&a, "screen_capture", json!({"format": "png"}))
                .await;
        assert_ne!(shot.is_error, Some(true), "desk-{i}: {shot:?}");
        let image = shot
            .content
            .iter()
            .find_map(|c| c.as_image())
            .expect("an image block");
        assert_eq!(image.mime_type, "image/png");
        assert!(!image.data.is_empty());
        let meta = shot.structured_content.expect("structured");
        // The canvas has the screen's 1280x800 shape (DESK_SCREEN in the manifest).
        let (w, h) = (
            meta["canvas"]["display_width_px"].as_u64().expect("width"),
            meta["canvas"]["display_height_px"]
                .as_u64()
                .expect("height"),
        );
        assert_eq!(w * 800, h * 1280, "desk-{i}: {meta}");
        let _ = a.cancel().await;
    }

    // The operator channel: the operator token only, and no MCP there; the agent's
    // port serves no operator route.
    let (c, name) = client_for(0);
    let get = |port: u16, path: &str, token: &str| {
        c.get(format!("http://{name}:{port}{path}"))
            .bearer_auth(token)
            .send()
    };
    let r = get(OPERATOR_PORT, "/approvals", &fleet.operator)
        .await
        .expect("approvals");
    assert_eq!(r.status().as_u16(), 200);
    let r = get(OPERATOR_PORT, "/approvals", &fleet.agent)
        .await
        .expect("approvals");
    assert_eq!(r.status().as_u16(), 403);
    let r = get(OPERATOR_PORT, "/mcp", &fleet.operator)
        .await
        .expect("mcp");
    assert_eq!(r.status().as_u16(), 404);
    let r = get(AGENT_PORT, "/approvals", &fleet.operator)
        .await
        .expect("approvals");
    assert_eq!(r.status().as_u16(), 404);
    // A Host the desk was not told about is refused (DNS-rebinding protection).
    let r = c
        .get(format!("http://{name}:{AGENT_PORT}/health"))
        .header("host", format!("elsewhere.example:{AGENT_PORT}"))
        .send()
        .await
        .expect("health");
    assert_eq!(r.status().as_u16(), 403);

    // Each journal is on its desk's own volume, as a PersistentVolumeClaim keeps it.
    for i in 0..DESKS {
        let mount = ok(
            "podman",
            &[
                "volume",
                "inspect",
                "--format",
                "{{.Mountpoint}}",
                &format!("journal-desk-{i}"),
            ],
        );
        let db = Path::new(mount.trim()).join("governance.db");
        assert!(db.is_file(), "desk-{i}: no journal at {}", db.display());
    }

    // An unprivileged user on a read-only root.
    let c0 = Fleet::container(0);
    assert_eq!(ok("podman", &["exec", &c0, "id", "-u"]).trim(), "10001");
    let w = run("podman", &["exec", &c0, "touch", "/usr/local/bin/x"]);
    assert!(!w.status.success(), "the root filesystem took a write");

    // Xvfb gone: the desk is unready and says which part is not ready.
    let c2 = Fleet::container(2);
    ok(
        "podman",
        &["exec", &c2, "/bin/sh", "-c", "kill $(cat /tmp/.X0-lock)"],
    );
    let h = health_until(2, "unready", |s, _| s == 503).await;
    assert_eq!(h["ok"], false, "{h}");
    assert_eq!(h["display"]["ready"], false, "{h}");
    assert_eq!(h["journal"]["ready"], true, "{h}");
    assert!(
        h["display"]["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("/tmp/.X11-unix/X0"),
        "{h}"
    );

    // Restarted, as the kubelet restarts a desk whose liveness probe keeps failing: the
    // new container clears the dead display's lock on the pod's /tmp (a volume, kept)
    // and serves again, on the same journal.
    // (`pod restart` of podman 4.3 stops a pod with a restart policy and leaves it so.)
    ok("podman", &["pod", "stop", "desk-2"]);
    ok("podman", &["pod", "start", "desk-2"]);
    let h = health_until(2, "ready after the restart", |s, _| s == 200).await;
    assert_eq!(h["display"]["ready"], true, "{h}");
    assert_eq!(h["state"], "idle", "a fresh server: {h}");

    drop(fleet);
}

/// The operator plane's pod, reached as `fleet-plane:8770` (its Service's name).
const PLANE: &str = "fleet-plane";
const PLANE_PORT: u16 = 8770;

fn plane_client() -> reqwest::Client {
    let _ = http_support::client(); // installs the crypto provider
    let ip = Fleet::address_of("fleet-plane-plane").expect("the plane's pod has an address");
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(60))
        .resolve(PLANE, SocketAddr::new(ip, 0))
        .build()
        .expect("client")
}

async fn plane_call(token: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut req = plane_client()
        .request(
            method.parse().expect("method"),
            format!("http://{PLANE}:{PLANE_PORT}{path}"),
        )
        .bearer_auth(token);
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    match req.send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.json().await.unwrap_or(Value::Null))
        }
        Err(e) => (0, json!({"error": e.to_string()})),
    }
}

/// Polls the plane's `GET /fleet` until `done` holds (90 s at most).
async fn plane_until(token: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut last = Value::Null;
    while Instant::now() < deadline {
        let (status, f) = plane_call(token, "GET", "/fleet", None).await;
        if status == 200 && done(&f) {
            return f;
        }
        last = f;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let logs = run("podman", &["logs", "fleet-plane-plane"]);
    panic!(
        "the plane: {what} not reached; last /fleet {last:#}\n{}",
        String::from_utf8_lossy(&logs.stderr)
    );
}

/// Desk `i`'s view on the plane (the plane names a `--desk` by its authority).
fn plane_desk(fleet: &Value, i: usize) -> &Value {
    let name = format!("desk-{i}:{OPERATOR_PORT}");
    fleet["desks"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["name"] == name.as_str()))
        .unwrap_or(&Value::Null)
}

/// `NAME=ADDRESS` of desk `i` for tests/fleet/agents.py.
fn agent_arg(i: usize) -> String {
    let ip = Fleet::ip(i).unwrap_or_else(|| panic!("desk-{i} has no address"));
    format!("desk-{i}.desks={ip}")
}

fn agents_script(args: &[String]) -> Command {
    let mut c = Command::new("python3");
    c.arg(repo().join("crates/computer-control/tests/fleet/agents.py"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

/// Waits for an agents.py run: its JSON lines, or the failure with its stderr.
fn agents_done(child: std::process::Child, what: &str) -> Vec<Value> {
    let out = child.wait_with_output().expect("agents.py ran");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "agents {what}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_plane_governs_the_played_desks() {
    let _one = PLAYING.lock().await;
    // The fleet's policy sends every capture to a person (as an overlay would set it).
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = dir.path().join("config.json");
    std::fs::write(
        &policy,
        json!({"safety": {"rules": [{"match": {"tool": "screen.capture"}, "effect": "confirm"}]}})
            .to_string(),
    )
    .expect("write the policy");
    let fleet = Fleet::play_with(&[
        "--policy",
        policy.to_str().expect("utf-8"),
        "--unready",
        "1",
    ]);
    let op = fleet.operator.clone();

    // The plane (its Deployment, played as a pod) finds every desk: three healthy, the
    // fourth, whose display never starts, shown as not healthy.
    let f = plane_until(&op, "three healthy desks and one not", |f| {
        (0..DESKS).all(|i| plane_desk(f, i)["healthy"] == true)
            && plane_desk(f, DESKS)["name"].is_string()
            && plane_desk(f, DESKS)["error"].is_string()
    })
    .await;
    let broken = plane_desk(&f, DESKS);
    assert_eq!(broken["healthy"], false, "{broken:#}");
    // An agent's token opens nothing on the plane.
    let (status, _) = plane_call(&fleet.agent, "GET", "/fleet", None).await;
    assert_eq!(status, 401);

    // Agents (the MCP Python SDK) on desks 0 and 1 ask for a governed capture: it
    // waits for the operator, who approves both in the fleet console (chromium).
    let govern = agents_script(
        &["govern".into(), fleet.agent.clone()]
            .into_iter()
            .chain((0..2).map(agent_arg))
            .collect::<Vec<_>>(),
    )
    .spawn()
    .expect("python3");
    plane_until(&op, "a capture waiting on desks 0 and 1", |f| {
        (0..2).all(|i| {
            plane_desk(f, i)["approvals"]
                .as_array()
                .is_some_and(|a| a.len() == 1)
        })
    })
    .await;
    let plane_ip = Fleet::address_of("fleet-plane-plane").expect("the plane's address");
    let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    let out = Command::new("node")
        .arg("fleet_test.js")
        .current_dir(&browser)
        .env("CC_BASE", format!("http://{PLANE}:{PLANE_PORT}"))
        .env("CC_RESOLVE", format!("{PLANE} {plane_ip}"))
        .env("CC_OPERATOR_TOKEN", &op)
        .env("CC_AGENT_TOKEN", &fleet.agent)
        .env(
            "CC_DESKS",
            format!("desk-0:{OPERATOR_PORT},desk-1:{OPERATOR_PORT}"),
        )
        .env("CC_STEPS", "approve")
        .output()
        .expect("node is needed for the browser test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or(Value::Null);
    assert!(
        out.status.success() && result["ok"] == true,
        "browser: {result:#}\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let governed = agents_done(govern, "govern");
    assert_eq!(governed.len(), 2, "{governed:?}");
    let first = governed
        .iter()
        .find(|g| g["desk"] == "desk-0.desks")
        .expect("desk-0's receipt")
        .clone();

    // Every desk typing, then stop-all from the plane: each desk stopped with nothing
    // held, and each agent answered `safety_stopped`.
    let typing = agents_script(
        &["type".into(), fleet.agent.clone()]
            .into_iter()
            .chain((0..DESKS).map(agent_arg))
            .collect::<Vec<_>>(),
    )
    .spawn()
    .expect("python3");
    plane_until(&op, "typing on every desk", |f| {
        (0..DESKS).all(|i| {
            plane_desk(f, i)["recent"].as_array().is_some_and(|r| {
                r.iter().any(|e| {
                    e["type"] == "action.started" && e["payload"]["tool"] == "keyboard.type"
                })
            })
        })
    })
    .await;
    let (status, stop) = plane_call(&op, "POST", "/fleet/stop-all", None).await;
    assert_eq!(status, 200, "{stop}");
    for i in 0..DESKS {
        let name = format!("desk-{i}:{OPERATOR_PORT}");
        let d = stop["desks"]
            .as_array()
            .and_then(|d| d.iter().find(|d| d["desk"] == name.as_str()))
            .unwrap_or_else(|| panic!("{name} in {stop:#}"));
        assert_eq!(d["stopped"], true, "{d}");
        assert_eq!(d["held"], json!({"keys": [], "buttons": []}), "{d}");
    }
    let typed = agents_done(typing, "type");
    assert_eq!(typed.len(), DESKS, "{typed:?}");
    for t in &typed {
        assert_eq!(t["is_error"], true, "{t}");
        assert!(t.to_string().contains("safety_stopped"), "{t}");
    }
    for i in 0..DESKS {
        let (status, out) = plane_call(
            &op,
            "POST",
            "/fleet/resume",
            Some(json!({"desk": format!("desk-{i}:{OPERATOR_PORT}")})),
        )
        .await;
        assert_eq!(status, 200, "{out}");
    }

    // Desk 0's server killed (a crash, not a stop): its restart policy brings the
    // container back on the same journal volume.
    let pid = ok(
        "podman",
        &[
            "inspect",
            "--format",
            "{{.State.Pid}}",
            &Fleet::container(0),
        ],
    );
    ok("kill", &["-9", pid.trim()]);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n = ok(
            "podman",
            &[
                "inspect",
                "--format",
                "{{.RestartCount}}",
                &Fleet::container(0),
            ],
        );
        if n.trim().parse::<u32>().unwrap_or(0) >= 1 {
            break;
        }
        assert!(Instant::now() < deadline, "desk-0 was not restarted");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    health_until(0, "ready after the restart", |s, _| s == 200).await;
    plane_until(&op, "desk-0 healthy again", |f| {
        plane_desk(f, 0)["healthy"] == true
    })
    .await;
    // Its receipt is replayed from the journal, not performed again.
    let sid = first["session_id"]
        .as_str()
        .expect("session id")
        .to_string();
    let replayed = agents_done(
        agents_script(&[
            "replay".into(),
            fleet.agent.clone(),
            sid.clone(),
            first["lease_id"].as_str().expect("lease id").to_string(),
            agent_arg(0),
        ])
        .spawn()
        .expect("python3"),
        "replay",
    );
    assert_eq!(
        replayed[0]["receipt"]["receiptId"], first["receipt"]["receiptId"],
        "{replayed:?} {first}"
    );
    assert_eq!(replayed[0]["receipt"]["status"], "committed");
    // The plane gathers every journal and verifies each chain: desk-0's kept the
    // session from before the restart.
    let (status, journals) = plane_call(&op, "GET", "/fleet/journals", None).await;
    assert_eq!(status, 200, "{journals}");
    let desk0 = journals["desks"]
        .as_array()
        .and_then(|d| {
            d.iter()
                .find(|d| d["desk"] == format!("desk-0:{OPERATOR_PORT}").as_str())
        })
        .expect("desk-0's journal")
        .clone();
    assert_eq!(desk0["verified"], true, "{desk0:#}");
    assert!(
        desk0["sessions"].as_array().is_some_and(|s| s
            .iter()
            .any(|s| s["session_id"] == sid.as_str() && s["verified"] == true)),
        "{desk0:#}"
    );
    for i in 1..DESKS {
        let name = format!("desk-{i}:{OPERATOR_PORT}");
        let d = journals["desks"]
            .as_array()
            .and_then(|d| d.iter().find(|d| d["desk"] == name.as_str()))
            .unwrap_or_else(|| panic!("{name}: {journals:#}"));
        assert_eq!(d["verified"], true, "{d:#}");
    }
    drop(fleet);
}
