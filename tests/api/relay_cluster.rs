//! Calls relayed to a plugin across instances (`plugins::across`): two
//! apps on one PostgreSQL database, the plugin's stream on one, the
//! agent's call on the other; the answer POSTed to either returns, once;
//! "is the plugin connected?" counts streams on every instance, and those
//! of an instance that stopped, or is no longer heard from, for the grace
//! only.
//!
//! Needs `TEST_POSTGRES_URL` (`make test-postgres` sets it); without it
//! each test prints a note and passes (on SQLite there is one instance).

use crate::freed::end;
use crate::helpers::{two_instances, TestApp};
use crate::relay::{
    agent_calls, answer, assert_deadline, disabling_is_heard, session_with_tool, PluginStream,
};
use crate::sessions::{call, Session};
use serde_json::json;
use std::time::Duration;
use switchboard::server::agent::plugins::RECONNECT_GRACE_MS;

const NOT_CONNECTED: &str = "plugin `custom` is not connected; its tools cannot run now";

/// Two instances on one new PostgreSQL database (with `settings`) and a
/// session whose plugin registered `addNote` on the first, A, once the
/// second, B, knows the plugin too: (A, B, the agent, the plugin); `None`
/// (and a note) without `TEST_POSTGRES_URL`.
async fn with_plugin(settings: &[(&str, &str)]) -> Option<(TestApp, TestApp, Session, Session)> {
    let (a, b) = two_instances(module_path!(), settings).await?;
    let (agent, plugin) = session_with_tool(&a).await;
    let until = tokio::time::Instant::now() + Duration::from_secs(2);
    while b.state.plugins.get(&plugin.id).is_none() {
        assert!(
            tokio::time::Instant::now() < until,
            "the other instance never loaded the plugin"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Some((a, b, agent, plugin))
}

/// What `call` (an agent's request) returns, within 5 s.
async fn within_5_s<T>(call: tokio::task::JoinHandle<T>, what: &str) -> T {
    tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect(what)
        .unwrap()
}

#[tokio::test]
async fn a_call_on_one_instance_reaches_the_plugin_on_the_other_and_its_answer_returns_once() {
    let Some((a, b, agent, plugin)) = with_plugin(&[]).await else {
        return;
    };
    let mut stream = PluginStream::open(&a, &plugin, None).await;
    let call = agent_calls(&b, &agent, "across");
    let offered = stream.request().await;
    assert_eq!(offered.data["name"], "addNote");
    assert_eq!(offered.data["arguments"], json!({"text": "across"}));
    assert_deadline(&offered.data, 10_000);
    let id = offered.data["callId"].as_str().unwrap();

    // Answered on the plugin's instance: the agent's, B, hears it.
    assert_eq!(
        answer(&a, &plugin, id, json!({"result": {"notes": 1}})).await,
        200
    );
    let reply = within_5_s(call, "the answer returned to the other instance").await;
    assert_eq!(reply["allowed"], true, "{reply}");
    assert_eq!(reply["result"], json!({"notes": 1}));
    // Once: a second answer is refused on either instance.
    assert_eq!(answer(&a, &plugin, id, json!({"result": 2})).await, 409);
    assert_eq!(answer(&b, &plugin, id, json!({"result": 2})).await, 409);
}

#[tokio::test]
async fn an_answer_posted_to_the_agents_own_instance_returns_too() {
    let Some((a, b, agent, plugin)) = with_plugin(&[]).await else {
        return;
    };
    let mut stream = PluginStream::open(&a, &plugin, None).await;
    let call = agent_calls(&b, &agent, "here");
    let offered = stream.request().await;
    let id = offered.data["callId"].as_str().unwrap();
    assert_eq!(
        answer(&b, &plugin, id, json!({"error": "no table"})).await,
        200
    );
    let reply = within_5_s(call, "the answer returned").await;
    assert_eq!(reply["allowed"], false, "{reply}");
    assert!(reply["reason"].as_str().unwrap().contains("no table"));
    assert_eq!(answer(&a, &plugin, id, json!({"result": 1})).await, 409);
}

#[tokio::test]
async fn a_stream_opening_on_another_instance_is_offered_a_waiting_call() {
    let Some((a, b, agent, plugin)) = with_plugin(&[]).await else {
        return;
    };
    let mut first = PluginStream::open(&a, &plugin, None).await;
    let call = agent_calls(&a, &agent, "waiting");
    let offered = first.request().await;
    // The plugin reconnects, through the load balancer, to B.
    drop(first);
    let mut second = PluginStream::open(&b, &plugin, Some(offered.id)).await;
    let again = second.request().await;
    assert_eq!(again.data["callId"], offered.data["callId"]);
    assert_eq!(again.data["arguments"], json!({"text": "waiting"}));
    assert_eq!(again.data["deadline"], offered.data["deadline"]);
    let id = again.data["callId"].as_str().unwrap();
    assert_eq!(answer(&b, &plugin, id, json!({"result": "ok"})).await, 200);
    let reply = call.await.unwrap();
    assert_eq!(reply["result"], "ok", "{reply}");
    // Answered: a stream opening anywhere is offered nothing.
    let mut fresh = PluginStream::open(&a, &plugin, None).await;
    assert!(fresh.next(Duration::from_millis(300)).await.is_none());
}

#[tokio::test]
async fn the_plugin_stream_on_another_instance_gets_the_availability_updates() {
    let Some((a, b, _, plugin)) = with_plugin(&[]).await else {
        return;
    };
    let mut stream = PluginStream::open(&b, &plugin, None).await;
    disabling_is_heard(&a, &plugin, &mut stream).await;
    // And B's rules for the session's calls changed with it.
    let set = b.state.plugins.get(&plugin.id).unwrap();
    assert_eq!(
        set.set.tool("addNote").unwrap().status,
        switchboard::domain::plugin::ToolStatus::Disabled
    );
}

#[tokio::test]
async fn with_no_plugin_stream_anywhere_a_call_is_refused_at_once_as_on_one_instance() {
    let Some((_a, b, agent, _)) = with_plugin(&[]).await else {
        return;
    };
    let started = std::time::Instant::now();
    let (status, reply) = call(&b, &agent, "addNote", json!({"text": "x"})).await;
    assert_eq!(status, 200);
    assert_eq!(reply["reason"], NOT_CONNECTED, "{reply}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_stopped_instances_plugin_is_waited_for_during_the_grace_and_refused_after() {
    let Some((a, b, agent, plugin)) = with_plugin(&[("PLUGIN_CALL_TIMEOUT_SECONDS", "1")]).await
    else {
        return;
    };
    let stream = PluginStream::open(&a, &plugin, None).await;
    a.shut_down().await;
    drop(stream);
    // Within the grace the plugin may come back (to B): the call waits,
    // and nobody answers.
    let reply = agent_calls(&b, &agent, "waits").await.unwrap();
    assert_eq!(
        reply["reason"], "plugin `custom` did not answer within 1 s",
        "{reply}"
    );
    // Past it, the plugin is gone.
    b.state.clock.advance(RECONNECT_GRACE_MS / 1000 + 1);
    let (_, reply) = call(&b, &agent, "addNote", json!({"text": "x"})).await;
    assert_eq!(reply["reason"], NOT_CONNECTED, "{reply}");
}

#[tokio::test]
async fn an_instance_not_heard_from_past_the_grace_holds_no_plugin() {
    let Some((a, b, agent, plugin)) = with_plugin(&[]).await else {
        return;
    };
    let _stream = PluginStream::open(&a, &plugin, None).await;
    // A's stream stays open, but as B's clock sees it A's heartbeat is
    // older than the grace: what B sees of an instance killed with its
    // streams open.
    b.state.clock.advance(RECONNECT_GRACE_MS / 1000 + 1);
    let started = std::time::Instant::now();
    let (_, reply) = call(&b, &agent, "addNote", json!({"text": "x"})).await;
    assert_eq!(reply["reason"], NOT_CONNECTED, "{reply}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_session_ended_on_one_instance_releases_the_call_waiting_on_the_other() {
    let Some((a, b, agent, plugin)) = with_plugin(&[]).await else {
        return;
    };
    let mut stream = PluginStream::open(&a, &plugin, None).await;
    let request = b
        .client
        .post(b.url(&format!("/api/sessions/{}/tool-calls", agent.id)))
        .bearer_auth(&agent.token)
        .json(&json!({"name": "addNote", "arguments": {"text": "ending"}}));
    let call = tokio::spawn(async move { request.send().await.unwrap() });
    let offered = stream.request().await;
    end(&a, &agent).await;
    // As on one instance: the call's agent hears at once that the session
    // is over (not after the plugin call timeout), and the plugin's
    // answer finds no session.
    let reply = within_5_s(call, "the waiting call was released").await;
    assert_eq!(reply.status(), 409);
    let id = offered.data["callId"].as_str().unwrap();
    assert_eq!(answer(&a, &plugin, id, json!({"result": 1})).await, 404);
}
