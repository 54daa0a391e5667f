//! A student's data as one JSON file: their record, every session (its
//! lesson, times, what was said) with every call (tool, arguments, result,
//! whether it was allowed) and outcome, their review queue and the
//! profile facts their lessons learnt.
//!
//! Streamed, so it is complete however much there is and never held
//! whole: a task writes it session by session, a page of
//! [`STUDENT_EXPORT_PAGE_ROWS`] rows at a time, into a small channel the
//! response body reads (a slow reader holds the writer back). A failure
//! half-way ends the body early, so the file is not valid JSON rather
//! than silently short.
//!
//! ```json
//! {"format": "switchboard.student-export/1", "exportedAt": 1767601800,
//!  "student": {...}, "sessions": [{..., "calls": [...], "outcomes": [...]}],
//!  "reviewQueue": [...], "profileFacts": [...]}
//! ```

use crate::domain::limits::STUDENT_EXPORT_PAGE_ROWS;
use crate::server::store::student_data::{self as store, StudentRow};
use crate::server::{AppState, ServerError};
use axum::body::{Body, Bytes};
use futures_util::StreamExt;
use serde::Serialize;
use tokio::sync::mpsc;

/// Rows per read.
const PAGE: usize = STUDENT_EXPORT_PAGE_ROWS;

/// What the file says it is, so a reader can tell versions apart.
pub const FORMAT: &str = "switchboard.student-export/1";

/// How many bytes the writer gathers before handing a chunk to the body.
const CHUNK_BYTES: usize = 64 * 1024;

/// Chunks in flight between the writer and the body.
const CHUNKS_IN_FLIGHT: usize = 4;

/// Why the writer stopped early.
enum Stop {
    /// The reader went away (nothing to report).
    Gone,
    /// Reading or encoding failed.
    Failed(ServerError),
}

impl From<ServerError> for Stop {
    fn from(e: ServerError) -> Self {
        Stop::Failed(e)
    }
}

/// The body being written: a buffer handed to the channel in chunks.
struct Out {
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
    buf: Vec<u8>,
}

impl Out {
    fn raw(&mut self, text: &str) {
        self.buf.extend_from_slice(text.as_bytes());
    }

    fn json<T: Serialize>(&mut self, value: &T) -> Result<(), Stop> {
        serde_json::to_writer(&mut self.buf, value).map_err(|e| {
            Stop::Failed(ServerError::Config(format!(
                "an export row did not encode: {e}"
            )))
        })
    }

    /// Writes `value` as an object with `extra` fields after its own (the
    /// caller writes those and the closing brace).
    fn open_object<T: Serialize>(&mut self, value: &T) -> Result<(), Stop> {
        self.json(value)?;
        if self.buf.last() == Some(&b'}') {
            self.buf.pop();
        }
        Ok(())
    }

    async fn flush(&mut self, force: bool) -> Result<(), Stop> {
        if self.buf.is_empty() || (!force && self.buf.len() < CHUNK_BYTES) {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::take(&mut self.buf));
        self.tx.send(Ok(chunk)).await.map_err(|_| Stop::Gone)
    }
}

/// The export of `student` (already let in by `access::may_see`) as a
/// streamed response body.
pub fn body(state: AppState, student: StudentRow) -> Body {
    let (tx, rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
    tokio::spawn(async move {
        let mut out = Out {
            tx: tx.clone(),
            buf: Vec::with_capacity(CHUNK_BYTES),
        };
        if let Err(Stop::Failed(e)) = write(&state, &student, &mut out).await {
            tracing::error!(student = student.id, error = %e, "a student's export failed");
            let _ = tx
                .send(Err(std::io::Error::other("the export failed")))
                .await;
        }
    });
    // Fused: a layer that polls the body once more after its end (the
    // compression layer does, for a browser's `Accept-Encoding`) gets
    // `None` again rather than a panic.
    Body::from_stream(
        futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        })
        .fuse(),
    )
}

/// Writes the whole file.
async fn write(state: &AppState, student: &StudentRow, out: &mut Out) -> Result<(), Stop> {
    out.raw(&format!(
        "{{\"format\":\"{FORMAT}\",\"exportedAt\":{},\"student\":",
        state.clock.now()
    ));
    out.json(student)?;
    out.raw(",\"sessions\":[");
    let mut after = None;
    let mut first = true;
    loop {
        let page = store::session_ids(&state.db, student.id, after, PAGE).await?;
        for (_, sid) in &page {
            if let Some(session) = store::export_session(&state.db, sid).await? {
                if !std::mem::take(&mut first) {
                    out.raw(",");
                }
                write_session(state, &session, out).await?;
            }
        }
        if page.len() < PAGE {
            break;
        }
        after = page.last().map(|(cursor, _)| *cursor);
    }
    out.raw("],\"reviewQueue\":[");
    write_review(state, student.id, out).await?;
    out.raw("],\"profileFacts\":[");
    let db = &state.db;
    write_pages(
        out,
        |after| store::facts_page(db, student.id, after, PAGE),
        |f| f.id,
    )
    .await?;
    out.raw("]}");
    out.flush(true).await
}

/// One session, its calls and its outcomes.
async fn write_session(
    state: &AppState,
    session: &store::ExportSession,
    out: &mut Out,
) -> Result<(), Stop> {
    let (db, sid) = (&state.db, session.id.as_str());
    out.open_object(session)?;
    out.raw(",\"calls\":[");
    write_pages(
        out,
        |after| store::calls_page(db, sid, after, PAGE),
        |c| c.id,
    )
    .await?;
    out.raw("],\"outcomes\":[");
    write_pages(
        out,
        |after| store::outcomes_page(db, sid, after, PAGE),
        |o| o.id,
    )
    .await?;
    out.raw("]}");
    Ok(())
}

/// The student's review items, oldest first.
async fn write_review(state: &AppState, student: i64, out: &mut Out) -> Result<(), Stop> {
    let db = &state.db;
    write_pages(
        out,
        |after| store::review_page(db, student, after, PAGE),
        |i| i.id,
    )
    .await
}

/// Writes the rows `fetch` pages through (each page the rows after the
/// last one's `id`), comma-separated, a page at a time.
async fn write_pages<T, F, Fut>(out: &mut Out, mut fetch: F, id: fn(&T) -> i64) -> Result<(), Stop>
where
    T: Serialize,
    F: FnMut(i64) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<T>, ServerError>>,
{
    let mut after = None;
    loop {
        let page = fetch(after.unwrap_or(0)).await?;
        for row in &page {
            if after.is_some() {
                out.raw(",");
            }
            out.json(row)?;
            after = Some(id(row));
        }
        out.flush(false).await?;
        if page.len() < PAGE {
            return Ok(());
        }
    }
}
