//! Reading settings from the environment: each kind of value (a count in a
//! range, an on/off switch, the listening address, origins) read one way,
//! and refused naming its variable and what it must be, never replaced by
//! a default in silence.

use crate::server::ServerError;
use std::net::SocketAddr;

/// The environment (or any key → value source, for tests) being read.
pub(super) struct Env<'a, F: Fn(&str) -> Option<String>>(pub(super) &'a F);

/// A setting that is present but unusable: `{key} must …, got "…"`.
fn refused(key: &str, rule: &str, raw: &str) -> ServerError {
    ServerError::Config(format!("{key} must {rule}, got {raw:?}"))
}

impl<F: Fn(&str) -> Option<String>> Env<'_, F> {
    fn get(&self, key: &str) -> Option<String> {
        (self.0)(key)
    }

    /// A whole number from 1 to `max`; `default` when unset.
    pub(super) fn count(
        &self,
        key: &str,
        default: usize,
        max: usize,
    ) -> Result<usize, ServerError> {
        match self.get(key) {
            Some(raw) => raw
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=max).contains(n))
                .ok_or_else(|| refused(key, &format!("be 1-{max}"), &raw)),
            None => Ok(default),
        }
    }

    /// An on/off switch (`1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`);
    /// `default` when unset or empty.
    pub(super) fn flag(&self, key: &str, default: bool) -> Result<bool, ServerError> {
        match self.get(key).as_deref() {
            None | Some("") => Ok(default),
            Some("1" | "true" | "yes" | "on") => Ok(true),
            Some("0" | "false" | "no" | "off") => Ok(false),
            Some(raw) => Err(refused(key, "be 1/true/yes/on or 0/false/no/off", raw)),
        }
    }

    /// `HOST` (an IP address, default 127.0.0.1) and `PORT` (default 3000).
    pub(super) fn addr(&self) -> Result<SocketAddr, ServerError> {
        let host = self.get("HOST").unwrap_or_else(|| "127.0.0.1".into());
        let port = match self.get("PORT") {
            Some(raw) => raw
                .parse::<u16>()
                .map_err(|_| refused("PORT", "be a number 0-65535", &raw))?,
            None => 3000,
        };
        format!("{host}:{port}")
            .parse()
            .or_else(|_| format!("[{host}]:{port}").parse())
            .map_err(|_| refused("HOST", "be an IP address", &host))
    }

    /// `PUBLIC_ORIGIN`, without a trailing `/`: an `http://` or `https://`
    /// origin, or none.
    pub(super) fn public_origin(&self) -> Result<Option<String>, ServerError> {
        let Some(origin) = self
            .get("PUBLIC_ORIGIN")
            .filter(|o| !o.is_empty())
            .map(|o| o.trim_end_matches('/').to_owned())
        else {
            return Ok(None);
        };
        if origin.starts_with("http://") || origin.starts_with("https://") {
            Ok(Some(origin))
        } else {
            Err(refused(
                "PUBLIC_ORIGIN",
                "start with http:// or https://",
                &origin,
            ))
        }
    }

    /// `EMBED_ORIGINS`: origins separated by spaces or commas, each a
    /// scheme and a host (which may frame Switchboard's pages).
    pub(super) fn embed_origins(&self) -> Result<Vec<String>, ServerError> {
        let origins: Vec<String> = self
            .get("EMBED_ORIGINS")
            .unwrap_or_default()
            .split([' ', ','])
            .filter(|o| !o.is_empty())
            .map(|o| o.trim_end_matches('/').to_owned())
            .collect();
        let is_origin = |o: &str| {
            o.strip_prefix("https://")
                .or_else(|| o.strip_prefix("http://"))
                .is_some_and(|host| {
                    !host.is_empty()
                        && host
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
                })
        };
        match origins.iter().find(|o| !is_origin(o)) {
            Some(bad) => Err(refused(
                "EMBED_ORIGINS",
                "list origins like https://lms.example",
                bad,
            )),
            None => Ok(origins),
        }
    }
}
