//! The Switchboard server: reads its configuration, raises its open-file
//! limit (`platform::open_files`), starts the application (see
//! `switchboard::startup`), prints the demo passwords of a new database
//! once, and serves until Ctrl-C or SIGTERM.

use switchboard::server::platform::{config::Config, open_files, telemetry};
use switchboard::server::ServerError;
use switchboard::startup::Application;

/// Stack of each runtime worker thread. Rendering a page walks its whole
/// view tree recursively; tokio's 2 MiB default leaves little room in a
/// debug build, so a larger page would abort the process rather than fail
/// one request. Only the few worker threads get it (virtual memory, touched
/// only as deep as rendering goes).
const WORKER_STACK_BYTES: usize = 8 * 1024 * 1024;

/// The server's allocator. A registration's large, short-lived buffers (a
/// thousand tools' bodies, sets and events) and thousands of watchers'
/// connections that come and go in crowds are both its daily work;
/// jemalloc serves the first faster than glibc's allocator, and the second
/// no longer creeps the heap up crowd after crowd. Measured against glibc
/// as tuned before (every allocation of 8,000 bytes and more `mmap`ed):
/// registering 1,000 new tools 0.8–0.95× the server time (larger schemas
/// 0.75–0.9×), fan-out to 10,000 watchers and the memory it adds the same
/// within noise; `benches/README.md`, "The allocator".
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    telemetry::init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(WORKER_STACK_BYTES)
        .build();
    let outcome = match runtime {
        Ok(runtime) => runtime.block_on(run()),
        Err(e) => Err(ServerError::Config(format!(
            "cannot start the runtime: {e}"
        ))),
    };
    if let Err(err) = outcome {
        eprintln!("switchboard: {err}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), ServerError> {
    let config = Config::from_env()?;
    raise_open_files(config.max_streams_per_session);
    let mut app = Application::build(config).await?;
    if let Some(accounts) = app.take_seeded_accounts() {
        println!("{accounts}");
    }
    let addr = app.address();
    tracing::info!("Switchboard listening on http://{addr}");
    println!("Switchboard is serving at http://{addr}");
    app.run_until_stopped(shutdown_signal())
        .await
        .map_err(|e| ServerError::Config(format!("server stopped: {e}")))
}

/// Raises the open-file limit ([`open_files`]) and logs what it got,
/// warning when it leaves fewer connections than one session may have
/// watchers: then the machine, not `MAX_STREAMS_PER_SESSION`, bounds an
/// audience.
fn raise_open_files(streams_per_session: usize) {
    match open_files::raise() {
        Ok(files) if files.connections() < streams_per_session as u64 => tracing::warn!(
            before = files.before,
            limit = files.now,
            connections = files.connections(),
            max_streams_per_session = streams_per_session,
            "the open-file limit leaves room for fewer connections than MAX_STREAMS_PER_SESSION; \
             raise the hard limit (ulimit -Hn, systemd's LimitNOFILE) for a larger audience"
        ),
        Ok(files) => tracing::info!(
            before = files.before,
            limit = files.now,
            "open-file limit raised to the hard limit"
        ),
        Err(e) => tracing::warn!(error = %e, "open-file limit not raised"),
    }
}

/// Resolves on Ctrl-C or SIGTERM, so in-flight requests can finish.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut sig) => {
                sig.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
