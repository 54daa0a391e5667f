//! A session's (or the session list's) event stream read as it comes, as
//! a browser's `EventSource` would: the two-instance tests (`cluster`)
//! watch one session on either instance and compare what each got.

use crate::helpers::TestApp;
use crate::sessions::Session;
use std::time::Duration;

/// An event stream read as it comes.
pub struct Watch {
    res: reqwest::Response,
    /// What came so far.
    pub text: String,
}

impl Watch {
    /// `GET path` as an `EventSource`, with `Last-Event-ID` if given.
    pub async fn open(
        app: &TestApp,
        client: &reqwest::Client,
        path: &str,
        last: Option<u64>,
    ) -> Watch {
        let mut req = client
            .get(app.url(path))
            .header("Accept", "text/event-stream");
        if let Some(last) = last {
            req = req.header("Last-Event-ID", last.to_string());
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 200);
        Watch {
            res,
            text: String::new(),
        }
    }

    /// Session `s`'s events on `app`.
    pub async fn session(app: &TestApp, s: &Session, last: Option<u64>) -> Watch {
        let path = format!("/api/sessions/{}/events?token={}", s.id, s.token);
        Watch::open(app, &app.client, &path, last).await
    }

    /// Session `s`'s events on `app`, read up to their snapshot.
    pub async fn snapshot(app: &TestApp, s: &Session) -> Watch {
        let mut watch = Watch::session(app, s, None).await;
        watch.until(|w| w.text.contains("\"snapshot\"")).await;
        watch
    }

    /// Reads until `done` holds for what came (panics after 5 s).
    pub async fn until(&mut self, done: impl Fn(&Watch) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !done(self) {
            let chunk = tokio::time::timeout_at(deadline, self.res.chunk())
                .await
                .unwrap_or_else(|_| panic!("not there after 5 s:\n{}", self.text))
                .unwrap();
            match chunk {
                Some(bytes) => self.text.push_str(&String::from_utf8_lossy(&bytes)),
                None => panic!("the stream ended:\n{}", self.text),
            }
        }
    }

    /// Whether the stream ends within 5 s (reading what still comes).
    pub async fn ends(mut self) -> bool {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            match tokio::time::timeout_at(deadline, self.res.chunk()).await {
                Ok(Ok(Some(_))) => {}
                Ok(_) => return true,
                Err(_) => return false,
            }
        }
    }

    /// The events so far: id, name, data.
    pub fn events(&self) -> Vec<(u64, String, String)> {
        self.text
            .split("\n\n")
            .filter_map(|block| {
                let field = |name: &str| {
                    block
                        .lines()
                        .find_map(|l| l.strip_prefix(name))
                        .map(str::to_owned)
                };
                Some((
                    field("id: ")?.parse().ok()?,
                    field("event: ")?,
                    field("data: ")?,
                ))
            })
            .collect()
    }

    /// The events after the snapshot (or all, without one).
    pub fn live(&self) -> Vec<(u64, String, String)> {
        self.events()
            .into_iter()
            .filter(|(_, name, _)| name != "snapshot")
            .collect()
    }

    /// The snapshot's id (panics without one).
    pub fn snapshot_id(&self) -> u64 {
        self.events()
            .iter()
            .find(|(_, name, _)| name == "snapshot")
            .expect("a snapshot")
            .0
    }
}
