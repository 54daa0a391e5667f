//! `spawn_app`: the real application, started through the same
//! `Application::build` as `main`, on a random port with a fresh database.

use reqwest::{redirect::Policy, Client, Response};
use switchboard::domain::api_key::Scope;
use switchboard::server::{platform::config::Config, AppState};
use switchboard::startup::Application;
use tempfile::TempDir;

pub const TEACHER: (&str, &str) = ("teacher@example.com", "teacher-test-pass");
pub const ADMIN: (&str, &str) = ("admin@example.com", "admin-test-pass");

/// A running app and a cookie-keeping client pointed at it.
pub struct TestApp {
    pub address: String,
    pub state: AppState,
    /// Keeps cookies, does not follow redirects (tests look at them).
    pub client: Client,
    db_dir: std::sync::Arc<TempDir>,
    /// The database it serves (SQLite in `db_dir`, or its own PostgreSQL
    /// database when `TEST_POSTGRES_URL` is set).
    database: std::sync::Arc<TestDatabase>,
    settings: std::sync::Arc<Vec<(String, String)>>,
    stop: std::sync::Arc<tokio::sync::Notify>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Serves the app on 127.0.0.1:0 over a new database seeded with the demo
/// accounts (with known passwords) and no demo lessons.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(&[]).await
}

/// `spawn_app` with extra environment settings (`("HEADER_READ_TIMEOUT_SECONDS", "1")`).
pub async fn spawn_app_with(settings: &[(&str, &str)]) -> TestApp {
    let dir = std::sync::Arc::new(tempfile::tempdir().expect("temp dir"));
    let url = std::sync::Arc::new(fresh_database(&dir).await);
    let settings = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    serve(dir, url, std::sync::Arc::new(settings)).await
}

/// Whether the suite runs on PostgreSQL (`TEST_POSTGRES_URL`, an admin URL
/// of a throwaway server: `make test` starts one).
pub fn on_postgres() -> Option<String> {
    std::env::var("TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty())
}

/// Two instances serving one new PostgreSQL database with `settings` (A,
/// then its peer B), or `None` after a note naming `test` without
/// `TEST_POSTGRES_URL`: SQLite serves one instance, so the cluster tests
/// pass there with the note.
pub async fn two_instances(test: &str, settings: &[(&str, &str)]) -> Option<(TestApp, TestApp)> {
    if on_postgres().is_none() {
        eprintln!("{test}: skipped, two instances need TEST_POSTGRES_URL (PostgreSQL)");
        return None;
    }
    let a = spawn_app_with(settings).await;
    let b = a.peer().await;
    assert!(a.state.cluster.is_some() && b.state.cluster.is_some());
    Some((a, b))
}

/// Sends `req` and reads its answer's JSON body (panics if it has none).
pub async fn json_of(req: reqwest::RequestBuilder) -> serde_json::Value {
    req.send().await.unwrap().json().await.unwrap()
}

/// An answer's status and JSON body (`null` for a body that is not JSON).
pub async fn status_and_json(res: Response) -> (u16, serde_json::Value) {
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(serde_json::Value::Null))
}

/// An answer's `Retry-After`, in seconds.
pub fn retry_after(res: &Response) -> u64 {
    res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// The database an app serves, shared by its restarts and peers. A
/// PostgreSQL one is dropped after the last of them is: each is about
/// 10 MB on the server and the suite makes one per test, 4.2 GB when none
/// was dropped until the server was. (A CI run failed on a checkpoint
/// PostgreSQL could not make at that point; a full disk is one cause.)
pub struct TestDatabase {
    url: String,
    /// The database's name, on PostgreSQL (dropped through
    /// `TEST_POSTGRES_URL`, the server's admin URL).
    postgres: Option<String>,
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Some(name) = self.postgres.take() {
            // The test goes on at once; any still queued when the suite
            // ends go with the server.
            let _ = dropper().lock().map(|queue| queue.send(name));
        }
    }
}

/// How many ended tests' databases are dropped together. PostgreSQL
/// checkpoints before each drop, and a drop after every test made the
/// suite a third slower (270 s against 200 s on this 2-core machine); in
/// batches of 25 it takes as long as without drops, and the server holds
/// about 300 MB at the end instead of 4.2 GB.
const DROP_BATCH: usize = 25;

