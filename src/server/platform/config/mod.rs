//! Start-up configuration, read once from the environment.
//!
//! Every setting has a default that gives a working local install, so
//! `make run` needs no configuration at all.

use crate::domain::limits;
use crate::server::ServerError;
use read::Env;
use std::net::SocketAddr;
use std::time::Duration;

mod read;

/// Settings the server runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on (`HOST`:`PORT`, default `127.0.0.1:3000`).
    pub addr: SocketAddr,
    /// The database (`DATABASE_URL`, default `sqlite://data/switchboard.db`;
    /// `postgres://…` for several instances, TLS through `sslmode=` in the
    /// URL). Anything else stops start-up naming the setting.
    pub database_url: String,
    /// Pool settings (`DATABASE_MAX_CONNECTIONS`, default 8 on SQLite and
    /// 16 on PostgreSQL; `DATABASE_ACQUIRE_TIMEOUT_SECONDS`, default 30).
    pub database_pool: crate::server::platform::db::PoolSettings,
    /// Where the built browser bundle and public files are (`SITE_ROOT`,
    /// default `target/site`).
    pub site_root: String,
    /// The origin browsers use to reach the app (`PUBLIC_ORIGIN`, e.g.
    /// `https://switchboard.example`). When unset, a request's own `Host`
    /// header is taken as the origin, which is right for direct access.
    pub public_origin: Option<String>,
    /// How long a sign-in lasts (`SESSION_TTL_HOURS`, default 12).
    pub session_ttl: Duration,
    /// How long an agent session may be idle before it expires
    /// (`SESSION_IDLE_MINUTES`, default 30).
    pub session_idle: Duration,
    /// Demo passwords (`SWITCHBOARD_TEACHER_PASSWORD`,
    /// `SWITCHBOARD_ADMIN_PASSWORD`); generated when unset.
    pub teacher_password: Option<String>,
    /// See `teacher_password`.
    pub admin_password: Option<String>,
    /// A `tool-bindings.json` that gives a new database its first bindings
    /// (`SWITCHBOARD_BINDINGS_FILE`); the demo default when unset.
    pub bindings_file: Option<String>,
    /// A directory in the manifest layout (`VIBES/`, `AGENTS/`, `TOOLS/`)
    /// that gives a database without vibes its agents and vibes
    /// (`SWITCHBOARD_MANIFESTS_DIR`); the demo vibe when unset.
    pub manifests_dir: Option<String>,
    /// Origins allowed to embed the app's pages in a frame (`EMBED_ORIGINS`,
    /// space- or comma-separated `https://host[:port]`); none by default,
    /// so only the app itself may frame them.
    pub embed_origins: Vec<String>,
    /// Origins whose pages may call the token-authenticated API — the
    /// session and plugin routes, the join exchange, the client module —
    /// from a browser (`API_ORIGINS`, comma-separated, or `*`); none by
    /// default. Cookie-authenticated routes never answer another origin
    /// (`domain::cors`).
    pub api_origins: crate::domain::cors::ApiOrigins,
    /// Most event streams open at once on one agent session
    /// (`MAX_STREAMS_PER_SESSION`, default 100,000: a whole audience may
    /// watch one call, on one instance; each watcher costs a socket and
    /// about 4 KiB, so the cap bounds one session's share near 400 MiB).
    pub max_streams_per_session: usize,
    /// Most event streams open at once for one signed-in user
    /// (`MAX_STREAMS_PER_USER`, default 50).
    pub max_streams_per_user: usize,
    /// How long an MCP session may be idle before it closes and frees its
    /// slot (`MCP_SESSION_IDLE_SECONDS`, default 300).
    pub mcp_session_idle: Duration,
    /// How long a graceful shutdown waits for open requests before it
    /// drops them (`SHUTDOWN_GRACE_SECONDS`, default 10).
    pub shutdown_grace: Duration,
    /// How long a client may take to send a request's headers, counted from
    /// when the server starts waiting for them; on a kept-alive connection
    /// that includes the idle time before its next request, so it is also
    /// the idle timeout (`HEADER_READ_TIMEOUT_SECONDS`, default 15).
    pub header_read_timeout: Duration,
    /// Most plugin tools one session may hold (`PLUGIN_TOOLS_MAX`, default
    /// 1,000).
    pub plugin_tools_max: usize,
    /// Plugin registrations and updates one session may make per minute
    /// (`PLUGIN_UPDATES_PER_MINUTE`, default 10; a sliding window).
    pub plugin_updates_per_minute: usize,
    /// How long an agent's call of a plugin tool waits for the plugin's
    /// answer (`PLUGIN_CALL_TIMEOUT_SECONDS`, default 10, at most 25 so the
    /// answer always comes before the 30 s request timeout).
    pub plugin_call_timeout: Duration,
    /// The workflow-editing agent's model (`SWITCHBOARD_LLM_BASE_URL`,
    /// `SWITCHBOARD_LLM_API_KEY`, `SWITCHBOARD_LLM_MODEL`,
    /// `SWITCHBOARD_LLM_TIMEOUT_SECONDS`), or what to set to have one: the
    /// chat step answers 503 with those words, the rest of the app runs.
    pub llm: Result<crate::server::workflows::llm::LlmConfig, String>,
    /// Steps one turn of the workflow chat may take before it is stopped
    /// (`WORKFLOW_CHAT_STEP_LIMIT`, default 12, at most 100).
    pub chat_step_limit: usize,
    /// Steps one turn of the agent runner may take before it is stopped
    /// (`AGENT_STEP_LIMIT`, default 12, at most 100).
    pub agent_step_limit: usize,
    /// How long a runner step waits for a call's result from the
    /// session's backend before telling the model it is pending
    /// (`AGENT_RESULT_WAIT_SECONDS`, default 5, at most 20).
    pub agent_result_wait: Duration,
    /// Sessions one workflow's start triggers may open per minute
    /// (`WORKFLOW_STARTS_PER_MINUTE`, default 120; a sliding window).
    pub workflow_starts_per_minute: usize,
    /// What one agent session may store (`SESSION_WRITES_PER_MINUTE`,
    /// `SESSION_CALLS_MAX`, `SESSION_STORED_MAX_BYTES`).
    pub session_budget: SessionBudget,
    /// The reverse proxies in front of the server (`TRUSTED_PROXIES`,
    /// comma- or space-separated addresses or CIDR blocks; none by
    /// default): only a request from one of them has its client address
    /// read from `X-Forwarded-For` (sign-in throttling goes by it).
    pub trusted_proxies: crate::domain::net::TrustedProxies,
    /// Whether a new database gets the demo teacher's lessons
    /// (`SWITCHBOARD_DEMO_LESSONS`, default on; `0`/`false` skips them).
    pub demo_lessons: bool,
    /// The secret Ultravox signs its webhooks with
    /// (`ULTRAVOX_WEBHOOK_SECRET`); without it `POST /api/ultravox/webhook`
    /// answers 503 naming the setting, since an unsigned call could end
    /// any session.
    pub ultravox_webhook_secret: Option<String>,
    /// Connected MCP servers' transports (`MCP_STDIO_ALLOWED`,
    /// `MCP_CA_FILE`, and what a started process inherits).
    pub mcp_transports: McpTransports,
    /// How long sessions, their calls and outcomes are kept after their
    /// last sign of life (`DATA_RETENTION_DAYS`, default 365, a school
    /// year; `0` or `off` keeps everything): the daily sweep of
    /// `server::retention` purges older ones.
    pub data_retention: crate::domain::retention::Retention,
    /// Where password links are mailed (`SMTP_URL`, `SMTP_FROM`, both or
    /// neither); `None`: the admin is shown each link to pass on.
    pub smtp: Option<crate::server::accounts::mail::SmtpConfig>,
}

