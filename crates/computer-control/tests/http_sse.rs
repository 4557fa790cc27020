//! `GET /events` (PROTOCOL §6): the SSE shape, the exact replay of the last 200 events,
//! resuming with `Last-Event-ID`, keep-alives, and slow subscribers that never slow the
//! server.

use crate::http_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http_support::{AGENT, OPERATOR, Server, client, pause_batch, stalled_subscriber};
use serde_json::{Value, json};

const T: Duration = Duration::from_secs(30);

async fn last_seq(s: &Server) -> u64 {
    s.health().await["last_seq"].as_u64().unwrap()
}

#[tokio::test]
async fn a_new_subscriber_gets_exactly_the_last_200_then_live_events() {
    let s = Server::start();
    // Subscribed from the start: sees every event live.
    let mut early = s.events(OPERATOR, None).await;
    s.call(AGENT, "session.start", json!({})).await;
    pause_batch(&s, 150).await;
    let last = last_seq(&s).await;
    assert!(last > 250, "{last}");
    let live = early.until_seq(last, T).await;
    assert_eq!(
        live.len() as u64,
        last,
        "the early subscriber saw every event"
    );

    let mut late = s.events(AGENT, None).await;
    let replay = late.until_seq(last, T).await;
    let ids: Vec<u64> = replay.iter().map(|m| m.id.unwrap()).collect();
    assert_eq!(
        ids,
        (last - 199..=last).collect::<Vec<_>>(),
        "exactly the last 200"
    );
    for (m, original) in replay.iter().zip(&live[live.len() - 200..]) {
        assert_eq!(m.event.as_deref(), Some("message"));
        let d = m.data.as_ref().unwrap();
        assert_eq!(d["seq"].as_u64(), m.id, "id is the seq");
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["type", "payload", "seq", "at"]);
        assert_eq!(
            Some(d),
            original.data.as_ref(),
            "replayed exactly as first sent"
        );
    }
    // Then live ones.
    s.call(
        AGENT,
        "tools.call",
        json!({"tool": "wait.pause", "arguments": {"ms": 0}}),
    )
    .await;
    let next = late.next_event(T).await.unwrap();
    assert_eq!(next.id, Some(last + 1));
    assert_eq!(next.data.unwrap()["type"], "action.started");
}

#[tokio::test]
async fn last_event_id_resumes_with_only_what_was_missed() {
    let s = Server::start();
    s.call(AGENT, "session.start", json!({})).await;
    pause_batch(&s, 10).await;
    let mut first = s.events(AGENT, None).await;
    let seen = first.until_seq(12, T).await;
    let k = seen.last().unwrap().id.unwrap();
    drop(first);
    // Missed while disconnected (fewer than 200).
    pause_batch(&s, 40).await;
    let last = last_seq(&s).await;
    let mut again = s.events(AGENT, Some(k)).await;
    let got = again.until_seq(last, T).await;
    let ids: Vec<u64> = got.iter().map(|m| m.id.unwrap()).collect();
    assert_eq!(
        ids,
        (k + 1..=last).collect::<Vec<_>>(),
        "nothing lost, nothing repeated"
    );
    // Live after the missed ones.
    s.call(
        AGENT,
        "tools.call",
        json!({"tool": "wait.pause", "arguments": {"ms": 0}}),
    )
    .await;
    assert_eq!(again.next_event(T).await.unwrap().id, Some(last + 1));

    // Resuming from further back than the ring reaches: a gap note, then the ring.
    pause_batch(&s, 120).await;
    let last = last_seq(&s).await;
    let mut old = s.events(AGENT, Some(k)).await;
    let note = old.next(T).await.unwrap();
    assert!(
        note.data.is_none() && note.comments.iter().any(|c| c.starts_with("gap:")),
        "{note:?}"
    );
    let got = old.until_seq(last, T).await;
    assert_eq!(got.first().unwrap().id, Some(last - 199));
    assert_eq!(got.len(), 200);

    // An id from the future (the server restarted): the whole ring again.
    let mut future = s.events(AGENT, Some(last + 1_000_000)).await;
    let got = future.until_seq(last, T).await;
    assert_eq!(got.len(), 200);
}

