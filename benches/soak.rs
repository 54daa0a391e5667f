//! Reliability soak of live sessions (`make soak`; not part of `make test`).
//!
//! Against the release server binary, started as its own process on a random
//! loopback port over a throwaway SQLite database, for a bounded time:
//!
//! - keeps `SOAK_WATCHERS` (1,000) watchers on the session event streams
//!   (raw TCP readers with the session token in `?token=`);
//! - drives `SOAK_RATE` (200) tool calls/s of the built-in `get_server_time`
//!   (allowed in every workflow), paced by a ticker, spread round-robin over
//!   `SOAK_SESSIONS` (50) live sessions, each making one call at a time like
//!   an agent;
//! - every `SOAK_CHURN_MS` (1,000 ms) opens a replacement session and ends
//!   the oldest; its watchers get `ended`, their stream closes, and they move
//!   to a live session (expected, not an error);
//! - forces `SOAK_DISCONNECTS` (1,000) watcher disconnects spread over the
//!   run, each followed (after 0–`SOAK_RECONNECT_MS` ms) by a reconnect with
//!   `Last-Event-ID`.
//!
//! It fails (exit 1) on any error (a non-2xx answer, a connection error, a
//! stream that ends without `ended`), any lost or duplicated event, and
//! server memory growth over the limit. Two independent loss checks:
//!
//! 1. *Event ids.* A session's event ids go up by exactly one per event, so
//!    each watcher checks that every event it reads is the one after the
//!    last it had, across its resumes: a gap is lost events, a repeat a
//!    duplicate. The only allowed jumps are the ones the server announces
//!    with a snapshot (a new subscriber, or a resume too far behind).
//! 2. *Calls.* The driver records every tool call it got a 2xx for. Each
//!    watcher keeps, per session it watched, the call ids it saw (in
//!    snapshots, in `tool_call` events, and from `GET …/calls` when a snapshot
//!    says it skipped some) and the newest call its first snapshot already
//!    held. Every successful call newer than that must have been seen: the
//!    calls are ordered per session, a subscription is made before its
//!    snapshot is read, and the driver stops (and watchers drain) before
//!    the watchers do, so nothing is exempt. Watchers never see the driver's
//!    list, so the check can fail.
//!
//! Figures: tool-call round trip (p50, p99, max), errors by kind, forced
//! disconnects and what their resumes got, server CPU, and server RSS
//! (`VmRSS`) at start (after the watchers connected and a warm-up of
//! `SOAK_WARMUP` s of traffic), middle and end; the end may be at most
//! `SOAK_RSS_GROWTH_PCT` (10) % above the start.
//!
//! Beside the normal traffic, a hostile mix (`hostile`, `SOAK_HOSTILE_RATE`
//! attacks a second, 0 for none) tries what issue #33 bounds: sessions
//! grown by new checks, bursts of calls, an oversized plugin set, bursts
//! of wrong passwords, MCP sessions without end, a catalogue change through
//! a narrow key, an event-stream client that keeps sending. The server runs
//! with its default session budget; an answer no bound allows fails the
//! soak, and the RSS limit covers the hostile traffic too.

mod common;
#[path = "soak/hostile.rs"]
mod hostile;

use common::{cpu_time, open, percentile, rss_kib, spawn_with};
use rand::Rng;
use serde::Deserialize;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard::domain::api_key::Scope;
use switchboard::domain::limits::SNAPSHOT_CALLS;
use switchboard::server::agent::hub::REPLAY;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{watch, Notify};

/// The scale knobs, from `SOAK_*` environment variables.
#[derive(Debug, Clone)]
struct Settings {
    /// Measured run, seconds (`SOAK_SECONDS`).
    seconds: u64,
    /// Traffic before the start RSS is read, seconds (`SOAK_WARMUP`;
    /// default: `SOAK_SESSIONS` × `SOAK_CHURN_MS`, one generation of
    /// sessions).
    warmup: u64,
    /// Watchers kept connected (`SOAK_WATCHERS`).
    watchers: usize,
    /// Tool calls per second (`SOAK_RATE`).
    rate: u64,
    /// Live sessions (`SOAK_SESSIONS`).
    sessions: usize,
    /// Forced disconnects over the measured run (`SOAK_DISCONNECTS`).
    disconnects: u64,
    /// One session ends and one opens every this many ms (`SOAK_CHURN_MS`).
    churn_ms: u64,
    /// A forced-off watcher waits up to this long before resuming
    /// (`SOAK_RECONNECT_MS`), so it misses events that the resume must bring.
    reconnect_ms: u64,
    /// Allowed RSS growth from start to end, percent (`SOAK_RSS_GROWTH_PCT`).
    rss_growth_pct: f64,
    /// Hostile attacks per second (`SOAK_HOSTILE_RATE`; 0 for none).
    hostile_rate: u64,
}

