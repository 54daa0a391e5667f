//! The `/agents` page's server functions: admins only, saves named by the
//! version the editor loaded (a stale one changes nothing), and the preview
//! the editor shows with its exact token count.

use crate::helpers::{spawn_app, ADMIN, TEACHER};
use serde_json::{json, Value};

#[tokio::test]
async fn teachers_are_forbidden_every_agents_function() {
    let app = spawn_app().await;
    app.login(TEACHER).await;
    assert_eq!(app.rpc("agents_data", &[]).await.status(), 403);
    app.login(ADMIN).await;
    let data: Value = app.rpc("agents_data", &[]).await.json().await.unwrap();
    let oliver = data["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["value"]["id"] == "Oliver")
        .unwrap()
        .clone();
    let teacher = app.signed_in(TEACHER).await;
    let body = json!({"agent": oliver["value"], "version": oliver["version"]});
    let res = app.rpc_json_with(&teacher, "save_agent", &body).await;
    assert_eq!(res.status(), 403);
    let res = app
        .rpc_json_with(
            &teacher,
            "agent_preview",
            &json!({"agent": oliver["value"], "vibe_id": "todos"}),
        )
        .await;
    assert_eq!(res.status(), 403);
    let vibe = &data["vibes"][0];
    let res = app
        .rpc_json_with(
            &teacher,
            "save_vibe",
            &json!({"vibe": vibe["value"], "version": vibe["version"]}),
        )
        .await;
    assert_eq!(res.status(), 403, "{}", res.text().await.unwrap());
}

#[tokio::test]
async fn a_stale_save_changes_nothing_and_an_invalid_one_names_the_field() {
    let app = spawn_app().await;
    app.login(ADMIN).await;
    let data: Value = app.rpc("agents_data", &[]).await.json().await.unwrap();
    let oliver = data["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["value"]["id"] == "Oliver")
        .unwrap()
        .clone();
    let loaded = oliver["version"].as_i64().unwrap();
    let mut agent = oliver["value"].clone();
    agent["personality"] = json!("Brisk.");
    let res = app
        .rpc_json("save_agent", &json!({"agent": agent, "version": loaded}))
        .await;
    assert_eq!(res.status(), 200);
    let saved: i64 = res.json().await.unwrap();
    assert_eq!(saved, loaded + 1);

    agent["personality"] = json!("Slow.");
    let res = app
        .rpc_json("save_agent", &json!({"agent": agent, "version": loaded}))
        .await;
    assert_eq!(res.status(), 412);
    let data: Value = app.rpc("agents_data", &[]).await.json().await.unwrap();
    let now = data["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["value"]["id"] == "Oliver")
        .unwrap();
    assert_eq!(now["value"]["personality"], "Brisk.");
    assert_eq!(now["version"], saved);

    agent["tools"] = json!(["createTodo", "get_server_time"]);
    let res = app
        .rpc_json("save_agent", &json!({"agent": agent, "version": saved}))
        .await;
    assert_eq!(res.status(), 422);
    let body = res.text().await.unwrap();
    assert!(body.contains("agents.Oliver.tools[1]"), "{body}");
}

#[tokio::test]
async fn the_preview_is_the_stage_change_with_an_exact_token_count() {
    let app = spawn_app().await;
    app.login(ADMIN).await;
    let data: Value = app.rpc("agents_data", &[]).await.json().await.unwrap();
    let mut oliver = data["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["value"]["id"] == "Oliver")
        .unwrap()["value"]
        .clone();
    oliver["personality"] = json!("Unsaved and cheerful.");
    let res = app
        .rpc_json(
            "agent_preview",
            &json!({"agent": oliver, "vibe_id": "todos"}),
        )
        .await;
    assert_eq!(res.status(), 200);
    let preview: Value = res.json().await.unwrap();
    let prompt = preview["stage"]["systemPrompt"].as_str().unwrap();
    assert!(prompt.contains("Unsaved and cheerful."), "{prompt}");
    assert_eq!(preview["stageChange"]["responseType"], "new-stage");
    let inner: Value =
        serde_json::from_str(preview["stageChange"]["result"].as_str().unwrap()).unwrap();
    assert_eq!(inner["selectedTools"], preview["stage"]["selectedTools"]);
    assert!(preview["tokens"].as_u64().unwrap() > 50);
}
