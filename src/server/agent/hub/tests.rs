//! Unit tests of `hub`, kept beside it so the module itself stays short.

use super::*;
use crate::domain::limits::REPLAY_MAX_BYTES;

fn ended(n: usize) -> SessionEvent {
    SessionEvent::Ended {
        reason: n.to_string(),
    }
}

#[test]
fn a_reconnect_gets_exactly_the_missed_events_in_order() {
    let hub = Hub::default();
    for n in 1..=5 {
        hub.publish("s", &ended(n));
    }
    let sub = hub.subscribe("s", Some(2));
    assert!(!sub.needs_snapshot);
    assert_eq!(
        sub.replay.iter().map(|f| f.id).collect::<Vec<_>>(),
        [3, 4, 5]
    );
    let sub = hub.subscribe("s", Some(5));
    assert!(sub.replay.is_empty() && !sub.needs_snapshot);
}

#[test]
fn too_old_or_new_subscribers_get_a_snapshot_first() {
    let hub = Hub::default();
    for n in 0..REPLAY + 10 {
        hub.publish("s", &ended(n));
    }
    let sub = hub.subscribe("s", Some(3));
    assert!(sub.needs_snapshot);
    assert_eq!(sub.snapshot_id, (REPLAY + 10) as u64);
    assert!(hub.subscribe("s", None).needs_snapshot);
    assert!(hub.subscribe("s", Some(10_000)).needs_snapshot);
}

#[test]
fn large_frames_evict_older_ones_so_the_ring_stays_under_its_bytes() {
    let hub = Hub::default();
    let big = "x".repeat(REPLAY_MAX_BYTES / 4);
    for _ in 0..10 {
        hub.publish_named("s", "ended", &format!("\"{big}\""));
    }
    let sessions = locked(&hub.sessions);
    let channel = &sessions["s"];
    let held: usize = channel.ring.iter().map(|f| f.chunk.len()).sum();
    assert_eq!(held, channel.ring_bytes);
    assert!(held <= REPLAY_MAX_BYTES, "{held}");
    assert!(channel.ring.len() < 4, "older frames were evicted");
    assert_eq!(channel.ring.back().map(|f| f.id), Some(10));
    drop(sessions);
    let sub = hub.subscribe("s", Some(2));
    assert!(sub.needs_snapshot, "what was evicted is not replayed");
}

#[test]
fn a_frame_larger_than_the_ring_is_not_kept_and_asks_for_a_snapshot() {
    let hub = Hub::default();
    hub.publish("s", &ended(1));
    let huge = "x".repeat(REPLAY_MAX_BYTES + 1);
    hub.publish_named("s", "ended", &format!("\"{huge}\""));
    let sub = hub.subscribe("s", Some(1));
    assert!(sub.needs_snapshot);
    assert_eq!(locked(&hub.sessions)["s"].ring_bytes, 0);
}

#[test]
fn ids_from_before_a_restart_get_a_snapshot() {
    let before = Hub::starting_at(1_000_000);
    for n in 1..=5 {
        before.publish("s", &ended(n));
    }
    let after = Hub::starting_at(2_000_000);
    after.publish("s", &ended(1));
    let sub = after.subscribe("s", Some(1_000_005));
    assert!(sub.needs_snapshot);
    assert_eq!(sub.snapshot_id, 2_000_001);
    assert!(!after.subscribe("s", Some(2_000_000)).needs_snapshot);
}

#[test]
fn frames_are_complete_sse_events() {
    let hub = Hub::default();
    hub.publish("s", &ended(1));
    let frame = &hub.subscribe("s", Some(0)).replay[0];
    assert_eq!(
        std::str::from_utf8(&frame.sse).unwrap(),
        "id: 1\nevent: ended\ndata: {\"type\":\"ended\",\"data\":{\"reason\":\"1\"}}\n\n"
    );
}

/// The ids `sink` hands out now.
fn next_ids(sink: &Sink) -> Vec<u64> {
    let mut out = Vec::new();
    while let sink::Next::Frame(f, _) = sink.next() {
        out.push(f.id);
    }
    out
}