impl Settings {
    /// Reads the knobs; an unset variable takes its default, a malformed
    /// one stops the soak before it starts.
    fn from_env() -> Self {
        let get = |name: &str, default: u64| match std::env::var(name) {
            Ok(raw) => raw
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("{name} must be a whole number, got {raw:?}")),
            Err(_) => default,
        };
        let sessions = get("SOAK_SESSIONS", 50);
        let churn_ms = get("SOAK_CHURN_MS", 1000);
        let settings = Self {
            seconds: get("SOAK_SECONDS", 60),
            // One generation of sessions: by then every session alive was
            // opened during the warm-up and the replay rings hold what they
            // will hold from then on (see benches/README.md).
            warmup: get("SOAK_WARMUP", (sessions * churn_ms).div_ceil(1000).max(5)),
            watchers: get("SOAK_WATCHERS", 1000) as usize,
            rate: get("SOAK_RATE", 200),
            sessions: sessions as usize,
            disconnects: get("SOAK_DISCONNECTS", 1000),
            churn_ms,
            reconnect_ms: get("SOAK_RECONNECT_MS", 250),
            rss_growth_pct: get("SOAK_RSS_GROWTH_PCT", 10) as f64,
            hostile_rate: get("SOAK_HOSTILE_RATE", 10),
        };
        assert!(
            settings.seconds > 0 && settings.watchers > 0 && settings.rate > 0,
            "SOAK_SECONDS, SOAK_WATCHERS and SOAK_RATE must be above 0"
        );
        assert!(settings.sessions >= 2, "SOAK_SESSIONS must be at least 2");
        settings
    }

    /// The command that reproduces this run.
    fn command(&self) -> String {
        format!(
            "SOAK_SECONDS={} SOAK_WARMUP={} SOAK_WATCHERS={} SOAK_RATE={} SOAK_SESSIONS={} \
             SOAK_DISCONNECTS={} SOAK_CHURN_MS={} SOAK_RECONNECT_MS={} SOAK_RSS_GROWTH_PCT={} SOAK_HOSTILE_RATE={} make soak",
            self.seconds,
            self.warmup,
            self.watchers,
            self.rate,
            self.sessions,
            self.disconnects,
            self.churn_ms,
            self.reconnect_ms,
            self.rss_growth_pct,
            self.hostile_rate
        )
    }
}

/// A live session: what the driver calls and watchers watch.
#[derive(Clone)]
struct Live {
    id: Arc<str>,
    token: Arc<str>,
    /// Calls the driver has started on it and not finished; the churn waits
    /// for zero before ending it, so no call races the end (a 409).
    inflight: Arc<AtomicUsize>,
}

/// How one watcher is steered by the soak.
#[derive(Default)]
struct WatcherCtl {
    /// A stored permit = "drop your connection now".
    disconnect: Notify,
    /// Subscribed: the server answered 200 and streams.
    streaming: AtomicBool,
}

/// Counters, all runs long.
#[derive(Default)]
struct Stats {
    calls_ok: AtomicU64,
    call_errors: AtomicU64,
    call_refused: AtomicU64,
    skipped_ticks: AtomicU64,
    stream_errors: AtomicU64,
    churn_errors: AtomicU64,
    sessions_opened: AtomicU64,
    sessions_ended: AtomicU64,
    events: AtomicU64,
    expected_ends: AtomicU64,
    forced: AtomicU64,
    resumes: AtomicU64,
    replayed: AtomicU64,
    resume_snapshots: AtomicU64,
    filled_from_calls: AtomicU64,
    gap_events: AtomicU64,
    duplicate_events: AtomicU64,
    /// The first few error messages, for the report.
    samples: Mutex<Vec<String>>,
}

impl Stats {
    /// Counts an error of kind `counter` and keeps its message if among the
    /// first 20.
    fn error(&self, counter: &AtomicU64, message: String) {
        counter.fetch_add(1, Relaxed);
        let mut samples = self.samples.lock().unwrap();
        if samples.len() < 20 {
            samples.push(message);
        }
    }
}

/// Everything the soak's tasks share.
struct Ctx {
    settings: Settings,
    address: String,
    key: String,
    client: reqwest::Client,
    /// Live sessions, oldest first.
    live: Mutex<VecDeque<Live>>,
    watchers: Vec<WatcherCtl>,
    stats: Stats,
    /// The newest event id any watcher has read, per session: on a resume,
    /// events up to it were certainly published before the reconnect, so
    /// reading them again is the replay.
    newest: Mutex<HashMap<Arc<str>, u64>>,
    /// Successful calls (2xx, allowed) per session, by call id.
    succeeded: Mutex<HashMap<Arc<str>, Vec<i64>>>,
    latencies: Mutex<Vec<Duration>>,
}

// ------------------------------------------------------------------ driver

/// One tool call of the allowed built-in `get_server_time` on `session`;
/// records its latency and call id, or the error.
async fn call(ctx: Arc<Ctx>, session: Live) {
    let url = format!(
        "http://{}/api/sessions/{}/tool-calls",
        ctx.address, session.id
    );
    let started = Instant::now();
    let res = ctx
        .client
        .post(&url)
        .bearer_auth(&*session.token)
        .json(&serde_json::json!({"name": "get_server_time", "arguments": {}}))
        .send()
        .await;
    let outcome = match res {
        Ok(res) => {
            let status = res.status();
            match res.json::<serde_json::Value>().await {
                Ok(body) if status.is_success() => Ok(body),
                Ok(body) => Err(format!("tool call on {}: {status} {body}", session.id)),
                Err(e) => Err(format!("tool call on {}: {status}, body: {e}", session.id)),
            }
        }
        Err(e) => Err(format!("tool call on {}: {e}", session.id)),
    };
    let elapsed = started.elapsed();
    session.inflight.fetch_sub(1, Relaxed);
    match outcome {
        Ok(body) => {
            ctx.latencies.lock().unwrap().push(elapsed);
            let Some(id) = body["callId"].as_i64() else {
                ctx.stats
                    .error(&ctx.stats.call_errors, format!("no callId in {body}"));
                return;
            };
            // A 2xx call was recorded and published, allowed or not.
            ctx.succeeded
                .lock()
                .unwrap()
                .entry(session.id.clone())
                .or_default()
                .push(id);
            if body["allowed"] == true {
                ctx.stats.calls_ok.fetch_add(1, Relaxed);
            } else {
                ctx.stats.error(
                    &ctx.stats.call_refused,
                    format!("call {id} refused: {}", body["reason"]),
                );
            }
        }
        Err(message) => ctx.stats.error(&ctx.stats.call_errors, message),
    }
}