/// The queue of PostgreSQL databases to drop, and the thread that drops
/// them, `DROP_BATCH` at a time, with a runtime of its own (a test's
/// runtime may have stopped by then), over one connection a batch.
/// `FORCE` ends the connections of servers still running at the end of a
/// test. Cleaning up is not what a test checks, so a failed drop is a
/// note, not a failure.
fn dropper() -> &'static std::sync::Mutex<std::sync::mpsc::Sender<String>> {
    static QUEUE: std::sync::OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<String>>> =
        std::sync::OnceLock::new();
    QUEUE.get_or_init(|| {
        let (queue, databases) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for dropping test databases");
            let mut batch = Vec::new();
            for database in databases {
                batch.push(database);
                if batch.len() < DROP_BATCH {
                    continue;
                }
                let Some(admin) = on_postgres() else { break };
                runtime.block_on(async {
                    use sqlx::Connection;
                    let mut conn = match sqlx::PgConnection::connect(&admin).await {
                        Ok(conn) => conn,
                        Err(e) => {
                            eprintln!("note: {} test databases were not dropped: {e}", batch.len());
                            batch.clear();
                            return;
                        }
                    };
                    for name in batch.drain(..) {
                        let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                        if let Err(e) = sqlx::Executor::execute(&mut conn, sql.as_str()).await {
                            eprintln!("note: the test database {name} was not dropped: {e}");
                        }
                    }
                    let _ = conn.close().await;
                });
            }
        });
        std::sync::Mutex::new(queue)
    })
}

