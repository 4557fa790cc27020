//! `computer-control`: the binary. CLI, platform selection and transports; all
//! behaviour lives in the engine.

use std::process::ExitCode;

use clap::Parser;
use computer_control::{allocator, cli};

fn main() -> ExitCode {
    allocator::keep_small();
    // `cargo test --workspace --all-features` builds this binary with reqwest's rustls
    // but no provider (the client library's `rustls` feature, unified in); without one
    // the fleet plane's HTTP client cannot be built. Test builds only.
    #[cfg(feature = "fault-injection")]
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = cli::Cli::parse();
    init_logging();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("computer-control: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Logs go to stderr only: stdout carries protocol traffic.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("COMPUTER_CONTROL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