/// Starts `rate` calls a second, round-robin over the live sessions, until
/// `stop`; then waits for the calls still in flight.
///
/// Like an agent, a session makes one call at a time: a tick goes to the
/// next session without a call in flight, and is skipped (and counted) when
/// every session has one. So a stalled server costs ticks, not a pile of
/// new connections.
async fn drive(ctx: Arc<Ctx>, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / ctx.settings.rate as f64));
    // A late tick (this process was not scheduled in time) is made up at
    // once, so the rate holds on average; the one-call-per-session rule
    // keeps such a catch-up from becoming a flood.
    let mut calls = tokio::task::JoinSet::new();
    let mut next = 0usize;
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            _ = tick.tick() => {}
        }
        while calls.try_join_next().is_some() {}
        let session = {
            let live = ctx.live.lock().unwrap();
            let n = live.len();
            let free = (0..n)
                .map(|k| (next + k) % n)
                .find(|&i| live[i].inflight.load(Relaxed) == 0);
            free.map(|i| {
                next = i + 1;
                live[i].inflight.fetch_add(1, Relaxed);
                live[i].clone()
            })
        };
        match session {
            Some(session) => {
                calls.spawn(call(ctx.clone(), session));
            }
            None => {
                ctx.stats.skipped_ticks.fetch_add(1, Relaxed);
            }
        }
    }
    while calls.join_next().await.is_some() {}
}

/// Every `churn_ms`: opens a session, then ends the oldest (once its calls
/// in flight are done), until `stop`.
async fn churn(ctx: Arc<Ctx>, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(Duration::from_millis(ctx.settings.churn_ms.max(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            _ = tick.tick() => {}
        }
        match open(&ctx.client, &ctx.address, &ctx.key, "idv").await {
            Ok((id, token)) => {
                ctx.stats.sessions_opened.fetch_add(1, Relaxed);
                ctx.live.lock().unwrap().push_back(Live {
                    id: id.into(),
                    token: token.into(),
                    inflight: Arc::default(),
                });
            }
            Err(e) => {
                ctx.stats.error(&ctx.stats.churn_errors, e);
                continue;
            }
        }
        let victim = ctx.live.lock().unwrap().pop_front().unwrap();
        while victim.inflight.load(Relaxed) > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let res = ctx
            .client
            .post(format!(
                "http://{}/api/sessions/{}/end",
                ctx.address, victim.id
            ))
            .bearer_auth(&*victim.token)
            .send()
            .await;
        match res {
            Ok(res) if res.status().as_u16() == 204 => {
                ctx.stats.sessions_ended.fetch_add(1, Relaxed);
            }
            Ok(res) => ctx.stats.error(
                &ctx.stats.churn_errors,
                format!("end {}: {}", victim.id, res.status()),
            ),
            Err(e) => ctx
                .stats
                .error(&ctx.stats.churn_errors, format!("end {}: {e}", victim.id)),
        }
    }
}

/// Spreads `disconnects` forced disconnects evenly over `run`, each on a
/// random watcher that is streaming.
async fn disconnect(ctx: Arc<Ctx>, run: Duration) {
    let n = ctx.settings.disconnects;
    if n == 0 {
        return;
    }
    // At the middle of each of `n` equal slices of the run.
    let every = run / n as u32;
    // A late tick is made up at once, so all `n` happen within the run.
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every / 2, every);
    for _ in 0..n {
        tick.tick().await;
        let mut rng = rand::rng();
        for _ in 0..1000 {
            let w = &ctx.watchers[rng.random_range(0..ctx.watchers.len())];
            if w.streaming.load(Relaxed) {
                w.disconnect.notify_one();
                break;
            }
        }
    }
}

// ------------------------------------------------------------------ watchers

/// The parts of a session event the checks need.
#[derive(Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
enum Event {
    Snapshot { calls: Vec<CallRef>, ended: bool },
    ToolCall { id: i64 },
    WorkflowUpdate(serde::de::IgnoredAny),
    ToolsChanged(serde::de::IgnoredAny),
    Ended(serde::de::IgnoredAny),
}

/// A call in a snapshot or a `/calls` page.
#[derive(Deserialize)]
struct CallRef {
    id: i64,
}

/// One watcher's time on one session, across its resumes.
struct Segment {
    session: Arc<str>,
    token: Arc<str>,
    /// The newest call the first snapshot held (0: none); every successful
    /// call after it must be in `seen`. `None` until that snapshot arrived.
    baseline: Option<i64>,
    /// Call ids seen, by any means.
    seen: HashSet<i64>,
    /// The id of the last event read (a resume sends it as `Last-Event-ID`).
    last_event: Option<u64>,
    /// Read `ended`, or a snapshot with `"ended": true`: the stream ends
    /// next, as it should.
    done: bool,
}

impl Segment {
    /// A watcher's start on `session`, before its first snapshot.
    fn new(session: &Live) -> Self {
        Self {
            session: session.id.clone(),
            token: session.token.clone(),
            baseline: None,
            seen: HashSet::new(),
            last_event: None,
            done: false,
        }
    }
}

/// How a stream ended.
enum Outcome {
    /// After `ended`: move to another session.
    Ended,
    /// This soak dropped it: resume.
    Forced,
    /// Anything else (an error): resume.
    Broken(String),
    /// The soak is over.
    Stopped,
}

/// `Transfer-Encoding: chunked` decoding, fed as bytes arrive.
#[derive(Default)]
struct Chunked {
    raw: Vec<u8>,
    /// Bytes left of the current chunk, its closing CRLF included.
    left: usize,
}

