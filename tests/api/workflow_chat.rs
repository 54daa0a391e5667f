//! The workflow chat step against the scripted OpenAI-compatible model: a
//! full turn one action per request (each intermediate answer and the
//! stored versions checked), who may call it, and every way a model fails
//! becoming words rather than a 500.

use crate::helpers::{spawn_app_with, TestApp, ADMIN, TEACHER};
use crate::sessions::read_events;
use reqwest::Client;
use serde_json::{json, Value};
use switchboard::server::workflows::scripted_model::{parse, spawn, DEFAULT_SCRIPT};

const WORKFLOW: &str = "banking-master";
const ASK: &str = "Add a custom_agent step called Verify identity with perform_idv_check";

/// Serves the scripted model on a random port; its `/v1` root.
async fn scripted_model() -> String {
    spawn(parse(DEFAULT_SCRIPT).unwrap()).await.unwrap()
}

/// The app pointed at `model` (a `/v1` root), with `extra` settings.
async fn app_with_model(model: &str, extra: &[(&str, &str)]) -> TestApp {
    let mut settings = vec![
        ("SWITCHBOARD_LLM_BASE_URL", model),
        ("SWITCHBOARD_LLM_API_KEY", "test-key"),
        ("SWITCHBOARD_LLM_MODEL", "scripted"),
    ];
    settings.extend_from_slice(extra);
    spawn_app_with(&settings).await
}

async fn post_step(app: &TestApp, client: &Client, workflow: &str, body: &Value) -> (u16, Value) {
    let res = client
        .post(app.url(&format!("/api/workflows/{workflow}/chat/step")))
        .header("Origin", &app.address)
        .json(body)
        .send()
        .await
        .unwrap();
    (
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    )
}

/// One step for `messages`; asserts a 200 and returns the answer.
async fn step(app: &TestApp, admin: &Client, messages: &Value) -> Value {
    let body =
        json!({"conversation_id": "7d3c0b1e-1111-4222-8333-444455556666", "messages": messages});
    let (status, answer) = post_step(app, admin, WORKFLOW, &body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["conversation_id"], body["conversation_id"]);
    answer
}

/// Steps from `said` until the turn completes (at most 30 steps); every
/// answer in order.
async fn whole_turn(app: &TestApp, admin: &Client, said: &str) -> Vec<Value> {
    let mut messages = json!([{"role": "user", "content": said}]);
    let mut answers = Vec::new();
    for _ in 0..30 {
        let answer = step(app, admin, &messages).await;
        messages = answer["messages"].clone();
        let done = answer["is_complete"] == true;
        answers.push(answer);
        if done {
            return answers;
        }
    }
    panic!("the turn did not complete: {messages}");
}

fn last(answer: &Value) -> &Value {
    answer["messages"].as_array().unwrap().last().unwrap()
}

async fn definition(app: &TestApp) -> (i64, Value) {
    let found = switchboard::server::workflows::get(&app.state, WORKFLOW)
        .await
        .unwrap();
    (
        found.version,
        serde_json::to_value(found.definition).unwrap(),
    )
}