/// A new empty database: a SQLite file in `dir`, or with
/// `TEST_POSTGRES_URL` a new PostgreSQL database on that server.
async fn fresh_database(dir: &TempDir) -> TestDatabase {
    let Some(admin) = on_postgres() else {
        return TestDatabase {
            url: format!("sqlite://{}/switchboard.db", dir.path().display()),
            postgres: None,
        };
    };
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = format!(
        "sbt_{}_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&admin)
        .await
        .expect("TEST_POSTGRES_URL reachable");
    sqlx::Executor::execute(&mut conn, format!("CREATE DATABASE {name}").as_str())
        .await
        .expect("create a test database");
    conn.close().await.ok();
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    TestDatabase {
        url: format!("{base}/{name}"),
        postgres: Some(name),
    }
}

async fn serve(
    dir: std::sync::Arc<TempDir>,
    database: std::sync::Arc<TestDatabase>,
    settings: std::sync::Arc<Vec<(String, String)>>,
) -> TestApp {
    let url = database.url.clone();
    let config = Config::from_lookup(|key| {
        if let Some((_, value)) = settings.iter().find(|(k, _)| k == key) {
            return Some(value.clone());
        }
        match key {
            "PORT" => Some("0".into()),
            "DATABASE_URL" => Some(url.clone()),
            "SWITCHBOARD_TEACHER_PASSWORD" => Some(TEACHER.1.into()),
            "SWITCHBOARD_ADMIN_PASSWORD" => Some(ADMIN.1.into()),
            "SWITCHBOARD_DEMO_LESSONS" => Some("0".into()),
            _ => None,
        }
    })
    .expect("config");
    let app = Application::build(config).await.expect("application");
    let address = format!("http://{}", app.address());
    let state = app.state().clone();
    let stop = std::sync::Arc::new(tokio::sync::Notify::new());
    let signal = stop.clone();
    let server = tokio::spawn(app.run_until_stopped(async move { signal.notified().await }));
    TestApp {
        address,
        state,
        client: new_client(),
        db_dir: dir,
        database,
        settings,
        stop,
        server,
    }
}

pub fn new_client() -> Client {
    Client::builder()
        .cookie_store(true)
        .redirect(Policy::none())
        .build()
        .expect("client")
}

impl TestApp {
    /// A second server over the same database file, as after a restart.
    pub async fn restart(&self) -> TestApp {
        self.peer().await
    }

    /// Another instance over the same database, running beside this one
    /// (on PostgreSQL: a second instance of a cluster).
    pub async fn peer(&self) -> TestApp {
        serve(
            self.db_dir.clone(),
            self.database.clone(),
            self.settings.clone(),
        )
        .await
    }

    /// The database it serves.
    pub fn database_url(&self) -> &str {
        &self.database.url
    }

    /// Asks the server to shut down as on SIGTERM; resolves when it has
    /// stopped, or panics after five seconds.
    pub async fn shut_down(self) {
        self.stop.notify_one();
        tokio::time::timeout(std::time::Duration::from_secs(5), self.server)
            .await
            .expect("server stopped within 5 s")
            .expect("server task")
            .expect("serve");
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// `GET path` with API key (or session token) `key`, as JSON.
    pub async fn get_json(&self, key: &str, path: &str) -> serde_json::Value {
        json_of(self.client.get(self.url(path)).bearer_auth(key)).await
    }

    /// Calls a server function the way the app's own pages do.
    pub async fn rpc(&self, name: &str, form: &[(&str, &str)]) -> Response {
        self.rpc_with(&self.client, name, form).await
    }

    /// Same as `rpc` with another client (another browser).
    pub async fn rpc_with(&self, client: &Client, name: &str, form: &[(&str, &str)]) -> Response {
        client
            .post(self.url(&format!("/rpc/{name}")))
            .header("Origin", &self.address)
            .form(form)
            .send()
            .await
            .expect("request")
    }

    /// Signs the default client in; panics if that fails.
    pub async fn login(&self, (email, password): (&str, &str)) {
        let res = self
            .rpc("login", &[("email", email), ("password", password)])
            .await;
        assert_eq!(
            res.status(),
            200,
            "login failed: {}",
            res.text().await.unwrap()
        );
    }

    pub async fn session_rows(&self) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM auth_sessions")
            .fetch_one(&self.state.db)
            .await
            .unwrap()
    }
}

impl TestApp {
    /// Calls a JSON-encoded server function.
    pub async fn rpc_json(&self, name: &str, body: &serde_json::Value) -> Response {
        self.rpc_json_with(&self.client, name, body).await
    }

    /// Same as `rpc_json` with another client.
    pub async fn rpc_json_with(
        &self,
        client: &Client,
        name: &str,
        body: &serde_json::Value,
    ) -> Response {
        client
            .post(self.url(&format!("/rpc/{name}")))
            .header("Origin", &self.address)
            .json(body)
            .send()
            .await
            .expect("request")
    }

    /// Creates another teacher account and returns a client signed in as it.
    pub async fn other_teacher(&self) -> Client {
        use switchboard::domain::user::{Email, Role};
        use switchboard::server::{auth::hash_password, store::users};
        let email = Email::parse("other.teacher@example.com").unwrap();
        let hash = hash_password("other-pass".into()).await.unwrap();
        users::create(&self.state.db, &email, "Otto Other", Role::Teacher, &hash)
            .await
            .unwrap();
        self.signed_in((email.as_str(), "other-pass")).await
    }

    /// A new client (another browser) signed in with these credentials.
    pub async fn signed_in(&self, (email, password): (&str, &str)) -> Client {
        let client = new_client();
        let res = self
            .rpc_with(
                &client,
                "login",
                &[("email", email), ("password", password)],
            )
            .await;
        assert_eq!(
            res.status(),
            200,
            "login failed: {}",
            res.text().await.unwrap()
        );
        client
    }

    /// Saves a bindings document as `client`, on top of `version`.
    /// The bindings in force over the API as `key` reads them: their ETag
    /// and document.
    pub async fn bindings_with_etag(&self, key: &str) -> (String, serde_json::Value) {
        let res = self
            .client
            .get(self.url("/api/bindings"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        let etag = res.headers()["etag"].to_str().unwrap().to_owned();
        (etag, res.json().await.unwrap())
    }

    /// `PUT /api/bindings` of `doc` on top of `etag`, as `key`.
    pub async fn put_bindings(&self, key: &str, etag: &str, doc: &serde_json::Value) -> Response {
        self.client
            .put(self.url("/api/bindings"))
            .bearer_auth(key)
            .header("If-Match", etag)
            .json(doc)
            .send()
            .await
            .unwrap()
    }

    pub async fn save_bindings(
        &self,
        client: &Client,
        version: i64,
        bindings: &serde_json::Value,
    ) -> Response {
        let body = serde_json::json!({"version": version, "bindings": bindings});
        self.rpc_json_with(client, "save_bindings", &body).await
    }

    /// Creates an API key with every scope directly in the store and
    /// returns its secret.
    pub async fn api_key(&self) -> String {
        self.api_key_with(&Scope::ALL).await
    }

    /// The id of the account signed in as `email`.
    pub async fn user_id(&self, email: &str) -> i64 {
        sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
            .bind(email)
            .fetch_one(&self.state.db)
            .await
            .unwrap()
    }

    /// Creates an API key with `scopes` made by account `maker` (it acts
    /// as them) and returns its secret.
    pub async fn api_key_of(&self, maker: i64, scopes: &[Scope]) -> String {
        switchboard::server::store::api_keys::create(
            &self.state.db,
            "their backend",
            scopes,
            Some(maker),
        )
        .await
        .unwrap()
        .0
    }

    /// An API key with every scope made by the demo teacher: the sessions
    /// it opens are the teacher's, so the signed-in teacher watches them.
    pub async fn teacher_key(&self) -> String {
        self.key_by(TEACHER.0, &Scope::ALL).await
    }

    /// An API key with `scopes` made by the account signed in as `email`.
    pub async fn key_by(&self, email: &str, scopes: &[Scope]) -> String {
        self.api_key_of(self.user_id(email).await, scopes).await
    }

    /// Creates an API key with `scopes` and returns its secret.
    pub async fn api_key_with(&self, scopes: &[Scope]) -> String {
        switchboard::server::store::api_keys::create(&self.state.db, "test backend", scopes, None)
            .await
            .unwrap()
            .0
    }
}