impl Chunked {
    /// Appends the decoded body bytes to `out`; `Ok(true)` once the last
    /// (empty) chunk has arrived.
    fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<bool, String> {
        self.raw.extend_from_slice(input);
        loop {
            if self.left == 0 {
                let Some(end) = find(&self.raw, b"\r\n") else {
                    return Ok(false);
                };
                let line = String::from_utf8_lossy(&self.raw[..end]);
                let size = line.split(';').next().unwrap_or("").trim();
                let size = usize::from_str_radix(size, 16)
                    .map_err(|_| format!("bad chunk size line {line:?}"))?;
                self.raw.drain(..end + 2);
                if size == 0 {
                    return Ok(true);
                }
                self.left = size + 2;
            }
            let take = self.left.min(self.raw.len());
            if take == 0 {
                return Ok(false);
            }
            let data = (self.left - 2).min(take);
            out.extend_from_slice(&self.raw[..data]);
            self.raw.drain(..take);
            self.left -= take;
        }
    }
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The next complete SSE block (`id:`/`data:` lines or a comment) from `body`.
fn next_block(body: &mut Vec<u8>) -> Option<Vec<u8>> {
    let end = find(body, b"\n\n")?;
    let block = body[..end].to_vec();
    body.drain(..end + 2);
    Some(block)
}

/// An event block's id and event; `None` for a keep-alive comment.
fn parse_block(block: &[u8]) -> Result<Option<(u64, Event)>, String> {
    let text = std::str::from_utf8(block).map_err(|e| format!("event not UTF-8: {e}"))?;
    let (mut id, mut data) = (None, None);
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("id: ") {
            id = v.trim().parse::<u64>().ok();
        } else if let Some(v) = line.strip_prefix("data: ") {
            data = Some(v);
        }
    }
    match (id, data) {
        (None, None) if text.starts_with(':') => Ok(None),
        (Some(id), Some(data)) => serde_json::from_str(data)
            .map(|event| Some((id, event)))
            .map_err(|e| format!("event {id}: {e}: {data:.200}")),
        _ => Err(format!("malformed event block {text:.200}")),
    }
}

/// Adds calls older than `oldest` down to (not including) `down_to` from
/// `GET /api/sessions/{id}/calls`: what a snapshot's last-50 window left out
/// (the documented way to get them).
async fn fill_from_calls(
    ctx: &Ctx,
    seg: &mut Segment,
    oldest: i64,
    down_to: i64,
) -> Result<(), String> {
    let mut before = Some(oldest);
    while let Some(b) = before {
        let url = format!(
            "http://{}/api/sessions/{}/calls?before={b}&limit=100",
            ctx.address, seg.session
        );
        let res = ctx
            .client
            .get(url)
            .bearer_auth(&*seg.token)
            .send()
            .await
            .map_err(|e| format!("calls page: {e}"))?;
        let status = res.status();
        let body: serde_json::Value = res.json().await.map_err(|e| format!("calls page: {e}"))?;
        if !status.is_success() {
            return Err(format!("calls page: {status} {body}"));
        }
        let mut reached = false;
        for call in body["calls"].as_array().into_iter().flatten() {
            match call["id"].as_i64() {
                Some(id) if id <= down_to => reached = true,
                Some(id) => {
                    seg.seen.insert(id);
                    ctx.stats.filled_from_calls.fetch_add(1, Relaxed);
                }
                None => return Err(format!("calls page without ids: {body}")),
            }
        }
        before = if reached {
            None
        } else {
            body["before"].as_i64()
        };
    }
    Ok(())
}

/// A snapshot's calls into `seg`; when it holds a full window that starts
/// after the newest call seen so far, the calls in between come from
/// `/calls`.
async fn take_snapshot(ctx: &Ctx, seg: &mut Segment, calls: &[CallRef]) -> Result<(), String> {
    let newest_seen = seg.seen.iter().max().copied().or(seg.baseline).unwrap_or(0);
    seg.seen.extend(calls.iter().map(|c| c.id));
    let oldest = calls.iter().map(|c| c.id).min();
    if seg.baseline.is_some() && calls.len() >= SNAPSHOT_CALLS {
        if let Some(oldest) = oldest.filter(|&o| o > newest_seen + 1) {
            fill_from_calls(ctx, seg, oldest, newest_seen).await?;
        }
    }
    Ok(())
}

/// Handles one event of a stream. `first`: the stream's first event;
/// `resumed_from`: the `Last-Event-ID` this stream was opened with, and the
/// newest id known published before that reconnect.
async fn on_event(
    ctx: &Ctx,
    seg: &mut Segment,
    id: u64,
    event: Event,
    first: bool,
    resumed_from: Option<(u64, u64)>,
) -> Result<(), String> {
    ctx.stats.events.fetch_add(1, Relaxed);
    if seg.done {
        return Err(format!("event {id} after the session ended"));
    }
    if let Event::Snapshot { calls, ended } = &event {
        if !first {
            return Err(format!("snapshot {id} in the middle of a stream"));
        }
        if *ended {
            // The session ended before this (re)subscription: its final
            // snapshot (its id is a fresh channel's, not in sequence).
            if seg.baseline.is_none() {
                seg.baseline = Some(calls.iter().map(|c| c.id).max().unwrap_or(0));
            }
            take_snapshot(ctx, seg, calls).await?;
            seg.done = true;
            return Ok(());
        }
        if let Some((last, _)) = resumed_from {
            ctx.stats.resume_snapshots.fetch_add(1, Relaxed);
            take_snapshot(ctx, seg, calls).await?;
            let missed = id.saturating_sub(last);
            if missed < REPLAY as u64 {
                return Err(format!(
                    "resume from {last} got a snapshot ({id}) though only {missed} events were missed (the server keeps {REPLAY})"
                ));
            }
        } else {
            if seg.baseline.is_none() {
                seg.baseline = Some(calls.iter().map(|c| c.id).max().unwrap_or(0));
            }
            take_snapshot(ctx, seg, calls).await?;
        }
        seg.last_event = Some(id);
        note_newest(ctx, seg, id);
        return Ok(());
    }
    if first && resumed_from.is_none() {
        return Err(format!(
            "a new subscription began with event {id}, not a snapshot"
        ));
    }
    let result = match seg.last_event {
        Some(last) if id == last + 1 => Ok(()),
        Some(last) if id > last + 1 => {
            ctx.stats.gap_events.fetch_add(id - last - 1, Relaxed);
            Err(format!(
                "events {}..={} lost on {}",
                last + 1,
                id - 1,
                seg.session
            ))
        }
        Some(last) => {
            ctx.stats.duplicate_events.fetch_add(1, Relaxed);
            Err(format!("event {id} again after {last} on {}", seg.session))
        }
        None => Err(format!("event {id} before any snapshot")),
    };
    if let Some((_, published)) = resumed_from {
        if id <= published {
            ctx.stats.replayed.fetch_add(1, Relaxed);
        }
    }
    seg.last_event = Some(id.max(seg.last_event.unwrap_or(0)));
    note_newest(ctx, seg, id);
    match event {
        Event::ToolCall { id } => {
            seg.seen.insert(id);
        }
        Event::Ended(_) => seg.done = true,
        _ => {}
    }
    result
}

