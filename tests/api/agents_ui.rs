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

/// The loaded set's `id` entry of `list` ("agents" or "vibes").
fn entry(data: &Value, list: &str, id: &str) -> Value {
    data[list]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["value"]["id"] == id)
        .unwrap()
        .clone()
}

#[tokio::test]
async fn the_vibe_editor_saves_the_vibe_and_its_matrix_together_or_nothing() {
    let app = spawn_app().await;
    app.login(ADMIN).await;
    let data: Value = app.rpc("agents_data", &[]).await.json().await.unwrap();
    let (vibe, oliver, rajesh) = (
        entry(&data, "vibes", "todos"),
        entry(&data, "agents", "Oliver"),
        entry(&data, "agents", "Rajesh"),
    );

    // The matrix: Oliver loses updateTodo, Rajesh gains filterTodos; the
    // vibe's description changes too. One save, every version moves.
    let mut o = oliver.clone();
    o["value"]["tools"] = json!(["createTodo", "toggleTodo"]);
    let mut r = rajesh.clone();
    r["value"]["tools"] = json!(["filterTodos"]);
    let mut v = vibe.clone();
    v["value"]["description"] = json!("Todos, by voice.");
    let res = app
        .rpc_json(
            "save_vibe_with_agents",
            &json!({"vibe_id": "todos", "vibe": v, "agents": [o, r]}),
        )
        .await;
    assert_eq!(res.status(), 200);
    let saved: Value = res.json().await.unwrap();
    let vv = vibe["version"].as_i64().unwrap();
    let (ov, rv) = (
        oliver["version"].as_i64().unwrap(),
        rajesh["version"].as_i64().unwrap(),
    );
    assert_eq!(saved, json!({"vibe": vv + 1, "agents": [ov + 1, rv + 1]}));
    let after: Value = app.rpc("agents_data", &[]).await.json().await.unwrap();
    assert_eq!(
        entry(&after, "agents", "Oliver")["value"]["tools"],
        json!(["createTodo", "toggleTodo"])
    );
    assert_eq!(
        entry(&after, "vibes", "todos")["value"]["description"],
        "Todos, by voice."
    );

    // Agents alone (the vibe unchanged is not sent, so its version stays);
    // one stale agent version refuses the whole save.
    let mut o2 = entry(&after, "agents", "Oliver");
    o2["value"]["tools"] = json!(["createTodo"]);
    let stale = rajesh.clone();
    let res = app
        .rpc_json(
            "save_vibe_with_agents",
            &json!({"vibe_id": "todos", "vibe": null, "agents": [o2, stale]}),
        )
        .await;
    assert_eq!(res.status(), 412, "{}", res.text().await.unwrap());
    let unchanged: Value = app.rpc("agents_data", &[]).await.json().await.unwrap();
    assert_eq!(unchanged, after, "nothing of a refused save is written");

    // A tool outside the vibe: 422 naming the agent's field; nothing saved.
    let mut o3 = entry(&after, "agents", "Oliver");
    o3["value"]["tools"] = json!(["createTodo", "get_server_time"]);
    let res = app
        .rpc_json(
            "save_vibe_with_agents",
            &json!({"vibe_id": "todos", "vibe": null, "agents": [o3]}),
        )
        .await;
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("agents.Oliver.tools[1]"));

    // Only the vibe's own agents, and only admins.
    let res = app
        .rpc_json(
            "save_vibe_with_agents",
            &json!({"vibe_id": "nope", "vibe": null, "agents": []}),
        )
        .await;
    assert_eq!(res.status(), 404);
    let teacher = app.signed_in(TEACHER).await;
    let res = app
        .rpc_json_with(
            &teacher,
            "save_vibe_with_agents",
            &json!({"vibe_id": "todos", "vibe": null, "agents": []}),
        )
        .await;
    assert_eq!(res.status(), 403);
    let after_all: Value = app.rpc("agents_data", &[]).await.json().await.unwrap();
    assert_eq!(after_all, after);
}

#[tokio::test]
async fn the_page_import_is_for_admins_from_the_page_only() {
    let app = spawn_app().await;
    app.login(ADMIN).await;
    let zip = app
        .client
        .get(app.url("/agents/manifests.zip"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap()
        .to_vec();
    let post = |client: &reqwest::Client, origin: Option<&str>, body: Vec<u8>| {
        let mut req = client.post(app.url("/agents/manifests")).body(body);
        if let Some(o) = origin {
            req = req.header("Origin", o);
        }
        req.send()
    };
    let res = post(&app.client, Some(&app.address), zip.clone())
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let counts: Value = res.json().await.unwrap();
    assert_eq!(
        (counts["agents"].as_u64(), counts["vibes"].as_u64()),
        (Some(3), Some(1))
    );

    // Another site's page posting with the admin's cookie is refused.
    for origin in [Some("http://evil.example"), None] {
        let res = post(&app.client, origin, zip.clone()).await.unwrap();
        assert_eq!(res.status(), 403, "origin {origin:?}");
    }
    let teacher = app.signed_in(TEACHER).await;
    let res = post(&teacher, Some(&app.address), zip.clone())
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let stranger = crate::helpers::new_client();
    let res = post(&stranger, Some(&app.address), zip.clone())
        .await
        .unwrap();
    assert!(
        [401, 303].contains(&res.status().as_u16()),
        "{}",
        res.status()
    );

    // A broken archive: 422 naming it, nothing changed; too large: 413.
    let res = post(&app.client, Some(&app.address), b"not an archive".to_vec())
        .await
        .unwrap();
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["Invalid"]["field"], "archive");
    let res = post(
        &app.client,
        Some(&app.address),
        vec![0u8; 4 * 1024 * 1024 + 1],
    )
    .await
    .unwrap();
    assert_eq!(res.status(), 413);
}