#[tokio::test]
async fn keepalive_comments_flow_when_nothing_happens() {
    let s = Server::start_with(
        Some(http_support::tokens_config()),
        &[],
        &[("COMPUTER_CONTROL_SSE_KEEPALIVE_MS", "200")],
    );
    let mut sub = s.events(AGENT, None).await;
    let m = sub
        .next(Duration::from_secs(10))
        .await
        .expect("a keepalive");
    assert!(m.data.is_none(), "{m:?}");
    assert_eq!(m.comments, vec!["keepalive".to_string()]);
    // Raw bytes: exactly ": keepalive".
    let res = client()
        .get(s.url("/events"))
        .bearer_auth(AGENT)
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["cache-control"], "no-cache");
    let mut res = res;
    let chunk = tokio::time::timeout(Duration::from_secs(10), res.chunk())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(&chunk[..], b": keepalive\n\n");
}

/// `n` sequential `wait.pause {ms:0}` calls on one keep-alive connection.
async fn pauses(s: &Server, c: &reqwest::Client, n: usize) -> Duration {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools.call",
        "params": {"tool": "wait.pause", "arguments": {"ms": 0}}})
    .to_string();
    let t = Instant::now();
    for _ in 0..n {
        let res = c
            .post(s.url("/rpc"))
            .bearer_auth(AGENT)
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200);
        let v: Value = serde_json::from_slice(&res.bytes().await.unwrap()).unwrap();
        assert_eq!(v["result"]["ok"], true, "{v}");
    }
    t.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_subscribers_and_one_that_never_reads_do_not_slow_actions() {
    const K: usize = 300;
    let s = Arc::new(Server::start());
    s.call(AGENT, "session.start", json!({})).await;
    let c = client();
    pauses(&s, &c, 20).await; // warm up
    let alone = pauses(&s, &c, K).await;

    // 50 real subscribers that read everything, each noting gaps in the sequence.
    let mut seen = Vec::new();
    let gaps = Arc::new(AtomicU64::new(0));
    for _ in 0..50 {
        let last = Arc::new(AtomicU64::new(0));
        seen.push(last.clone());
        let gaps = gaps.clone();
        let sub = s.events(AGENT, None).await;
        // A light reader: only the `id:` lines and comments, no JSON parsing, so the
        // test's own readers take as little of the machine as they can.
        tokio::spawn(sub.scan_lines(move |line| {
            if line.starts_with(b": dropped") {
                gaps.fetch_add(1, Ordering::Relaxed);
            }
            let Some(id) = line
                .strip_prefix(b"id: ")
                .and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|v| v.parse::<u64>().ok())
            else {
                return;
            };
            let prev = last.swap(id, Ordering::Relaxed);
            if prev != 0 && id != prev + 1 {
                gaps.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    // And one that never reads a byte.
    let _stalled = stalled_subscriber(&s, AGENT);
    let caught_up = |target: u64| {
        let seen = seen.clone();
        async move {
            let t = Instant::now();
            while seen.iter().any(|l| l.load(Ordering::Relaxed) < target) {
                assert!(t.elapsed() < T, "readers did not catch up to {target}");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    };
    caught_up(last_seq(&s).await).await;
    let h = s.health().await;
    assert!(h["subscribers"].as_u64().unwrap() >= 51, "{h}");

    // Fill the stalled one's queue: batches small enough that the readers, waited for
    // after each, never fall behind by more than their own queue.
    let mut rounds = 0;
    while s.health().await["dropped"].as_u64().unwrap() == 0 {
        rounds += 1;
        assert!(
            rounds <= 400,
            "the never-reading subscriber never lost an event"
        );
        pause_batch(&s, 100).await;
        caught_up(last_seq(&s).await).await;
    }
    let with_subscribers = pauses(&s, &c, K).await;
    caught_up(last_seq(&s).await).await;

    let h = s.health().await;
    eprintln!(
        "{K} wait.pause: alone {alone:?}, with 50 readers + 1 stalled {with_subscribers:?}; \
         stalled filled after {rounds} batches; health {h}"
    );
    assert!(h["dropped"].as_u64().unwrap() > 0);
    assert!(h["subscribers"].as_u64().unwrap() >= 51, "{h}");
    assert_eq!(
        gaps.load(Ordering::Relaxed),
        0,
        "the readers lost nothing: every drop is the stalled one's"
    );
    // Generous sanity bound, not a timing assertion: a blocked bus would hang, not slow.
    assert!(
        with_subscribers < alone * 20 + Duration::from_secs(5),
        "alone {alone:?} vs with subscribers {with_subscribers:?}"
    );
    // The server keeps answering.
    let r = s.call(AGENT, "system.status", json!({})).await;
    assert_eq!(r["ok"], true);
}