/// Records that event `id` of `seg`'s session has been published.
fn note_newest(ctx: &Ctx, seg: &Segment, id: u64) {
    let mut newest = ctx.newest.lock().unwrap();
    let entry = newest.entry(seg.session.clone()).or_default();
    *entry = (*entry).max(id);
}

/// Subscribes to `seg`'s session (resuming from its last event, if any)
/// and reads until the stream ends, is dropped, or the soak stops.
async fn stream(
    ctx: &Ctx,
    me: usize,
    seg: &mut Segment,
    stop: &mut watch::Receiver<bool>,
) -> Outcome {
    let ctl = &ctx.watchers[me];
    let resumed_from = seg.last_event.map(|last| {
        let published = ctx
            .newest
            .lock()
            .unwrap()
            .get(&seg.session)
            .copied()
            .unwrap_or(0);
        (last, published)
    });
    let mut tcp = match TcpStream::connect(&ctx.address).await {
        Ok(tcp) => tcp,
        Err(e) => return Outcome::Broken(format!("connect: {e}")),
    };
    let resume = match resumed_from {
        Some((last, _)) => format!("Last-Event-ID: {last}\r\n"),
        None => String::new(),
    };
    let request = format!(
        "GET /api/sessions/{}/events?token={} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n{resume}\r\n",
        seg.session, seg.token, ctx.address
    );
    if let Err(e) = tcp.write_all(request.as_bytes()).await {
        return Outcome::Broken(format!("send: {e}"));
    }
    if resumed_from.is_some() {
        ctx.stats.resumes.fetch_add(1, Relaxed);
    }
    let mut head: Option<bool> = None; // Some(chunked) once the head is read
    let mut raw = Vec::new();
    let mut chunked = Chunked::default();
    let mut body = Vec::new();
    let mut first = true;
    let mut buf = [0u8; 8192];
    loop {
        let n = tokio::select! {
            biased;
            _ = stop.changed() => return Outcome::Stopped,
            _ = ctl.disconnect.notified() => {
                ctx.stats.forced.fetch_add(1, Relaxed);
                return Outcome::Forced; // dropping `tcp` closes the connection
            }
            read = tcp.read(&mut buf) => match read {
                Ok(n) => n,
                Err(e) => return Outcome::Broken(format!("read: {e}")),
            },
        };
        let mut finished = n == 0;
        match head {
            None => {
                raw.extend_from_slice(&buf[..n]);
                let Some(end) = find(&raw, b"\r\n\r\n") else {
                    if finished {
                        return Outcome::Broken("closed before the response head".into());
                    }
                    continue;
                };
                let text = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
                if !text.starts_with("http/1.1 200") {
                    let all = String::from_utf8_lossy(&raw).into_owned();
                    return Outcome::Broken(format!("subscribe to {}: {:.300}", seg.session, all));
                }
                let is_chunked = text.contains("transfer-encoding: chunked");
                head = Some(is_chunked);
                ctl.streaming.store(true, Relaxed);
                let rest = raw[end + 4..].to_vec();
                if is_chunked {
                    match chunked.decode(&rest, &mut body) {
                        Ok(done) => finished |= done,
                        Err(e) => return Outcome::Broken(e),
                    }
                } else {
                    body.extend_from_slice(&rest);
                }
            }
            Some(true) => match chunked.decode(&buf[..n], &mut body) {
                Ok(done) => finished |= done,
                Err(e) => return Outcome::Broken(e),
            },
            Some(false) => body.extend_from_slice(&buf[..n]),
        }
        while let Some(block) = next_block(&mut body) {
            match parse_block(&block) {
                Ok(None) => {}
                Ok(Some((id, event))) => {
                    let result = on_event(ctx, seg, id, event, first, resumed_from).await;
                    first = false;
                    if let Err(e) = result {
                        ctx.stats
                            .error(&ctx.stats.stream_errors, format!("watcher {me}: {e}"));
                    }
                }
                Err(e) => return Outcome::Broken(e),
            }
        }
        if finished {
            return if seg.done {
                Outcome::Ended
            } else {
                Outcome::Broken(format!(
                    "stream of {} ended without `ended` (last event {:?})",
                    seg.session, seg.last_event
                ))
            };
        }
    }
}

/// Waits `wait`, or less if the soak stops; false if it stopped.
async fn pause(wait: Duration, stop: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        _ = stop.changed() => false,
        _ = tokio::time::sleep(wait) => true,
    }
}

