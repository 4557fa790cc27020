//! Accepting and serving connections ourselves (HTTP/1.1 through hyper), because
//! `axum::serve` offers neither a header-read timeout nor a say in which connections
//! to keep: every connection is counted in [`Limits`] (its handle goes into each of
//! its requests' extensions), an anonymous one closed for a newer one is dropped at
//! once, and a connection that does not send a request's headers within
//! `http.header_timeout_ms`, or waits longer than that for its next request, is closed.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper::service::Service as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::limits::{Conn, Limits};

/// After an accept error (out of descriptors), a pause before the next try, so the
/// loop does not spin while connections close.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Serves `app` on `listener` until `stop` turns true; then asks every connection to
/// finish its request in flight and close, and waits for them (the caller bounds that
/// wait; dropping this future closes what is left).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Arc<Limits>,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let conn = limits.open();
                    let timeout = limits.bounds().header_timeout;
                    conns.spawn(connection(stream, app.clone(), conn, timeout, stop.clone()));
                }
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
            _ = stopped(&mut stop) => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);
    while conns.join_next().await.is_some() {}
    Ok(())
}

/// One connection, until the client closes it, a timeout or an eviction closes it, or
/// the server stops.
async fn connection(
    stream: tokio::net::TcpStream,
    app: Router,
    conn: Arc<Conn>,
    header_timeout: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let svc = TowerToHyperService::new(app);
    let tagged = conn.clone();
    let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
        req.extensions_mut().insert(tagged.clone());
        svc.call(req)
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let served = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(served);
    tokio::select! {
        r = served.as_mut() => {
            if let Err(e) = r {
                tracing::debug!("connection closed: {e}");
            }
        }
        _ = conn.evicted() => {}
        _ = stopped(&mut stop) => {
            served.as_mut().graceful_shutdown();
            let _ = served.await;
        }
    }
}

/// Completes once the server stops (or nobody can tell it to any more).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}