#[test]
fn closing_a_session_delivers_what_was_sent_then_ends_its_stream() {
    let hub = Hub::default();
    let sub = hub.subscribe("s", None);
    let mut listener = hub.listen("s");
    hub.publish("s", &ended(1));
    hub.close("s");
    assert_eq!(hub.live_sessions(), 0);
    assert_eq!(next_ids(&sub.sink), [1]);
    assert!(matches!(sub.sink.next(), sink::Next::Closed));
    assert_eq!(listener.try_recv().unwrap().id, 1);
    assert!(listener.try_recv().is_err());
}

#[tokio::test]
async fn closing_all_ends_every_stream() {
    let hub = Hub::default();
    let session = hub.subscribe("s", None);
    let mut list = hub.subscribe_list();
    hub.close_all();
    assert!(matches!(session.sink.next(), sink::Next::Closed));
    assert!(list.recv().await.is_err());
}

#[test]
fn live_events_follow_the_replay_without_gaps() {
    let hub = Hub::default();
    hub.publish("s", &ended(1));
    let sub = hub.subscribe("s", Some(0));
    hub.publish("s", &ended(2));
    assert_eq!(sub.replay.len(), 1);
    assert_eq!(next_ids(&sub.sink), [2]);
}

#[test]
fn a_watcher_that_left_is_forgotten_on_the_next_event() {
    let hub = Hub::default();
    let kept = hub.subscribe("s", None);
    drop(hub.subscribe("s", None));
    hub.publish("s", &ended(1));
    let sessions = locked(&hub.sessions);
    assert_eq!(sessions["s"].sinks.len(), 1);
    drop(sessions);
    assert_eq!(next_ids(&kept.sink), [1]);
}

#[test]
fn a_frame_is_one_chunk_around_its_event() {
    let frame = Frame::new(7, "e", "{}");
    let sse = "id: 7\nevent: e\ndata: {}\n\n";
    assert_eq!(&frame.sse[..], sse.as_bytes());
    assert_eq!(
        &frame.chunk[..],
        format!("{:x}\r\n{sse}\r\n", sse.len()).as_bytes()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_watchers_get_every_event_in_order_from_the_workers() {
    let hub = Hub::default();
    let subs: Vec<_> = (0..500).map(|_| hub.subscribe("s", None)).collect();
    for n in 1..=3 {
        hub.publish("s", &ended(n));
    }
    for sub in &subs {
        let mut got = Vec::new();
        while got.len() < 3 {
            match sub.sink.next() {
                sink::Next::Frame(f, _) => got.push(f.id),
                _ => tokio::time::timeout(std::time::Duration::from_secs(5), sub.sink.notified())
                    .await
                    .expect("woken"),
            }
        }
        assert_eq!(got, [1, 2, 3]);
    }
}

#[tokio::test]
async fn a_calls_events_reach_a_watchers_socket_together_numbered_in_order() {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (client, accepted) = tokio::join!(tokio::net::TcpStream::connect(addr), listener.accept());
    let (mut client, server_side) = (client.unwrap(), accepted.unwrap().0);
    let hub = Hub::default();
    let sub = hub.subscribe("s", None);
    sub.sink.attach(Arc::new(server_side));
    // The stream's task, with nothing to write, hands writing over.
    assert!(matches!(sub.sink.next(), sink::Next::Wait));
    hub.publish_all("s", &[ended(1), ended(2), ended(3)]);
    // The publisher wrote them itself: nothing is left for the stream's task.
    assert!(matches!(sub.sink.next(), sink::Next::Wait));
    let expected: Vec<u8> = (1..=3)
        .flat_map(|n| {
            let json = serde_json::to_string(&ended(n as usize)).unwrap();
            Frame::new(n, "ended", &json).chunk.to_vec()
        })
        .collect();
    let mut got = vec![0; expected.len()];
    tokio::time::timeout(
        std::time::Duration::from_secs(5),
        client.read_exact(&mut got),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&expected)
    );
    let replay = hub.subscribe("s", Some(0)).replay;
    assert_eq!(replay.iter().map(|f| f.id).collect::<Vec<_>>(), [1, 2, 3]);
}
