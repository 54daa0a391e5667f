//! Exact token counts with the `o200k_base` BPE (GPT-4o family), the
//! server-side complement to the browser's characters/4 estimate.

use crate::server::ServerError;
use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

/// The tokenizer, built once: building it takes hundreds of milliseconds.
fn bpe() -> Result<&'static CoreBPE, ServerError> {
    static BPE: OnceLock<Result<CoreBPE, String>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| ServerError::Config(format!("cannot load the o200k_base tokenizer: {e}")))
}

/// Counts tokens synchronously (for benchmarks and blocking contexts).
pub fn count_blocking(text: &str) -> Result<usize, ServerError> {
    Ok(bpe()?.encode_ordinary(text).len())
}

/// Counts tokens off the async threads (long prompts take milliseconds).
pub async fn count(text: &str) -> Result<usize, ServerError> {
    let text = text.to_owned();
    tokio::task::spawn_blocking(move || count_blocking(&text)).await?
}

/// Loads the tokenizer now, so the first request does not pay for it.
pub fn warm_up() {
    if let Err(e) = bpe() {
        tracing::error!(error = %e, "tokenizer unavailable");
    }
}
