//! `scripted-model`: Switchboard's scripted OpenAI-compatible model server
//! (`server::workflows::scripted_model`), for Playwright and `make demo-chat`.
//!
//! Usage: `scripted-model [--port N] [--script FILE]` (default port 3999,
//! the built-in `scripts/model-script.json`). Point Switchboard at it with
//! `SWITCHBOARD_LLM_BASE_URL=http://127.0.0.1:N/v1`.

use switchboard::server::workflows::scripted_model::{parse, router, DEFAULT_SCRIPT};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut port: u16 = 3999;
    let mut text = DEFAULT_SCRIPT.to_owned();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_default();
        match arg.as_str() {
            "--port" => {
                port = value
                    .parse()
                    .unwrap_or_else(|_| fail("--port takes a number"))
            }
            "--script" => {
                text = std::fs::read_to_string(&value)
                    .unwrap_or_else(|e| fail(&format!("cannot read {value}: {e}")))
            }
            _ => fail("usage: scripted-model [--port N] [--script FILE]"),
        }
    }
    let script = parse(&text).unwrap_or_else(|e| fail(&e));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap_or_else(|e| fail(&format!("cannot listen on port {port}: {e}")));
    println!("scripted model on http://127.0.0.1:{port}/v1");
    if let Err(e) = axum::serve(listener, router(script)).await {
        fail(&e.to_string());
    }
}

fn fail(message: &str) -> ! {
    eprintln!("scripted-model: {message}");
    std::process::exit(2)
}
