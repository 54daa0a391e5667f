//! Password links by mail, when `SMTP_URL` and `SMTP_FROM` are set: the
//! admin who makes a link then sees where it went instead of the link.
//!
//! lettre's SMTP transport on tokio, TLS by rustls on ring with the public
//! web's roots (`smtps://` or `smtp://…?tls=required`); no native-tls. A
//! transport is built per mail (links are rare), under one deadline
//! ([`SMTP_DEADLINE_SECS`]) so an unreachable server costs the admin a
//! few seconds and then shows the link.

use crate::domain::limits::SMTP_DEADLINE_SECS;
use crate::server::ServerError;
use lettre::message::{header::ContentType, Mailbox};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use std::time::Duration;

/// Where mail goes and whom it is from (`SMTP_URL`, `SMTP_FROM`).
#[derive(Clone)]
pub struct SmtpConfig {
    /// `smtps://user:pass@host:465`, `smtp://host:587?tls=required`, or
    /// plain `smtp://host:25` for a relay on the same machine.
    url: String,
    /// The sender, `Switchboard <noreply@school.example>`.
    from: Mailbox,
}

impl std::fmt::Debug for SmtpConfig {
    /// Never prints the URL: it may hold the relay's password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpConfig")
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl SmtpConfig {
    /// Reads `SMTP_URL` and `SMTP_FROM`: both or neither (`None`, links are
    /// shown to the admin); a URL lettre cannot use or a sender that is no
    /// address stops start-up naming the setting.
    pub fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Option<Self>, ServerError> {
        let url = get("SMTP_URL").filter(|v| !v.trim().is_empty());
        let from = get("SMTP_FROM").filter(|v| !v.trim().is_empty());
        let (url, from) = match (url, from) {
            (None, None) => return Ok(None),
            (Some(url), Some(from)) => (url.trim().to_owned(), from),
            _ => return Err(ServerError::Config(
                "SMTP_URL and SMTP_FROM go together: set both to mail password links, or neither"
                    .into(),
            )),
        };
        if AsyncSmtpTransport::<Tokio1Executor>::from_url(&url).is_err() {
            return Err(ServerError::Config(
                "SMTP_URL must look like smtps://user:pass@host:465 or smtp://host:587?tls=required"
                    .into(),
            ));
        }
        let from = from.trim().parse::<Mailbox>().map_err(|_| {
            ServerError::Config(format!(
                "SMTP_FROM must be an address like Switchboard <noreply@school.example>, got {:?}",
                crate::domain::limits::excerpt(&from)
            ))
        })?;
        Ok(Some(Self { url, from }))
    }
}

/// Mails `link` (working until `expires`, words) to `to`, named `name`;
/// the error is words for the admin (the server's reply or why it could
/// not be reached), never the URL.
pub async fn send_reset(
    smtp: &SmtpConfig,
    to: &str,
    name: &str,
    link: &str,
    expires: &str,
) -> Result<(), String> {
    let to: Mailbox = format!("{name} <{to}>")
        .parse()
        .or_else(|_| to.parse())
        .map_err(|_| format!("{to} is not an address a mail server takes"))?;
    let body = format!(
        "Hello {name},\n\nAn administrator made you a link to set your Switchboard password:\n\n{link}\n\n\
         It works once, until {expires}. If you did not expect it, ignore this mail.\n"
    );
    let message = Message::builder()
        .from(smtp.from.clone())
        .to(to)
        .subject("Set your Switchboard password")
        .header(ContentType::TEXT_PLAIN)
        .body(body)
        .map_err(|e| format!("the mail could not be made: {e}"))?;
    let deadline = Duration::from_secs(SMTP_DEADLINE_SECS);
    let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(&smtp.url)
        .map_err(|_| "SMTP_URL cannot be used".to_owned())?
        .timeout(Some(deadline))
        .build();
    match tokio::time::timeout(deadline, transport.send(message)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("the mail server refused it: {e}")),
        Err(_) => Err(format!(
            "the mail server did not answer within {SMTP_DEADLINE_SECS} s"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(pairs: &[(&str, &str)]) -> Result<Option<SmtpConfig>, ServerError> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        SmtpConfig::from_lookup(&|k: &str| {
            pairs
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn mail_is_off_without_settings_and_needs_both() {
        assert!(lookup(&[]).unwrap().is_none());
        let one = lookup(&[("SMTP_URL", "smtp://localhost:25")]).unwrap_err();
        assert!(one.to_string().contains("SMTP_FROM"), "{one}");
        let ok = lookup(&[
            ("SMTP_URL", "smtps://u:secret@mail.example:465"),
            ("SMTP_FROM", "Switchboard <noreply@school.example>"),
        ])
        .unwrap()
        .unwrap();
        assert!(!format!("{ok:?}").contains("secret"));
    }

    #[test]
    fn a_bad_url_or_sender_names_its_setting() {
        let url = lookup(&[("SMTP_URL", "http://x"), ("SMTP_FROM", "a@b.example")]).unwrap_err();
        assert!(url.to_string().contains("SMTP_URL"), "{url}");
        let from =
            lookup(&[("SMTP_URL", "smtp://localhost"), ("SMTP_FROM", "nobody")]).unwrap_err();
        assert!(from.to_string().contains("SMTP_FROM"), "{from}");
    }
}
