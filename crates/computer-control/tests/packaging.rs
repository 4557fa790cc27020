//! The packages, installed for real from the artifacts `scripts/package.sh` built once
//! (`COMPUTER_CONTROL_DIST`, which scripts/test.sh sets): the npm tarballs into a fresh
//! project and a fresh global prefix, the wheel into a fresh virtual environment and
//! through `uvx`; each started the way a host starts it and driven by the official MCP
//! Python SDK through initialize, `check_setup` and a capture. The README's host
//! snippets start the server with exactly the command and arguments they name. The
//! installed npm package and the wheel's `computer_control` module are loaded as plugin
//! directories (their manifest's entry answers `tools.list`). The aarch64 binary runs
//! under qemu-user; the x86-64 one needs nothing newer than glibc 2.17, drives GNOME and
//! the portal, and starts without PipeWire's client library. The Windows
//! wheel and npm package carry the PE binary, and the launcher picks it on Windows.

use crate::hosts_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hosts_support::{HOSTS, launch, load_plugin, readme_snippet};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The artifacts; their absence fails with the command that makes them.
fn dist() -> PathBuf {
    let dir = std::env::var_os("COMPUTER_CONTROL_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!(
                "COMPUTER_CONTROL_DIST is not set: build the packages once with scripts/package.sh \
             and point COMPUTER_CONTROL_DIST at its output (scripts/test.sh does both)"
            )
        });
    assert!(
        dir.join("npm").is_dir(),
        "{} holds no npm/: run scripts/package.sh",
        dir.display()
    );
    dir
}

fn find(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            n.starts_with(prefix) && n.ends_with(suffix)
        })
        .unwrap_or_else(|| panic!("no {prefix}*{suffix} in {}", dir.display()))
}

/// A fresh directory, removed on drop.
struct Fresh(PathBuf);