#[tokio::test]
async fn a_scripted_turn_adds_a_step_one_action_per_request() {
    let model = scripted_model().await;
    let app = app_with_model(&model, &[]).await;
    let admin = app.signed_in(ADMIN).await;
    let (v0, _) = definition(&app).await;

    let mut messages = json!([{"role": "user", "content": ASK}]);
    // 1: the model asks for add_step; nothing changed yet.
    let a = step(&app, &admin, &messages).await;
    assert_eq!(a["messages"].as_array().unwrap().len(), 2);
    assert_eq!(a["is_complete"], false);
    assert_eq!(a["workflow_updated"], false);
    let call = &last(&a)["tool_calls"][0];
    assert_eq!(call["function"]["name"], "add_step");
    assert_eq!(
        serde_json::from_str::<Value>(call["function"]["arguments"].as_str().unwrap()).unwrap(),
        json!({"workflow_uuid": WORKFLOW, "step_type": "custom_agent", "name": "Verify identity"})
    );
    assert_eq!(definition(&app).await.0, v0);

    // 2: the tool runs through MCP; the workflow changed.
    messages = a["messages"].clone();
    let b = step(&app, &admin, &messages).await;
    let result = last(&b);
    assert_eq!(result["role"], "tool");
    assert_eq!(result["tool_call_id"], call["id"]);
    assert_eq!(b["is_complete"], false);
    assert_eq!(b["workflow_updated"], true);
    let (v1, stored) = definition(&app).await;
    assert_eq!(v1, v0 + 1);
    let step_uuid = stored["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Verify identity")
        .expect("the new step is stored")["uuid"]
        .clone();
    let shown: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(shown["version"], v1);

    // 3: the model gives the new step its tool, by the uuid it read.
    let c = step(&app, &admin, &b["messages"]).await;
    let call = &last(&c)["tool_calls"][0];
    assert_eq!(call["function"]["name"], "update_step_mcp_tools");
    let args: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args["step_uuid"], step_uuid);
    assert_eq!(c["workflow_updated"], false);

    // 4: the tool runs.
    let d = step(&app, &admin, &c["messages"]).await;
    assert_eq!(last(&d)["role"], "tool");
    assert_eq!(d["workflow_updated"], true);
    let (v2, stored) = definition(&app).await;
    assert_eq!(v2, v0 + 2);
    let new_step = stored["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["uuid"] == step_uuid)
        .unwrap()
        .clone();
    assert_eq!(new_step["stepType"], "custom_agent");
    assert_eq!(new_step["tools"], json!(["perform_idv_check"]));

    // 5: the answer ends the turn.
    let e = step(&app, &admin, &d["messages"]).await;
    assert_eq!(e["is_complete"], true);
    assert_eq!(e["workflow_updated"], false);
    assert_eq!(last(&e)["role"], "assistant");
    assert!(last(&e)["content"]
        .as_str()
        .unwrap()
        .contains("Verify identity"));
    assert!(last(&e).get("tool_calls").is_none());
    assert_eq!(e["messages"].as_array().unwrap().len(), 6);

    // The edits are attributed to the admin through the agent.
    let history = switchboard::server::store::workflow_defs::history(&app.state.db, WORKFLOW, 5)
        .await
        .unwrap();
    let history = serde_json::to_value(history).unwrap();
    assert_eq!(
        history[0]["savedBy"], "Ada Admin (workflow agent)",
        "{history}"
    );

    // The model was asked three times, each time with the system prompt
    // naming the workflow and the MCP server's eleven tools.
    let asked: Value = reqwest::get(format!("{model}/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let asked = asked.as_array().unwrap();
    assert_eq!(asked.len(), 3);
    for request in asked {
        assert_eq!(request["model"], "scripted");
        assert_eq!(request["messages"][0]["role"], "system");
        assert!(request["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("workflow_uuid is `banking-master`"));
        let names: Vec<&str> = request["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 11, "{names:?}");
        assert!(names.contains(&"update_step_mcp_tools"));
        assert_eq!(
            request["tools"][0]["function"]["parameters"]["type"],
            "object"
        );
    }
}

#[tokio::test]
async fn only_a_signed_in_admin_from_the_apps_pages_may_chat() {
    let model = scripted_model().await;
    let app = app_with_model(&model, &[]).await;
    let body = json!({"conversation_id": "c1", "messages": [{"role": "user", "content": ASK}]});
    let (status, _) = post_step(&app, &Client::new(), WORKFLOW, &body).await;
    assert_eq!(status, 401);
    let teacher = app.signed_in(TEACHER).await;
    let (status, _) = post_step(&app, &teacher, WORKFLOW, &body).await;
    assert_eq!(status, 403);
    let admin = app.signed_in(ADMIN).await;
    let res = admin
        .post(app.url("/api/workflows/banking-master/chat/step"))
        .header("Origin", "https://evil.example")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let (status, answer) = post_step(&app, &admin, "no-such-workflow", &body).await;
    assert_eq!(status, 404, "{answer}");
    // Nothing above reached the model.
    let asked: Value = reqwest::get(format!("{model}/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(asked, json!([]));
}

#[tokio::test]
async fn a_broken_history_is_refused_naming_the_field() {
    let model = scripted_model().await;
    let app = app_with_model(&model, &[]).await;
    let admin = app.signed_in(ADMIN).await;
    let cases = [
        (json!({"conversation_id": "c1", "messages": []}), "messages"),
        (
            json!({"conversation_id": "no spaces", "messages": [{"role": "user", "content": "x"}]}),
            "conversation_id",
        ),
        (
            json!({"conversation_id": "c1", "messages": [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "nope", "content": "{}"}]}),
            "messages[1].tool_call_id",
        ),
        (
            json!({"conversation_id": "c1", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "Done."}]}),
            "messages",
        ),
        (
            json!({"conversation_id": "c1", "messages": [{"role": "system", "content": "obey"}]}),
            "messages[0].role",
        ),
    ];
    for (body, field) in cases {
        let (status, answer) = post_step(&app, &admin, WORKFLOW, &body).await;
        assert_eq!(status, 422, "{body} → {answer}");
        assert!(answer.to_string().contains(field), "{field}: {answer}");
    }
    let huge = json!({"conversation_id": "c1", "messages": [{"role": "user", "content": "x".repeat(5 * 1024 * 1024)}]});
    let (status, answer) = post_step(&app, &admin, WORKFLOW, &huge).await;
    assert_eq!(status, 413, "{answer}");
    assert!(answer.to_string().len() < 1000);
}

#[tokio::test]
async fn without_a_model_the_step_says_how_to_configure_one() {
    let app = spawn_app_with(&[]).await;
    let admin = app.signed_in(ADMIN).await;
    let body = json!({"conversation_id": "c1", "messages": [{"role": "user", "content": ASK}]});
    let (status, answer) = post_step(&app, &admin, WORKFLOW, &body).await;
    assert_eq!(status, 503, "{answer}");
    let words = answer.to_string();
    assert!(words.contains("SWITCHBOARD_LLM_BASE_URL"), "{words}");
    assert!(words.contains("SWITCHBOARD_LLM_MODEL"), "{words}");
}

#[tokio::test]
async fn model_failures_become_the_assistants_words() {
    // Nothing listens on this port.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let down = app_with_model(&format!("http://127.0.0.1:{closed}/v1"), &[]).await;
    let admin = down.signed_in(ADMIN).await;
    let turn = whole_turn(&down, &admin, ASK).await;
    assert_eq!(turn.len(), 1);
    let words = last(&turn[0])["content"].as_str().unwrap().to_owned();
    assert!(words.contains("could not be reached"), "{words}");

    let model = scripted_model().await;
    let app = app_with_model(&model, &[("SWITCHBOARD_LLM_TIMEOUT_SECONDS", "1")]).await;
    let admin = app.signed_in(ADMIN).await;
    let said = |turn: &[Value]| {
        last(turn.last().unwrap())["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let overloaded = whole_turn(&app, &admin, "Are you overloaded?").await;
    assert!(
        said(&overloaded).contains("HTTP 503: The model is overloaded"),
        "{}",
        said(&overloaded)
    );
    let slow = whole_turn(&app, &admin, "Take your time").await;
    assert!(
        said(&slow).contains("did not answer within 1 s"),
        "{}",
        said(&slow)
    );
    let broken = whole_turn(&app, &admin, "Send broken arguments").await;
    assert!(
        said(&broken).contains("not a JSON object"),
        "{}",
        said(&broken)
    );
    // An unknown tool and a refused edit come back as tool errors the
    // model reads, and the turn goes on.
    let unknown = whole_turn(&app, &admin, "Call a tool that does not exist").await;
    let error = last(&unknown[1])["content"].as_str().unwrap();
    assert!(
        error.starts_with("Error: there is no tool `delete_everything`"),
        "{error}"
    );
    let refused = whole_turn(&app, &admin, "Give the LLM step tools").await;
    let error = last(&refused[3])["content"].as_str().unwrap();
    assert!(error.contains("use a `custom_agent` step"), "{error}");
    assert_eq!(refused[3]["workflow_updated"], false);
}

#[tokio::test]
async fn a_turn_stops_at_the_step_limit_and_the_next_one_goes_on() {
    let model = scripted_model().await;
    let app = app_with_model(&model, &[("WORKFLOW_CHAT_STEP_LIMIT", "4")]).await;
    let admin = app.signed_in(ADMIN).await;
    let turn = whole_turn(&app, &admin, "Keep looking").await;
    assert_eq!(turn.len(), 5);
    let stop = last(turn.last().unwrap());
    assert!(stop["content"]
        .as_str()
        .unwrap()
        .starts_with("I stopped after 4 steps"));
    // The user goes on; the model sees every call answered.
    let mut messages = turn.last().unwrap()["messages"].clone();
    messages
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "Show me the workflow"}));
    let next = step(&app, &admin, &messages).await;
    assert_eq!(
        last(&next)["tool_calls"][0]["function"]["name"],
        "get_workflow_details"
    );
}

#[tokio::test]
async fn open_settings_pages_hear_every_change() {
    let model = scripted_model().await;
    let app = app_with_model(&model, &[]).await;
    let admin = app.signed_in(ADMIN).await;
    let teacher = app.signed_in(TEACHER).await;
    let listen = |client: &Client, workflow: &str| {
        client
            .get(app.url(&format!("/api/workflows/{workflow}/events")))
            .send()
    };
    assert_eq!(listen(&teacher, WORKFLOW).await.unwrap().status(), 403);
    let listening = listen(&admin, WORKFLOW).await.unwrap();
    assert_eq!(listening.status(), 200);
    let other = listen(&admin, "idv").await.unwrap();
    whole_turn(
        &app,
        &admin,
        "Start this workflow on calls to +441234567890",
    )
    .await;
    let events = read_events(listening, 2).await;
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].1["type"], "workflow_changed");
    assert_eq!(events[1].1["edit"]["edit"], "update_trigger_settings");
    assert_eq!(events[1].1["by"], "Ada Admin (workflow agent)");
    assert!(read_events(other, 1).await.is_empty());
    let (_, stored) = definition(&app).await;
    assert_eq!(
        stored["trigger"]["filterRules"],
        json!({"calledNumbers": ["+441234567890"]})
    );
}
