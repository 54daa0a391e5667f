//! A NUL in any text a caller sends is refused at the door, 422 naming the
//! field, never a 500: PostgreSQL's text columns cannot hold U+0000, so a
//! door that stored one raw failed there (a plugin tool's description, an
//! API key's name). Every kind of caller: agent backend, plugin, admin key,
//! and a page's server function.

use crate::helpers::{spawn_app, ADMIN};
use crate::sessions::{call, open};
use serde_json::{json, Value};
use switchboard::domain::api_key::Scope;

#[tokio::test]
async fn a_nul_anywhere_is_refused_at_the_door_naming_the_field() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let s = open(&app, &key, "idv").await;
    let mut seen = Vec::new();
    let (status, body) = call(&app, &s, "get_server\u{0}time", json!({})).await;
    seen.push(("tool name", status, body));
    let (status, body) = call(&app, &s, "get_server_time", json!({"x\u{0}": "a\u{0}b"})).await;
    seen.push(("arguments", status, body));
    let post = |path: &str, body: Value| {
        app.client
            .post(app.url(&format!("/api/sessions/{}/{path}", s.id)))
            .bearer_auth(&s.token)
            .json(&body)
            .send()
    };
    let res = post(
        "register-tools",
        json!({"pluginType": "codap", "pluginVersion": "1\u{0}", "availableTools": [
            {"name": "add\u{0}Row", "description": "adds\u{0}", "parameters": {"type": "object"}},
            {"name": "addRow", "description": "adds\u{0} a row", "parameters": {"type": "object", "properties": {"a\u{0}": {"type": "string"}}}}
        ]}),
    )
    .await
    .unwrap();
    let status = res.status().as_u16();
    seen.push((
        "plugin tools",
        status,
        res.json().await.unwrap_or(Value::Null),
    ));
    let res = post("turns", json!({"role": "student", "text": "hi\u{0}"}))
        .await
        .unwrap();
    let status = res.status().as_u16();
    seen.push(("turn", status, res.json().await.unwrap_or(Value::Null)));
    let res = app
        .client
        .patch(app.url(&format!("/api/sessions/{}/state", s.id)))
        .bearer_auth(&s.token)
        .json(&json!({"checks": {"a\u{0}b": true}}))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    seen.push(("state", status, res.json().await.unwrap_or(Value::Null)));
    let (status, body) = call(&app, &s, "end_session", json!({"reason": "bye\u{0}now"})).await;
    seen.push(("end reason", status, body));
    let res = app
        .client
        .post(app.url("/api/sessions"))
        .bearer_auth(&key)
        .json(&json!({"workflowId": "id\u{0}v"}))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    seen.push((
        "workflow id",
        status,
        res.json().await.unwrap_or(Value::Null),
    ));
    let admin = app.api_key_with(&Scope::ALL).await;
    let get = |path: &str| app.client.get(app.url(path)).bearer_auth(&admin).send();
    let res = get("/api/agents/Hominio").await.unwrap();
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let mut agent: Value = res.json().await.unwrap();
    agent["systemPrompt"] = json!("You are\u{0} Oliver.");
    let res = app
        .client
        .put(app.url("/api/agents/Hominio"))
        .bearer_auth(&admin)
        .header("If-Match", etag)
        .json(&agent)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    seen.push((
        "agent prompt",
        status,
        res.json().await.unwrap_or(Value::Null),
    ));
    let res = app
        .client
        .post(app.url("/api/mcp-servers"))
        .bearer_auth(&admin)
        .json(&json!({"name": "up", "url": "http://127.0.0.1:9/m\u{0}cp", "headers": {"X-A": "b\u{0}"}}))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    seen.push((
        "mcp server",
        status,
        res.json().await.unwrap_or(Value::Null),
    ));
    let res = app
        .client
        .post(app.url("/api/workflows/idv/edits"))
        .bearer_auth(&admin)
        .header("If-Match", "\"0\"")
        .json(&json!({"edit": "add_step", "step_type": "custom_llm", "name": "Greet"}))
        .send()
        .await
        .unwrap();
    let step: Value = res.json().await.unwrap();
    let uuid = step["definition"]["steps"][0]["uuid"].clone();
    let res = app
        .client
        .post(app.url("/api/workflows/idv/edits"))
        .bearer_auth(&admin)
        .header("If-Match", "\"1\"")
        .json(&json!({"edit": "update_system_prompt", "step_uuid": uuid, "system_prompt": "Greet\u{0} them"}))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    seen.push((
        "step prompt",
        status,
        res.json().await.unwrap_or(Value::Null),
    ));
    let res = app
        .client
        .post(app.url("/api/workflows/idv/messages"))
        .bearer_auth(&admin)
        .json(&json!({"text": "hello\u{0}", "channel": "c\u{0}"}))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    seen.push((
        "workflow message",
        status,
        res.json().await.unwrap_or(Value::Null),
    ));
    app.login(ADMIN).await;
    let res = app
        .rpc(
            "create_api_key",
            &[("name", "key\u{0}"), ("scopes[0]", "sessions")],
        )
        .await;
    let status = res.status().as_u16();
    seen.push((
        "api key name",
        status,
        res.json().await.unwrap_or(Value::Null),
    ));
    let res = app
        .rpc_json("save_agent", &json!({"agent": {"id": "x\u{0}"}}))
        .await;
    let status = res.status().as_u16();
    seen.push((
        "agent by a page",
        status,
        res.json().await.unwrap_or(Value::Null),
    ));
    let expected = [
        ("tool name", "name"),
        ("arguments", "arguments.x\\0"),
        ("plugin tools", "availableTools[0].description"),
        ("turn", "text"),
        ("state", "checks.a\\0b"),
        ("end reason", "arguments.reason"),
        ("workflow id", "workflowId"),
        ("agent prompt", "systemPrompt"),
        ("mcp server", "headers.X-A"),
        ("step prompt", "system_prompt"),
        ("workflow message", "channel"),
        ("api key name", "name"),
        ("agent by a page", "agent.id"),
    ];
    assert_eq!(seen.len(), expected.len());
    for ((door, status, body), (named, field)) in seen.into_iter().zip(expected) {
        assert_eq!(door, named);
        assert_eq!(status, 422, "{door}: {body}");
        assert_eq!(body["Invalid"]["field"], field, "{door}: {body}");
        assert!(
            body["Invalid"]["rule"].as_str().unwrap().contains("U+0000"),
            "{door}: {body}"
        );
    }
}

#[tokio::test]
async fn a_nul_inside_an_archives_json_file_is_refused_naming_the_file_and_field() {
    let app = spawn_app().await;
    let key = app.api_key().await;
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed-003/src/lib");
    fn walk(root: &std::path::Path, at: &std::path::Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, text));
            }
        }
    }
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    let mut tar = tar::Builder::new(Vec::new());
    for (path, text) in &files {
        let text = if path == "AGENTS/Oliver/config.json" {
            text.replacen("You are now", "You\\u0000 are now", 1)
        } else {
            text.clone()
        };
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, path, text.as_bytes()).unwrap();
    }
    let res = app
        .client
        .post(app.url("/api/manifests"))
        .bearer_auth(&key)
        .body(tar.into_inner().unwrap())
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["Invalid"]["field"], "AGENTS/Oliver/config.json",
        "{body}"
    );
    assert!(
        body["Invalid"]["rule"]
            .as_str()
            .unwrap()
            .starts_with("systemPromptTemplate: must not contain U+0000"),
        "{body}"
    );
}