/// One watcher: watches a session until it ends, then another; resumes
/// after forced disconnects and errors. Returns every segment it watched.
async fn watcher(ctx: Arc<Ctx>, me: usize, mut stop: watch::Receiver<bool>) -> Vec<Segment> {
    let mut done = Vec::new();
    let mut seg: Option<Segment> = None;
    loop {
        if *stop.borrow() {
            break;
        }
        let current = seg.get_or_insert_with(|| {
            let live = ctx.live.lock().unwrap();
            let pick = if done.is_empty() {
                me % live.len()
            } else {
                rand::rng().random_range(0..live.len())
            };
            Segment::new(&live[pick])
        });
        let outcome = stream(&ctx, me, current, &mut stop).await;
        ctx.watchers[me].streaming.store(false, Relaxed);
        // A stream dropped or broken right after `ended` has nothing left
        // to resume: the watcher moves on all the same.
        let finished = seg.as_ref().is_some_and(|s| s.done);
        match outcome {
            Outcome::Ended => {
                ctx.stats.expected_ends.fetch_add(1, Relaxed);
                done.extend(seg.take());
            }
            Outcome::Forced if finished => done.extend(seg.take()),
            Outcome::Forced => {
                let wait = rand::rng().random_range(0..=ctx.settings.reconnect_ms);
                if !pause(Duration::from_millis(wait), &mut stop).await {
                    break;
                }
            }
            Outcome::Broken(e) => {
                ctx.stats
                    .error(&ctx.stats.stream_errors, format!("watcher {me}: {e}"));
                if finished {
                    done.extend(seg.take());
                }
                if !pause(Duration::from_millis(100), &mut stop).await {
                    break;
                }
            }
            Outcome::Stopped => break,
        }
    }
    done.extend(seg);
    done
}

// ------------------------------------------------------------------ the run

/// What the loss check found.
#[derive(Default)]
struct Losses {
    segments: usize,
    checked_calls: u64,
    lost_calls: u64,
    unconfirmed_seen: u64,
    without_snapshot: usize,
    examples: Vec<String>,
}

/// Compares what every watcher saw with the driver's successful calls.
fn check(succeeded: &HashMap<Arc<str>, Vec<i64>>, segments: &[Segment]) -> Losses {
    let mut losses = Losses {
        segments: segments.len(),
        ..Losses::default()
    };
    let empty = Vec::new();
    for seg in segments {
        let Some(baseline) = seg.baseline else {
            losses.without_snapshot += 1;
            continue;
        };
        let calls = succeeded.get(&seg.session).unwrap_or(&empty);
        for &id in calls.iter().filter(|&&id| id > baseline) {
            losses.checked_calls += 1;
            if !seg.seen.contains(&id) {
                losses.lost_calls += 1;
                if losses.examples.len() < 10 {
                    losses.examples.push(format!(
                        "call {id} on {} not seen by a watcher subscribed since call {baseline}",
                        seg.session
                    ));
                }
            }
        }
        let known: HashSet<&i64> = calls.iter().collect();
        losses.unconfirmed_seen += seg.seen.iter().filter(|id| !known.contains(id)).count() as u64;
    }
    losses
}