/// How Switchboard may reach connected MCP servers beyond plain HTTP.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpTransports {
    /// Whether an admin may add a stdio server, a command Switchboard
    /// starts (`MCP_STDIO_ALLOWED`, default off: it runs programs on this
    /// machine as Switchboard's user).
    pub stdio_allowed: bool,
    /// A PEM file of extra certificate authorities trusted for `https://`
    /// upstreams (`MCP_CA_FILE`), for a company's internal CA; the public
    /// web's roots are always trusted.
    pub ca_file: Option<std::path::PathBuf>,
    /// The variables a started process inherits from Switchboard's own
    /// environment (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`, as
    /// MCP's own clients pass): never the rest, which holds Switchboard's
    /// secrets.
    pub inherited_env: Vec<(String, String)>,
}

/// The variables of Switchboard's environment a stdio server inherits.
const STDIO_INHERITED: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// What one agent session may store: writes in any minute, calls and
/// bytes in all. Defaults in `domain::limits`; each a setting so a load
/// test or a long-running kiosk can raise it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionBudget {
    /// Calls, results, state changes and turns in any 60 s.
    pub writes_per_minute: usize,
    /// Calls recorded in all.
    pub calls_max: usize,
    /// Bytes of arguments and results recorded in all.
    pub stored_max_bytes: usize,
}

