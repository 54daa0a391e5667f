//! The visualiser's "Progress" panel: how long the session has run (and,
//! for a lesson, how long is left and how many of its tasks are done and
//! items mastered — counted from the checks panel's own rows — and the
//! mistakes the tutor logged, from the timeline), the turns
//! its backend reported, and the nudges Switchboard gave the model — so a
//! watcher sees why the tutor called a tool when it did.

use crate::domain::agent_session::{CallOutcome, ToolCallRecord};
use crate::domain::lesson::nudge::TurnLog;
use crate::domain::session_checks::{tally, CheckKind, CheckRow};
use crate::ui::components::LocalTime;
use leptos::prelude::*;

/// `m:ss`, or `h:mm:ss` past an hour; negative as `-m:ss`.
pub fn clock_text(seconds: i64) -> String {
    let sign = if seconds < 0 { "-" } else { "" };
    let s = seconds.abs();
    if s >= 3600 {
        format!("{sign}{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{sign}{}:{:02}", s / 60, s % 60)
    }
}

/// The mistakes a tutor logged: its allowed `mark_for_review` calls.
fn mistakes_logged(calls: &[ToolCallRecord]) -> usize {
    calls
        .iter()
        .filter(|c| c.tool == "mark_for_review" && c.outcome == CallOutcome::Allowed)
        .count()
}

/// Now in the browser, Unix seconds (`None` while rendering on the server,
/// so the page and its hydration agree until the clock starts).
fn browser_now() -> Option<i64> {
    #[cfg(feature = "hydrate")]
    {
        Some((web_sys::js_sys::Date::now() / 1000.0) as i64)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        None
    }
}

/// Elapsed and remaining time (ticking each second until the session
/// ends), turns and nudges.
#[component]
pub fn Progress(
    started_at: i64,
    planned_minutes: Option<u32>,
    ended_at: RwSignal<Option<i64>>,
    turns: RwSignal<TurnLog>,
    /// The checks panel's rows, so both panels count the same thing.
    checks: Memo<Vec<CheckRow>>,
    /// The timeline's calls, for the mistakes the tutor logged.
    calls: RwSignal<Vec<ToolCallRecord>>,
) -> impl IntoView {
    let now = RwSignal::new(None::<i64>);
    Effect::new(move |_| {
        now.set(browser_now());
        if let Ok(handle) = set_interval_with_handle(
            move || {
                if ended_at.get_untracked().is_none() {
                    now.set(browser_now());
                }
            },
            std::time::Duration::from_secs(1),
        ) {
            on_cleanup(move || handle.clear());
        }
    });
    let at = move || ended_at.get().or(now.get());
    let elapsed = move || at().map_or("…".to_owned(), |t| clock_text(t - started_at));
    let remaining = move || {
        planned_minutes.map(|m| {
            let left = at().map(|t| i64::from(m) * 60 - (t - started_at));
            // An ended session has nothing left: it ran short or over.
            let ended = ended_at.get().is_some();
            let text = left.map_or("…".to_owned(), |l| match (l >= 0, ended) {
                (true, false) => format!("{} left of {m} min", clock_text(l)),
                (true, true) => format!("of {m} min planned"),
                (false, _) => format!("{} over {m} min", clock_text(-l)),
            });
            view! { <span data-testid="remaining">{text}</span> }
        })
    };
    let lesson = move || {
        checks.with(|rows| {
            let tasks =
                tally(rows, CheckKind::Task).map(|(d, n)| format!("Tasks done: {d} of {n}"));
            let items = tally(rows, CheckKind::Mastered)
                .map(|(d, n)| format!("Items mastered: {d} of {n}"));
            let logged = calls.with(|c| mistakes_logged(c));
            let mistakes =
                (tasks.is_some() || logged > 0).then(|| format!("Mistakes logged: {logged}"));
            let parts: Vec<String> = tasks.into_iter().chain(items).chain(mistakes).collect();
            (!parts.is_empty())
                .then(|| view! { <p data-testid="lesson-progress">{parts.join(" · ")}</p> })
        })
    };
    view! {
        <section class="panel progress">
            <h2>"Progress"</h2>
            <p class="progress-time">
                <span>"Elapsed "</span>
                <strong data-testid="elapsed">{elapsed}</strong>
                " "
                {remaining}
            </p>
            {lesson}
            <p data-testid="turns">
                {move || turns.with(|t| format!("Turns: {} student · {} tutor", t.student, t.tutor))}
            </p>
            <h3 class="small">"Nudges to the model"</h3>
            <ol class="nudges" data-testid="nudges">
                <For
                    each=move || turns.with(|t| t.nudges.clone()).into_iter().rev()
                    key=|n| (n.tool.clone(), n.text.clone(), n.at)
                    let:nudge
                >
                    <li class="nudge">
                        <span>{nudge.text.clone()}</span>
                        <span class="muted small">
                            <LocalTime ms=nudge.at * 1000 seconds=true />
                        </span>
                    </li>
                </For>
            </ol>
            <Show when=move || turns.with(|t| t.nudges.is_empty())>
                <p class="muted small">"None yet."</p>
            </Show>
        </section>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::clock_text;

    #[test]
    fn clock_text_reads_like_a_timer() {
        assert_eq!(clock_text(0), "0:00");
        assert_eq!(clock_text(125), "2:05");
        assert_eq!(clock_text(3723), "1:02:03");
        assert_eq!(clock_text(-61), "-1:01");
    }
}