/// The anonymous part of process `pid`'s resident memory (heap and
/// stacks; the rest is the mapped binary), KiB.
fn rss_anon_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("RssAnon:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// `kib` as MiB with one decimal, for the report.
fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Runs the soak on two threads (like the machine's cores) and exits 1 if it
/// failed.
fn main() {
    let settings = Settings::from_env();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let failed = runtime.block_on(soak(settings));
    std::process::exit(i32::from(failed));
}

/// Runs the soak and prints the report; true if it failed.
async fn soak(settings: Settings) -> bool {
    let wall = Instant::now();
    // The default session budget, which the hostile mix runs into (the
    // normal traffic stays well under it).
    let budget = [
        ("SESSION_WRITES_PER_MINUTE", "600"),
        ("SESSION_CALLS_MAX", "10000"),
    ];
    let (address, key, mut child, dir) = spawn_with(&budget).await;
    let hostile = Arc::new(hostile::Hostile::new(
        address.clone(),
        key.clone(),
        narrow_key(&dir, &[Scope::VibesRead, Scope::VibesWrite]).await,
        settings.hostile_rate,
    ));
    // Under `BENCH_WRAPPER` (e.g. heaptrack) the child is the wrapper; the
    // figures are the server's own.
    let pid = server_pid(child.id());
    let client = reqwest::Client::new();
    let mut live = VecDeque::new();
    for _ in 0..settings.sessions {
        let (id, token) = open(&client, &address, &key, "idv").await.unwrap();
        live.push_back(Live {
            id: id.into(),
            token: token.into(),
            inflight: Arc::default(),
        });
    }
    let ctx = Arc::new(Ctx {
        address,
        key,
        client,
        live: Mutex::new(live),
        watchers: (0..settings.watchers)
            .map(|_| WatcherCtl::default())
            .collect(),
        stats: Stats::default(),
        newest: Mutex::default(),
        succeeded: Mutex::default(),
        latencies: Mutex::default(),
        settings: settings.clone(),
    });
    ctx.stats
        .sessions_opened
        .store(settings.sessions as u64, Relaxed);
    let (stop_watchers, watchers_stop) = watch::channel(false);
    let (stop_driver, driver_stop) = watch::channel(false);

    println!(
        "soak: server pid {pid} ({}), {} watchers on {} sessions",
        common::server_binary(),
        settings.watchers,
        settings.sessions
    );
    let connected_in = Instant::now();
    let mut watchers = tokio::task::JoinSet::new();
    // In batches, so the server's accept queue is not flooded by a
    // thousand connects at once.
    for me in 0..settings.watchers {
        watchers.spawn(watcher(ctx.clone(), me, watchers_stop.clone()));
        if (me + 1) % 100 == 0 && !wait_streaming(&ctx, me + 1, Duration::from_secs(60)).await {
            println!("soak: watchers did not connect within 60 s");
        }
    }
    if !wait_streaming(&ctx, settings.watchers, Duration::from_secs(60)).await {
        println!("soak: not every watcher connected within 60 s");
    }
    let rss_connected = rss_kib(pid);
    println!(
        "soak: {} watchers connected in {:.1?}; server RSS {}; warming up {} s",
        streaming(&ctx),
        connected_in.elapsed(),
        mib(rss_connected),
        settings.warmup
    );

    let driver = tokio::spawn(drive(ctx.clone(), driver_stop.clone()));
    let attacker = (settings.hostile_rate > 0).then(|| {
        let hostile = hostile.clone();
        let stop = driver_stop.clone();
        tokio::spawn(async move {
            let targets = hostile.targets().await;
            hostile::run(hostile, targets, stop).await
        })
    });
    let churner = tokio::spawn(churn(ctx.clone(), driver_stop.clone()));
    tokio::time::sleep(Duration::from_secs(settings.warmup)).await;

    let run = Duration::from_secs(settings.seconds);
    let rss_start = rss_kib(pid);
    let anon_start = rss_anon_kib(pid);
    let cpu_start = cpu_time(pid);
    let calls_start = ctx.stats.calls_ok.load(Relaxed);
    let started = Instant::now();
    println!(
        "soak: start RSS {}; running {} s",
        mib(rss_start),
        settings.seconds
    );
    let disconnects = tokio::spawn(disconnect(ctx.clone(), run));
    let mut rss_mid = 0;
    let mut rss_end = rss_start;
    let mut anon_end = anon_start;
    let mut rss_peak = rss_start;
    let mut second = 0;
    while started.elapsed() < run {
        tokio::time::sleep(Duration::from_secs(1).min(run.saturating_sub(started.elapsed()))).await;
        second += 1;
        let rss = rss_kib(pid);
        // The end figure is the last one taken under load, like the start.
        rss_end = rss;
        anon_end = rss_anon_kib(pid);
        rss_peak = rss_peak.max(rss);
        if second == settings.seconds.div_ceil(2) {
            rss_mid = rss;
        }
        if second % 10 == 0 {
            println!(
                "soak: {second:>4} s  RSS {} (anonymous {})  calls {}  events {}  forced {}  errors {}",
                mib(rss),
                mib(anon_end),
                ctx.stats.calls_ok.load(Relaxed),
                ctx.stats.events.load(Relaxed),
                ctx.stats.forced.load(Relaxed),
                errors(&ctx.stats)
            );
        }
    }
    let ran = started.elapsed();
    // Its last tick is half a slice before the end; waiting a little covers
    // a late one.
    let abort = disconnects.abort_handle();
    let _ = tokio::time::timeout(Duration::from_secs(2), disconnects).await;
    abort.abort();
    let calls_run = ctx.stats.calls_ok.load(Relaxed) - calls_start;
    let _ = stop_driver.send(true);
    driver.await.unwrap();
    churner.await.unwrap();
    if let Some(attacker) = attacker {
        attacker.await.unwrap();
    }
    let cpu = cpu_time(pid).saturating_sub(cpu_start);
    // Let resumes finish and the last events arrive before checking.
    let drained = wait_streaming(&ctx, settings.watchers, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let connected_end = streaming(&ctx);

    let _ = stop_watchers.send(true);
    let mut segments = Vec::new();
    while let Some(done) = watchers.join_next().await {
        segments.extend(done.unwrap());
    }
    stop_server(&mut child);

    let succeeded = std::mem::take(&mut *ctx.succeeded.lock().unwrap());
    let losses = check(&succeeded, &segments);
    let mut latencies = std::mem::take(&mut *ctx.latencies.lock().unwrap());
    latencies.sort();
    report(Report {
        ctx: &ctx,
        hostile: &hostile,
        ran,
        wall: wall.elapsed(),
        calls_run,
        cpu,
        rss: [rss_connected, rss_start, rss_mid, rss_end, rss_peak],
        anon: [anon_start, anon_end],
        connected_end,
        drained,
        latencies: &latencies,
        losses: &losses,
    })
}

/// A key with only `scopes`, made in the server's database (`dir`), as an
/// admin would give a narrow backend.
async fn narrow_key(dir: &tempfile::TempDir, scopes: &[Scope]) -> String {
    let url = format!("sqlite://{}/bench.db", dir.path().display());
    let pool = switchboard::server::platform::db::attach(&url)
        .await
        .unwrap();
    switchboard::server::store::api_keys::create(&pool, "hostile", scopes, None)
        .await
        .unwrap()
        .0
}

/// The process running the server binary: `child` itself, or (under a
/// wrapper) its child that does.
fn server_pid(child: u32) -> u32 {
    if std::env::var("BENCH_WRAPPER")
        .unwrap_or_default()
        .trim()
        .is_empty()
    {
        return child;
    }
    let binary = std::path::Path::new(common::server_binary());
    let runs_server =
        |pid: u32| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == binary);
    // A wrapper may take a moment to start the server.
    for _ in 0..100 {
        if runs_server(child) {
            return child;
        }
        if let Some(pid) = children(child).into_iter().find(|&pid| runs_server(pid)) {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// The processes whose parent is `parent`.
fn children(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
                status
                    .lines()
                    .any(|l| l.strip_prefix("PPid:").map(str::trim) == Some(&parent.to_string()))
            })
        })
        .collect()
}

/// Stops the server this soak started: SIGTERM to it and (under a wrapper)
/// the wrapper's children, so a profiler writes its data out; SIGKILL if
/// it is still there after 15 s.
fn stop_server(child: &mut std::process::Child) {
    let mut pids = children(child.id());
    pids.push(child.id());
    for pid in pids {
        // SAFETY: a plain signal to a process this soak started.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    }
    for _ in 0..150 {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Watchers streaming now.
fn streaming(ctx: &Ctx) -> usize {
    ctx.watchers
        .iter()
        .filter(|w| w.streaming.load(Relaxed))
        .count()
}

/// Waits until `n` watchers are streaming, at most `limit`; true if they are.
async fn wait_streaming(ctx: &Ctx, n: usize, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while streaming(ctx) < n {
        if Instant::now() > until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// Every error counted so far.
fn errors(stats: &Stats) -> u64 {
    stats.call_errors.load(Relaxed)
        + stats.call_refused.load(Relaxed)
        + stats.stream_errors.load(Relaxed)
        + stats.churn_errors.load(Relaxed)
}

/// The figures the report prints.
struct Report<'a> {
    ctx: &'a Ctx,
    hostile: &'a hostile::Hostile,
    ran: Duration,
    wall: Duration,
    calls_run: u64,
    cpu: Duration,
    /// Connected, start, middle, end, peak; KiB.
    rss: [u64; 5],
    /// The anonymous part (heap, stacks) at start and end; KiB.
    anon: [u64; 2],
    connected_end: usize,
    drained: bool,
    latencies: &'a [Duration],
    losses: &'a Losses,
}

/// Prints the report; true if the soak failed.
fn report(r: Report) -> bool {
    let s = &r.ctx.stats;
    let settings = &r.ctx.settings;
    let get = |c: &AtomicU64| c.load(Relaxed);
    let [connected, start, mid, end, peak] = r.rss;
    let growth = (end as f64 - start as f64) / start.max(1) as f64 * 100.0;
    let lost_events = get(&s.gap_events);
    let errors = errors(s);
    let (p50, p99, max) = match r.latencies {
        [] => Default::default(),
        l => (percentile(l, 0.5), percentile(l, 0.99), l[l.len() - 1]),
    };
    let mut failures = Vec::new();
    if errors > 0 {
        failures.push(format!("{errors} errors"));
    }
    if lost_events > 0 || r.losses.lost_calls > 0 {
        failures.push(format!(
            "lost {lost_events} events, {} calls",
            r.losses.lost_calls
        ));
    }
    if get(&s.duplicate_events) > 0 {
        failures.push(format!("{} duplicate events", get(&s.duplicate_events)));
    }
    if growth > settings.rss_growth_pct {
        failures.push(format!(
            "RSS grew {growth:.1} % (limit {} %)",
            settings.rss_growth_pct
        ));
    }
    if r.losses.without_snapshot > 0 {
        failures.push(format!(
            "{} watcher segments never got a snapshot",
            r.losses.without_snapshot
        ));
    }
    if !r.drained {
        failures.push("watchers did not all reconnect after the run".into());
    }
    let unexpected = r.hostile.unexpected.load(Relaxed);
    if unexpected > 0 {
        failures.push(format!(
            "{unexpected} hostile requests got an answer no bound allows"
        ));
    }

    println!();
    println!("=== soak report ===");
    println!("command:              {}", settings.command());
    println!(
        "                      (= ulimit -n $(ulimit -Hn) && cargo bench --features ssr --bench soak, with those variables)"
    );
    println!("server binary:        {}", common::server_binary());
    println!(
        "duration:             {:.1} s measured after {} s warm-up ({:.0} s wall in all)",
        r.ran.as_secs_f64(),
        settings.warmup,
        r.wall.as_secs_f64()
    );
    println!(
        "watchers:             {} ({} connected at the end)",
        settings.watchers, r.connected_end
    );
    println!(
        "tool calls:           {} allowed in the measured run = {:.1}/s (target {}/s); {} in all, over {} live sessions",
        r.calls_run,
        r.calls_run as f64 / r.ran.as_secs_f64(),
        settings.rate,
        get(&s.calls_ok),
        settings.sessions
    );
    println!(
        "                      {} ticks skipped: every session had a call in flight (the server was behind)",
        get(&s.skipped_ticks)
    );
    println!(
        "tool-call latency:    p50 {:.2?}  p99 {:.2?}  max {:.2?}  (HTTP round trip, {} calls)",
        p50,
        p99,
        max,
        r.latencies.len()
    );
    println!(
        "sessions:             {} opened, {} ended by the churn",
        get(&s.sessions_opened),
        get(&s.sessions_ended)
    );
    println!(
        "events read:          {} ({} streams ended with `ended` and moved on)",
        get(&s.events),
        get(&s.expected_ends)
    );
    println!(
        "forced disconnects:   {} (of {} planned); {} resumes with Last-Event-ID, ≥ {} missed events replayed, {} answered with a snapshot, {} calls fetched via /calls",
        get(&s.forced),
        settings.disconnects,
        get(&s.resumes),
        get(&s.replayed),
        get(&s.resume_snapshots),
        get(&s.filled_from_calls)
    );
    println!(
        "lost:                 {} events (id gaps), {} calls of {} checked across {} watcher segments; {} duplicate events",
        lost_events,
        r.losses.lost_calls,
        r.losses.checked_calls,
        r.losses.segments,
        get(&s.duplicate_events)
    );
    println!(
        "                      ({} calls seen that the driver got no 2xx for)",
        r.losses.unconfirmed_seen
    );
    println!(
        "hostile mix:          {} attacks/s; answers {}",
        settings.hostile_rate,
        r.hostile.summary()
    );
    for sample in r.hostile.samples.lock().unwrap().iter() {
        println!("                      unexpected: {sample}");
    }
    println!(
        "errors:               {} (tool calls: {} failed, {} refused; streams: {}; open/end: {})",
        errors,
        get(&s.call_errors),
        get(&s.call_refused),
        get(&s.stream_errors),
        get(&s.churn_errors),
    );
    println!(
        "server RSS:           connected {}, start {}, middle {}, end {}, peak {}; start→end {growth:+.1} % (limit {} %)",
        mib(connected),
        mib(start),
        mib(mid),
        mib(end),
        mib(peak),
        settings.rss_growth_pct
    );
    println!(
        "                      (anonymous memory: start {}, end {}; the rest is the mapped binary)",
        mib(r.anon[0]),
        mib(r.anon[1])
    );
    println!(
        "server CPU:           {:.1} s in the measured run ({:.0} % of one core)",
        r.cpu.as_secs_f64(),
        r.cpu.as_secs_f64() / r.ran.as_secs_f64() * 100.0
    );
    println!(
        "machine:              {} cores; load average (1, 5, 15 min) at the end: {}",
        std::thread::available_parallelism().map_or(0, usize::from),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let samples = s.samples.lock().unwrap();
    for e in samples.iter().chain(&r.losses.examples) {
        println!("  ! {e}");
    }
    if failures.is_empty() {
        println!("result:               PASS");
        false
    } else {
        println!("result:               FAIL ({})", failures.join("; "));
        true
    }
}
