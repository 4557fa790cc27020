//! Replays every committed fuzz corpus (`fuzz/corpus/<target>/`) and every saved crash
//! (`fuzz/artifacts/<target>/`) through its check, on stable Rust: what the fuzzer once
//! found or covered stays a regression test.

use std::path::{Path, PathBuf};

use cc_fuzz_checks::CHECKS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn replay(target: &str, check: fn(&[u8])) {
    let corpus = inputs(&fuzz_dir().join("corpus").join(target));
    assert!(!corpus.is_empty(), "no committed corpus for {target}");
    let artifacts = inputs(&fuzz_dir().join("artifacts").join(target));
    for file in corpus.iter().chain(&artifacts) {
        let data = std::fs::read(file).expect("a corpus file");
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(
            outcome.is_ok(),
            "{target}: {} breaks an invariant",
            file.display()
        );
    }
}

#[test]
fn every_target_has_a_check_and_a_corpus() {
    let targets: Vec<String> = std::fs::read_dir(fuzz_dir().join("fuzz_targets"))
        .expect("fuzz/fuzz_targets")
        .filter_map(Result::ok)
        .filter_map(|e| {
            e.path()
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .collect();
    for t in &targets {
        assert!(
            CHECKS.iter().any(|(name, _)| name == t),
            "fuzz target {t} has no check"
        );
    }
    assert_eq!(targets.len(), CHECKS.len(), "a check without a fuzz target");
}

#[test]
fn stdio_line() {
    replay("stdio_line", cc_fuzz_checks::stdio_line::check);
}

#[test]
fn tool_args() {
    replay("tool_args", cc_fuzz_checks::tool_args::check);
}

#[test]
fn config_layers() {
    replay("config_layers", cc_fuzz_checks::config_layers::check);
}

#[test]
fn contract_canon() {
    replay("contract_canon", cc_fuzz_checks::contract_canon::check);
}

#[test]
fn http_auth() {
    replay("http_auth", cc_fuzz_checks::http_auth::check);
}

#[test]
fn governed() {
    replay("governed", cc_fuzz_checks::governed::check);
}