impl Fresh {
    fn new(name: &str) -> Fresh {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let d = std::env::temp_dir().join(format!("cc-pkg-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("fresh dir");
        Fresh(d)
    }
}

impl Drop for Fresh {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The MCP SDK's first minute with the server started as `command args` in `cwd`, on
/// the virtual desktop with a private journal; returns the script's output.
fn smoke(cwd: &Path, command: &str, args: &[String]) -> String {
    smoke_env(cwd, command, args, &[])
}

/// [`smoke`] with more environment variables for the server.
fn smoke_env(cwd: &Path, command: &str, args: &[String], envs: &[(&str, &str)]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/packaging/mcp_smoke.py");
    let out = Command::new("python3")
        .arg(&script)
        .args(["--env", "COMPUTER_CONTROL_PLATFORM=virtual"])
        .args(
            envs.iter()
                .flat_map(|(k, v)| ["--env".to_string(), format!("{k}={v}")]),
        )
        .arg("--env")
        .arg(format!(
            "COMPUTER_CONTROL_JOURNAL={}",
            cwd.join("journal.db").display()
        ))
        .arg("--cwd")
        .arg(cwd)
        .arg("--")
        .arg(command)
        .args(args)
        .output()
        .expect("python3 with the MCP SDK");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success() && text.contains("PASS screen_capture") && text.contains("DONE"),
        "{command} {args:?} in {}:\n{text}\n{}",
        cwd.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_file(cwd.join("journal.db"));
    text
}

fn npm(cwd: &Path) -> Command {
    let mut c = Command::new("npm");
    c.current_dir(cwd)
        .args([
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
            "--loglevel=error",
        ])
        .env("npm_config_cache", cwd.join(".npm-cache"));
    c
}

/// The launcher's tarball and the x86-64 platform package's.
fn tarballs(dist: &Path) -> (PathBuf, PathBuf) {
    let npm = dist.join("npm");
    (
        find(&npm, &format!("computer-control-{VERSION}"), ".tgz"),
        find(&npm, "computer-control-linux-x64-gnu-", ".tgz"),
    )
}

#[test]
fn npm_tarballs_install_and_the_readme_snippets_start_the_server() {
    let dist = dist();
    let (root, x64) = tarballs(&dist);
    let project = Fresh::new("npm-project");
    std::fs::write(project.0.join("package.json"), r#"{"private": true}"#).expect("package.json");
    run(npm(&project.0)
        .args(["install", "--offline"])
        .arg(&root)
        .arg(&x64));
    let bin = project.0.join("node_modules/.bin/computer-control");
    let v = run(Command::new(&bin).arg("--version"));
    assert_eq!(
        String::from_utf8_lossy(&v.stdout).trim(),
        format!("computer-control {VERSION}")
    );
    // The launcher picked the x64 package's binary, mode 0755 kept by npm pack.
    let real = project
        .0
        .join("node_modules/@computer-control/linux-x64-gnu/bin/computer-control");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&real)
            .expect("the platform binary")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }
    // Every README snippet, with exactly its command and arguments (npx finds the
    // package installed in this project, as it would after a first download).
    for host in HOSTS {
        let (command, args) = launch(host, &readme_snippet(host));
        smoke(&project.0, &command, &args);
    }
    // The installed bin itself, as `computer-control mcp`.
    smoke(&project.0, bin.to_str().expect("utf-8"), &["mcp".into()]);
    // The installed package is a plugin directory: its manifest's entry serves.
    load_plugin(
        &project.0.join("node_modules/computer-control"),
        Some("npm"),
        None,
        &project.0.join("plugin.db"),
    );
}

#[test]
fn npm_global_install_into_a_fresh_prefix() {
    let dist = dist();
    let (root, x64) = tarballs(&dist);
    let prefix = Fresh::new("npm-prefix");
    run(npm(&prefix.0)
        .args(["install", "--offline", "--global", "--prefix"])
        .arg(&prefix.0)
        .arg(&root)
        .arg(&x64));
    let bin = prefix.0.join("bin/computer-control");
    smoke(&prefix.0, bin.to_str().expect("utf-8"), &["mcp".into()]);
}

#[test]
fn without_its_platform_package_the_launcher_says_what_to_do() {
    let dist = dist();
    let (root, _) = tarballs(&dist);
    let project = Fresh::new("npm-alone");
    std::fs::write(project.0.join("package.json"), r#"{"private": true}"#).expect("package.json");
    run(npm(&project.0)
        .args(["install", "--offline", "--omit=optional"])
        .arg(&root));
    let out = Command::new(project.0.join("node_modules/.bin/computer-control"))
        .arg("--version")
        .output()
        .expect("launcher");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("@computer-control/linux-x64-gnu") && err.contains("--omit=optional"),
        "{err}"
    );
    // The override names any binary: the one from the x64 tarball's wheel twin.
    let out = Command::new(project.0.join("node_modules/.bin/computer-control"))
        .arg("--version")
        .env(
            "COMPUTER_CONTROL_BINARY",
            dist.join("bin/x86_64/computer-control"),
        )
        .output()
        .expect("launcher");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_aarch64_package_runs_under_qemu() {
    let dist = dist();
    let arm64 = find(
        &dist.join("npm"),
        "computer-control-linux-arm64-gnu-",
        ".tgz",
    );
    let dir = Fresh::new("arm64");
    run(Command::new("tar")
        .arg("xzf")
        .arg(&arm64)
        .arg("-C")
        .arg(&dir.0));
    let bin = dir.0.join("package/bin/computer-control");
    let file = run(Command::new("file").arg(&bin));
    let kind = String::from_utf8_lossy(&file.stdout);
    assert!(kind.contains("ARM aarch64"), "{kind}");
    // binfmt_misc may be absent (containers): qemu is named, with the cross libc.
    let args: Vec<String> = [
        "-L",
        "/usr/aarch64-linux-gnu",
        bin.to_str().expect("utf-8"),
        "mcp",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    smoke(&dir.0, "qemu-aarch64", &args);
    let wheel = find(
        &dist.join("wheels"),
        &format!("computer_control-{VERSION}-"),
        "aarch64.whl",
    );
    assert!(
        wheel.to_str().is_some_and(|w| w.contains("manylinux")),
        "{}",
        wheel.display()
    );
}

/// The Windows artifacts: a `win_amd64` wheel carrying `computer-control.exe`, the
/// `@computer-control/win32-x64` package carrying the same PE binary for `win32`/`x64`,
/// and the launcher picking that package's `.exe` on Windows (the platform set by a
/// preload; the binary cannot start on Linux, so the launcher's error names it, or it
/// runs where Wine is registered with binfmt_misc). The binary itself runs under Wine
/// in the conformance suite's Wine desk and `check.rs`.
#[test]
fn the_windows_wheel_and_package_carry_the_exe_and_the_launcher_picks_it() {
    let dist = dist();
    let wheel = find(
        &dist.join("wheels"),
        &format!("computer_control-{VERSION}-"),
        "win_amd64.whl",
    );
    let meta = run(Command::new("unzip")
        .arg("-p")
        .arg(&wheel)
        .arg(format!("computer_control-{VERSION}.dist-info/WHEEL")));
    let meta = String::from_utf8_lossy(&meta.stdout);
    assert!(meta.contains("Tag: py3-none-win_amd64"), "{meta}");
    let listing = run(Command::new("unzip").arg("-l").arg(&wheel));
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(
        listing.contains(&format!(
            "computer_control-{VERSION}.data/scripts/computer-control.exe"
        )),
        "{listing}"
    );

    let win = find(&dist.join("npm"), "computer-control-win32-x64-", ".tgz");
    let dir = Fresh::new("win32");
    run(Command::new("tar")
        .arg("xzf")
        .arg(&win)
        .arg("-C")
        .arg(&dir.0));
    let exe = dir.0.join("package/bin/computer-control.exe");
    let kind = run(Command::new("file").arg(&exe));
    let kind = String::from_utf8_lossy(&kind.stdout);
    assert!(kind.contains("PE32+") && kind.contains("x86-64"), "{kind}");
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.0.join("package/package.json")).expect("package.json"),
    )
    .expect("JSON");
    assert_eq!(manifest["name"], "@computer-control/win32-x64");
    assert_eq!(manifest["os"], serde_json::json!(["win32"]));
    assert_eq!(manifest["cpu"], serde_json::json!(["x64"]));

    // Both into a project (--force: npm would skip a win32 package on Linux).
    let (root, _) = tarballs(&dist);
    let project = Fresh::new("npm-win32");
    std::fs::write(project.0.join("package.json"), r#"{"private": true}"#).expect("package.json");
    run(npm(&project.0)
        .args(["install", "--offline", "--force", "--omit=optional"])
        .arg(&root)
        .arg(&win));
    let preload = project.0.join("as-windows.js");
    std::fs::write(
        &preload,
        "Object.defineProperty(process, 'platform', { value: 'win32' });\n\
         Object.defineProperty(process, 'arch', { value: 'x64' });\n",
    )
    .expect("preload");
    let out = Command::new("node")
        .arg("--require")
        .arg(&preload)
        .arg(
            project
                .0
                .join("node_modules/computer-control/bin/computer-control.js"),
        )
        .arg("--version")
        .output()
        .expect("node");
    let err = String::from_utf8_lossy(&out.stderr);
    let picked = Path::new("@computer-control")
        .join("win32-x64")
        .join("bin")
        .join("computer-control.exe");
    assert!(
        err.contains(picked.to_str().expect("utf-8"))
            || (out.status.success() && String::from_utf8_lossy(&out.stdout).contains(VERSION)),
        "the launcher did not start the win32 package's exe: {err}"
    );
}

#[test]
fn the_wheel_installs_into_a_fresh_venv_and_runs_with_uvx() {
    let dist = dist();
    let wheel = find(
        &dist.join("wheels"),
        &format!("computer_control-{VERSION}-"),
        "x86_64.whl",
    );
    let venv = Fresh::new("venv");
    run(Command::new("python3")
        .args(["-m", "venv"])
        .arg(venv.0.join("env")));
    run(Command::new(venv.0.join("env/bin/pip"))
        .args([
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .arg(&wheel));
    let bin = venv.0.join("env/bin/computer-control");
    smoke(&venv.0, bin.to_str().expect("utf-8"), &["mcp".into()]);
    // The installed module is a plugin directory whose entry is the original's,
    // `python -m computer_control serve`, with the environment's python first on PATH.
    let lib = venv.0.join("env/lib");
    let site = find(&lib, "python3", "");
    load_plugin(
        &site.join("site-packages/computer_control"),
        Some("python"),
        Some(&venv.0.join("env/bin")),
        &venv.0.join("plugin.db"),
    );
    // uvx, offline, from the wheel: what `uvx computer-control mcp` does after download.
    let uv_cache = venv.0.join("uv-cache");
    let args: Vec<String> = vec![
        "--offline".into(),
        "--cache-dir".into(),
        uv_cache.display().to_string(),
        "--from".into(),
        wheel.display().to_string(),
        "computer-control".into(),
        "mcp".into(),
    ];
    smoke(&venv.0, "uvx", &args);
}

/// Each driver's entry in a check report, by name: (status, reason, next step).
fn drivers(report: &serde_json::Value) -> Vec<(String, String, String, String)> {
    report["drivers"]
        .as_array()
        .unwrap_or_else(|| panic!("no drivers in {report}"))
        .iter()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap_or_default().to_string();
            (s("name"), s("status"), s("reason"), s("next_step"))
        })
        .collect()
}

/// The shipped Linux binary drives GNOME and the desktop portal: both drivers are built
/// in and load PipeWire's client library at run time (it is not linked: see the
/// libraries checked below). Where the library cannot be loaded (the loader pointed at
/// a file that is not there) the binary still starts and serves an MCP host's first
/// minute, and `check` (and the agent's `check_setup`) names the packages that provide
/// it.
#[test]
fn the_linux_binary_drives_gnome_and_starts_without_pipewire_s_library() {
    let dist = dist();
    let bin = dist.join("bin/x86_64/computer-control");
    let check = |envs: &[(&str, &str)], platform: &str| -> serde_json::Value {
        let out = run(Command::new(&bin)
            .args(["check", "--json", "--platform", platform])
            .envs(envs.iter().copied()));
        serde_json::from_slice(&out.stdout).expect("check --json prints JSON")
    };
    // PipeWire's library is on this machine (the GNOME desk's PipeWire brings it).
    let here = drivers(&check(&[], "virtual"));
    let names: Vec<&str> = here.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(names, ["wlroots", "gnome", "portal", "x11"], "{here:?}");
    for d in here.iter().filter(|d| d.0 == "gnome" || d.0 == "portal") {
        assert_eq!(d.1, "ok", "{d:?}");
        assert!(d.2.contains("libpipewire 0."), "{d:?}");
    }
    // `--platform gnome` is a value this binary accepts (without the driver it is
    // refused as a usage error): asked for off GNOME, it says why GNOME cannot start.
    let v = check(&[], "gnome");
    assert_eq!(v["platform"]["backend"], "gnome", "{v}");
    // The MCP Registry entry offers exactly the backends the shipped binary accepts.
    let help = run(Command::new(&bin).args(["mcp", "--help"]));
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    let mut accepted = crate::registry::platforms(&help);
    accepted.sort_unstable();
    let entry: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../server.json"))
            .expect("server.json"),
    )
    .expect("JSON");
    for p in entry["packages"].as_array().expect("packages") {
        let var = p["environmentVariables"]
            .as_array()
            .and_then(|e| e.iter().find(|v| v["name"] == "COMPUTER_CONTROL_PLATFORM"))
            .expect("COMPUTER_CONTROL_PLATFORM");
        let mut offered: Vec<&str> = var["choices"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_str())
            .collect();
        offered.sort_unstable();
        assert_eq!(offered, accepted, "{var}");
    }

    let gone = "/nonexistent/libpipewire-0.3.so.0";
    let without = [("COMPUTER_CONTROL_LIBPIPEWIRE", gone)];
    let missing = |report: &serde_json::Value| {
        for d in drivers(report)
            .into_iter()
            .filter(|d| d.0 == "gnome" || d.0 == "portal")
        {
            assert_eq!(d.1, "missing", "{d:?}");
            assert!(d.2.contains("libpipewire-0.3.so.0"), "{d:?}");
            assert!(
                d.3.contains("libpipewire-0.3-0") && d.3.contains("pipewire-libs"),
                "{d:?}"
            );
        }
    };
    let v = check(&without, "virtual");
    missing(&v);
    assert_eq!(v["ready"], true, "{v}");
    let dir = Fresh::new("no-pipewire");
    let text = smoke_env(
        &dir.0,
        bin.to_str().expect("utf-8"),
        &["mcp".into()],
        &without,
    );
    let report: serde_json::Value = text
        .lines()
        .find_map(|l| l.strip_prefix("CHECK "))
        .and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_else(|| panic!("no check report in {text}"));
    missing(&report);
}

/// The highest `GLIBC_x.y` symbol version a binary needs.
fn glibc_floor(bin: &Path) -> (u32, u32) {
    let out = run(Command::new("objdump").arg("-T").arg(bin));
    let text = String::from_utf8_lossy(&out.stdout);
    text.split("GLIBC_")
        .skip(1)
        .filter_map(|s| {
            let v: String = s
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
            Some((parts.next()??, parts.next().flatten().unwrap_or(0)))
        })
        .max()
        .expect("glibc symbols")
}

#[test]
fn the_x86_64_binary_needs_nothing_newer_than_glibc_2_17() {
    let dist = dist();
    let wheel = find(
        &dist.join("wheels"),
        &format!("computer_control-{VERSION}-"),
        "x86_64.whl",
    );
    let name = wheel
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    assert!(name.contains("manylinux_2_17_x86_64"), "{name}");
    let bin = dist.join("bin/x86_64/computer-control");
    let floor = glibc_floor(&bin);
    assert!(floor <= (2, 17), "needs GLIBC_{}.{}", floor.0, floor.1);
    let ldd = run(Command::new("ldd").arg(&bin));
    let libs = String::from_utf8_lossy(&ldd.stdout);
    for line in libs.lines() {
        let lib = line.trim();
        assert!(
            [
                "linux-vdso",
                "libgcc_s",
                "libm.",
                "libc.",
                "libpthread",
                "libdl",
                "librt",
                "ld-linux"
            ]
            .iter()
            .any(|ok| lib.contains(ok)),
            "an unexpected library: {lib}"
        );
    }
}

/// The publishing commands of docs/PACKAGING.md, dry-run on the very artifacts: each
/// npm tarball is what `npm publish` would upload under its package name, and every
/// wheel passes `twine check` (the metadata PyPI renders and validates).
#[test]
fn the_publishing_commands_pass_their_dry_runs() {
    let dist = dist();
    let npm_dir = dist.join("npm");
    let mut published = Vec::new();
    for entry in std::fs::read_dir(&npm_dir).expect("npm dir") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("tgz") {
            continue;
        }
        let fresh = Fresh::new("publish");
        let out = run(Command::new("npm")
            .args(["publish", "--dry-run", "--access", "public"])
            .arg(&path)
            .current_dir(&fresh.0));
        let said = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        let name = said
            .lines()
            .find_map(|l| l.trim().strip_prefix("+ "))
            .unwrap_or_else(|| panic!("npm publish --dry-run named no package:\n{said}"))
            .to_string();
        assert!(name.ends_with(&format!("@{VERSION}")), "{name}");
        published.push(name);
    }
    published.sort();
    assert!(
        published.contains(&format!("computer-control@{VERSION}"))
            && published.contains(&format!("@computer-control/linux-x64-gnu@{VERSION}")),
        "{published:?}"
    );
    let wheels: Vec<PathBuf> = std::fs::read_dir(dist.join("wheels"))
        .expect("wheels dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("whl"))
        .collect();
    assert!(!wheels.is_empty(), "no wheel in {}", dist.display());
    let out = run(Command::new("python3")
        .args(["-m", "twine", "check", "--strict"])
        .args(&wheels));
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(said.matches("PASSED").count(), wheels.len(), "{said}");
}
