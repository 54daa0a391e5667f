//! Stdio MCP servers: the process Switchboard starts for one (only where
//! `MCP_STDIO_ALLOWED`), speaking MCP on its stdin and stdout.
//!
//! The process gets the admin's variables and, of Switchboard's own
//! environment, only `McpTransports::inherited_env` (`PATH`, `HOME`, …):
//! never Switchboard's secrets. It leads a process group of its own, so
//! closing the connection (the server removed, Switchboard stopping)
//! signals and then kills everything it started (a launcher such as `npx`
//! and the server under it); dropping it kills it too. Its stderr is read
//! as it comes into a bounded [`StderrTail`], whose last lines say why it
//! ended. Neither its variables nor its stderr are logged.

use crate::domain::limits::excerpt;
use crate::domain::mcp_stdio::{StderrTail, StdioCommand, StdioEnv};
use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::transport::TokioChildProcess;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;
use tokio::task::JoinHandle;

/// How long to wait for the rest of a process's stderr once its
/// connection has ended: it is usually already closed.
const LAST_WORDS_WAIT: Duration = Duration::from_millis(500);

/// A started process: the transport to serve over, and its stderr.
pub struct Started {
    /// Its stdin and stdout, as rmcp's transport (owns the process).
    pub transport: TokioChildProcess,
    /// Its stderr, being read.
    pub stderr: StderrWatch,
}

/// Starts `command` with `env` and the `inherited` variables only.
pub fn start(
    command: &StdioCommand,
    env: &StdioEnv,
    inherited: &[(String, String)],
) -> Result<Started, String> {
    let mut cmd = tokio::process::Command::new(command.program());
    cmd.args(command.args())
        .env_clear()
        .envs(inherited.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .envs(env.iter());
    let mut wrapped = CommandWrap::from(cmd);
    wrapped.wrap(KillOnDrop).wrap(ProcessGroup::leader());
    let (transport, stderr) = TokioChildProcess::builder(wrapped)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", excerpt(command.program())))?;
    Ok(Started {
        transport,
        stderr: StderrWatch::new(stderr),
    })
}

/// A process's stderr, read into a bounded tail until it closes.
pub struct StderrWatch {
    tail: Arc<Mutex<StderrTail>>,
    reader: Option<JoinHandle<()>>,
}

impl StderrWatch {
    fn new(stderr: Option<ChildStderr>) -> Self {
        let tail = Arc::new(Mutex::new(StderrTail::default()));
        let reader = stderr.map(|mut stderr| {
            let tail = tail.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(read @ 1..) = stderr.read(&mut buf).await {
                    if let Ok(mut tail) = tail.lock() {
                        tail.feed(&buf[..read]);
                    }
                }
                if let Ok(mut tail) = tail.lock() {
                    tail.finish();
                }
            })
        });
        Self { tail, reader }
    }

    /// `why` the connection ended or failed, with the last lines the
    /// process wrote to stderr (waiting [`LAST_WORDS_WAIT`] at most for
    /// it to close).
    pub async fn explain(&mut self, why: String) -> String {
        if let Some(mut reader) = self.reader.take() {
            if tokio::time::timeout(LAST_WORDS_WAIT, &mut reader)
                .await
                .is_err()
            {
                reader.abort();
            }
        }
        let words = self.tail.lock().ok().and_then(|tail| tail.render());
        match words {
            Some(words) => format!("{why}; its stderr ended with: {words}"),
            None => why,
        }
    }
}

impl Drop for StderrWatch {
    fn drop(&mut self) {
        if let Some(reader) = &self.reader {
            reader.abort();
        }
    }
}