impl Config {
    /// Reads the environment; a present but unusable value is an error rather
    /// than a silent fallback.
    pub fn from_env() -> Result<Self, ServerError> {
        Self::from_lookup(|key| std::env::var(key).ok())
    }

    /// Same as `from_env`, reading from any key→value source (for tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ServerError> {
        let env = Env(&get);
        let count = |key: &str, default: usize, max: usize| env.count(key, default, max);
        let addr = env.addr()?;
        let ttl_hours = count("SESSION_TTL_HOURS", 12, 24 * 90)? as u64;
        let idle_minutes = count("SESSION_IDLE_MINUTES", 30, 24 * 60)? as u64;
        let public_origin = env.public_origin()?;
        let embed_origins = env.embed_origins()?;
        let api_origins =
            crate::domain::cors::ApiOrigins::parse(&get("API_ORIGINS").unwrap_or_default())
                .map_err(|bad| {
                    ServerError::Config(format!(
                        "API_ORIGINS must be * or a comma-separated list of origins like \
                 https://codap.concord.org (scheme and host, no path), got {bad:?}"
                    ))
                })?;
        let max_streams_per_session = count("MAX_STREAMS_PER_SESSION", 100_000, 1_000_000)?;
        let max_streams_per_user = count("MAX_STREAMS_PER_USER", 50, 1_000_000)?;
        let mcp_session_idle = Duration::from_secs(count(
            "MCP_SESSION_IDLE_SECONDS",
            limits::MCP_SESSION_IDLE_SECS as usize,
            86_400,
        )? as u64);
        let shutdown_grace =
            Duration::from_secs(count("SHUTDOWN_GRACE_SECONDS", 10, 3_600)? as u64);
        let header_read_timeout =
            Duration::from_secs(count("HEADER_READ_TIMEOUT_SECONDS", 15, 600)? as u64);
        let plugin_tools_max = count(
            "PLUGIN_TOOLS_MAX",
            crate::domain::plugin::DEFAULT_MAX_TOOLS,
            100_000,
        )?;
        let plugin_updates_per_minute = count(
            "PLUGIN_UPDATES_PER_MINUTE",
            crate::domain::plugin::DEFAULT_UPDATES_PER_MINUTE,
            100_000,
        )?;
        let plugin_call_timeout =
            Duration::from_secs(count("PLUGIN_CALL_TIMEOUT_SECONDS", 10, 25)? as u64);
        let chat_step_limit = count(
            "WORKFLOW_CHAT_STEP_LIMIT",
            crate::domain::workflow_chat::DEFAULT_STEP_LIMIT,
            100,
        )?;
        let agent_step_limit = count(
            "AGENT_STEP_LIMIT",
            crate::domain::agent_runner::DEFAULT_STEP_LIMIT,
            100,
        )?;
        let agent_result_wait = Duration::from_secs(count(
            "AGENT_RESULT_WAIT_SECONDS",
            crate::domain::agent_runner::DEFAULT_RESULT_WAIT_SECONDS,
            crate::domain::agent_runner::MAX_RESULT_WAIT_SECONDS,
        )? as u64);
        let workflow_starts_per_minute = count(
            "WORKFLOW_STARTS_PER_MINUTE",
            limits::WORKFLOW_STARTS_PER_MINUTE,
            1_000_000,
        )?;
        let session_budget = SessionBudget {
            writes_per_minute: count(
                "SESSION_WRITES_PER_MINUTE",
                limits::SESSION_WRITES_PER_MINUTE,
                1_000_000,
            )?,
            calls_max: count("SESSION_CALLS_MAX", limits::SESSION_CALLS_MAX, 10_000_000)?,
            stored_max_bytes: count(
                "SESSION_STORED_MAX_BYTES",
                limits::SESSION_STORED_MAX_BYTES,
                1 << 40,
            )?,
        };
        let llm = crate::server::workflows::llm::LlmConfig::from_lookup(
            &get,
            count(
                "SWITCHBOARD_LLM_TIMEOUT_SECONDS",
                crate::server::workflows::llm::DEFAULT_TIMEOUT_SECONDS,
                crate::server::workflows::llm::MAX_TIMEOUT_SECONDS,
            )?,
        )?;
        let proxies = get("TRUSTED_PROXIES").unwrap_or_default();
        let trusted_proxies =
            crate::domain::net::TrustedProxies::parse(&proxies).map_err(|bad| {
                ServerError::Config(format!(
                    "TRUSTED_PROXIES must list IP addresses or CIDR blocks, got {bad:?}"
                ))
            })?;
        let demo_lessons = env.flag("SWITCHBOARD_DEMO_LESSONS", true)?;
        let mcp_transports = McpTransports {
            stdio_allowed: env.flag("MCP_STDIO_ALLOWED", false)?,
            ca_file: get("MCP_CA_FILE")
                .filter(|f| !f.is_empty())
                .map(std::path::PathBuf::from),
            inherited_env: STDIO_INHERITED
                .iter()
                .filter_map(|key| get(key).map(|value| ((*key).to_owned(), value)))
                .collect(),
        };
        let data_retention =
            crate::domain::retention::Retention::parse(get("DATA_RETENTION_DAYS").as_deref())
                .map_err(ServerError::Config)?;
        let database_url =
            get("DATABASE_URL").unwrap_or_else(|| "sqlite://data/switchboard.db".into());
        crate::server::platform::db::Backend::of_url(&database_url).map_err(ServerError::Config)?;
        let database_pool = crate::server::platform::db::PoolSettings {
            max_connections: get("DATABASE_MAX_CONNECTIONS")
                .map(|_| count("DATABASE_MAX_CONNECTIONS", 8, 10_000))
                .transpose()?
                .map(|n| n as u32),
            acquire_timeout: Duration::from_secs(count(
                "DATABASE_ACQUIRE_TIMEOUT_SECONDS",
                30,
                3_600,
            )? as u64),
        };
        Ok(Self {
            addr,
            database_url,
            database_pool,
            site_root: get("SITE_ROOT").unwrap_or_else(|| "target/site".into()),
            public_origin,
            session_ttl: Duration::from_secs(ttl_hours * 3600),
            session_idle: Duration::from_secs(idle_minutes * 60),
            teacher_password: get("SWITCHBOARD_TEACHER_PASSWORD").filter(|p| !p.is_empty()),
            admin_password: get("SWITCHBOARD_ADMIN_PASSWORD").filter(|p| !p.is_empty()),
            bindings_file: get("SWITCHBOARD_BINDINGS_FILE").filter(|f| !f.is_empty()),
            manifests_dir: get("SWITCHBOARD_MANIFESTS_DIR").filter(|f| !f.is_empty()),
            demo_lessons,
            trusted_proxies,
            embed_origins,
            api_origins,
            max_streams_per_session,
            max_streams_per_user,
            mcp_session_idle,
            shutdown_grace,
            header_read_timeout,
            plugin_tools_max,
            plugin_updates_per_minute,
            plugin_call_timeout,
            llm,
            chat_step_limit,
            agent_step_limit,
            agent_result_wait,
            workflow_starts_per_minute,
            session_budget,
            ultravox_webhook_secret: get("ULTRAVOX_WEBHOOK_SECRET")
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty()),
            mcp_transports,
            data_retention,
            smtp: crate::server::accounts::mail::SmtpConfig::from_lookup(&get)?,
        })
    }

    /// The `Content-Security-Policy` of a page whose inline scripts carry
    /// `nonce`: scripts only from the app itself or with that nonce (the
    /// hydration loader and the resources sent with the page), WebAssembly
    /// compiled from the app's own bundle, everything else (styles, images,
    /// fetches, event streams) from the app's own origin only. Nothing may
    /// frame the page but the app itself and `EMBED_ORIGINS`; no plugins;
    /// forms and `<base>` stay on the app's own origin.
    pub fn page_security_policy(&self, nonce: &str) -> String {
        let mut ancestors = vec!["'self'".to_owned()];
        ancestors.extend(self.embed_origins.iter().cloned());
        format!(
            "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
             style-src 'self'; img-src 'self' data:; connect-src 'self'; \
             frame-ancestors {}; object-src 'none'; base-uri 'self'; form-action 'self'",
            ancestors.join(" ")
        )
    }

    /// Whether cookies must carry `Secure` (the app is served over https).
    pub fn secure_cookies(&self) -> bool {
        self.public_origin
            .as_deref()
            .is_some_and(|o| o.starts_with("https://"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(pairs: &[(&str, &str)]) -> Result<Config, ServerError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_give_a_working_local_install() {
        let c = config(&[]).unwrap();
        assert_eq!(c.addr.to_string(), "127.0.0.1:3000");
        assert_eq!(c.database_url, "sqlite://data/switchboard.db");
        assert_eq!(c.database_pool, Default::default());
        assert_eq!(c.session_ttl, Duration::from_secs(12 * 3600));
        assert!(!c.secure_cookies());
        assert_eq!(c.bindings_file, None);
        assert!(c.demo_lessons);
        assert!(c.trusted_proxies.is_empty());
    }

    #[test]
    fn demo_lessons_can_be_switched_off_and_the_bindings_file_named() {
        let c = config(&[
            ("SWITCHBOARD_DEMO_LESSONS", "0"),
            ("SWITCHBOARD_BINDINGS_FILE", "/etc/tool-bindings.json"),
        ])
        .unwrap();
        assert!(!c.demo_lessons);
        assert_eq!(c.bindings_file.as_deref(), Some("/etc/tool-bindings.json"));
        assert_eq!(c.manifests_dir, None);
    }

    #[test]
    fn bad_values_are_refused_naming_the_variable() {
        for (key, value) in [
            ("PORT", "eighty"),
            ("HOST", "not a host"),
            ("SESSION_TTL_HOURS", "0"),
            ("PUBLIC_ORIGIN", "example.com"),
            ("SWITCHBOARD_DEMO_LESSONS", "maybe"),
            ("MAX_STREAMS_PER_USER", "0"),
            ("SHUTDOWN_GRACE_SECONDS", "soon"),
            ("HEADER_READ_TIMEOUT_SECONDS", "0"),
            ("MCP_SESSION_IDLE_SECONDS", "forever"),
            ("EMBED_ORIGINS", "https://ok.example javascript:alert(1)"),
            ("TRUSTED_PROXIES", "127.0.0.1 proxy.internal"),
            ("API_ORIGINS", "https://ok.example, codap.concord.org"),
            ("API_ORIGINS", "*, https://ok.example"),
            ("MCP_STDIO_ALLOWED", "sometimes"),
            ("DATA_RETENTION_DAYS", "a year"),
            ("DATA_RETENTION_DAYS", "-5"),
            ("DATABASE_URL", "mysql://sb@db/sb"),
            ("DATABASE_URL", "data/switchboard.db"),
            ("DATABASE_MAX_CONNECTIONS", "0"),
            ("DATABASE_ACQUIRE_TIMEOUT_SECONDS", "forever"),
        ] {
            let err = config(&[(key, value)]).unwrap_err().to_string();
            assert!(err.contains(key), "{err}");
        }
    }

    #[test]
    fn embed_origins_are_a_list_of_origins() {
        let c = config(&[(
            "EMBED_ORIGINS",
            "https://lms.example/, http://localhost:8080",
        )])
        .unwrap();
        assert_eq!(
            c.embed_origins,
            ["https://lms.example", "http://localhost:8080"]
        );
        assert!(config(&[]).unwrap().embed_origins.is_empty());
    }

    #[test]
    fn api_origins_default_to_none_and_take_a_list_or_a_star() {
        use crate::domain::cors::ApiOrigins;
        assert_eq!(config(&[]).unwrap().api_origins, ApiOrigins::None);
        let c = config(&[(
            "API_ORIGINS",
            "https://codap.concord.org,http://localhost:8080",
        )])
        .unwrap();
        assert_eq!(
            c.api_origins,
            ApiOrigins::List(vec![
                "https://codap.concord.org".into(),
                "http://localhost:8080".into()
            ])
        );
        let any = config(&[("API_ORIGINS", "*")]).unwrap();
        assert_eq!(any.api_origins, ApiOrigins::Any);
    }

    #[test]
    fn stdio_servers_are_off_by_default_and_inherit_only_a_few_variables() {
        let c = config(&[]).unwrap();
        assert!(!c.mcp_transports.stdio_allowed);
        assert_eq!(c.mcp_transports.ca_file, None);
        let c = config(&[
            ("MCP_STDIO_ALLOWED", "true"),
            ("MCP_CA_FILE", "/etc/company-ca.pem"),
            ("PATH", "/usr/bin"),
            ("SWITCHBOARD_LLM_API_KEY", "secret"),
        ])
        .unwrap();
        assert!(c.mcp_transports.stdio_allowed);
        assert_eq!(
            c.mcp_transports.ca_file.as_deref(),
            Some(std::path::Path::new("/etc/company-ca.pem"))
        );
        assert_eq!(
            c.mcp_transports.inherited_env,
            [("PATH".to_owned(), "/usr/bin".to_owned())]
        );
    }

    #[test]
    fn data_is_kept_a_school_year_unless_set_or_switched_off() {
        use crate::domain::retention::Retention;
        assert_eq!(config(&[]).unwrap().data_retention, Retention::Days(365));
        let c = config(&[("DATA_RETENTION_DAYS", "30")]).unwrap();
        assert_eq!(c.data_retention, Retention::Days(30));
        for off in ["0", "off"] {
            let c = config(&[("DATA_RETENTION_DAYS", off)]).unwrap();
            assert_eq!(c.data_retention, Retention::Off, "{off}");
        }
    }

    #[test]
    fn an_https_origin_makes_cookies_secure() {
        let c = config(&[("PUBLIC_ORIGIN", "https://sb.example/")]).unwrap();
        assert_eq!(c.public_origin.as_deref(), Some("https://sb.example"));
        assert!(c.secure_cookies());
    }
}
