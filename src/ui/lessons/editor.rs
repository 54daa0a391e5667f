//! `/lessons/{id}`: loads the lesson and lays out the editor: heading with
//! version, Duplicate and Save, the save status, the problem count, then the
//! lesson form and tool panel beside the live preview and the history.
//! Leaving with unsaved edits asks first (`guard`). "Try this lesson"
//! links to the lesson's trial page (`ui::sessions::try_lesson`, in the
//! sessions bundle with the visualiser it embeds).
//!
//! The preview runs the same domain code as the server (`prompt::build`)
//! in the browser, so it updates on every keystroke with no round trip;
//! only the exact BPE count asks the server, after a pause in typing.

use crate::api::lessons::{get_lesson, lesson_history, DuplicateLesson, SaveLesson};
use crate::domain::declaration::DeclarationFormat;
use crate::domain::lesson::optimise::OptimiseMode;
use crate::domain::lesson::prompt::build;
use crate::domain::lesson::record::{LessonVersionMeta, LessonView};
use crate::domain::lesson::LessonDraft;
use crate::domain::time::format_utc;
use crate::domain::user::Role;
use crate::error::ApiError;
use crate::ui::auth::RequireRole;
use crate::ui::components::{
    fetched, guard_unsaved, JsonProp, Loaded, MaybeEmpty, SaveMessage, SaveStatus,
};
use crate::ui::current;
use crate::ui::lessons::edit::edit_draft;
use crate::ui::lessons::form::LessonForm;
use crate::ui::lessons::history::{reload_history, LessonHistory, Versions};
use crate::ui::lessons::preview::Preview;
use crate::ui::lessons::tool_panel::ToolPanel;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

impl MaybeEmpty for (LessonView, Vec<LessonVersionMeta>) {}

/// Changes the draft, then brings the tool configuration in line with the
/// lesson (smart defaults, see `edit_draft`), adding what changed by itself
/// to `notices` for the teacher to read. Every edit in the editor goes
/// through here.
pub fn apply(
    draft: RwSignal<LessonDraft>,
    notices: RwSignal<Vec<String>>,
    change: impl FnOnce(&mut LessonDraft),
) {
    draft.update(|d| {
        let changes = edit_draft(d, change);
        if !changes.is_empty() {
            notices.update(|n| n.extend(changes));
        }
    });
}

/// Loads the lesson named in the URL, with its history, and shows the
/// editor.
#[component]
pub fn LessonEditorPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").and_then(|s| s.parse::<i64>().ok());
    let lesson = fetched(id, |id| async move {
        let Some(id) = id else {
            return Err(ApiError::NotFound("That lesson".into()));
        };
        Ok((get_lesson(id).await?, lesson_history(id).await?))
    });
    view! {
        <RequireRole role=Role::Teacher>
            <Loaded
                resource=lesson
                loading="Loading lesson…"
                back=("/lessons", "Back to lessons")
                let:loaded
            >
                {
                    let (lesson, versions) = loaded;
                    let lesson_id = lesson.id;
                    view! {
                        <EditorIsland lesson=JsonProp(lesson) versions=JsonProp(versions) />
                        <section class="panel" data-testid="try-lesson">
                            <h2>"Try this lesson"</h2>
                            <p class="muted">"Play the student with the tutor this lesson describes, beside the live visualiser. It runs the saved lesson; trials are listed apart from real runs."</p>
                            <a class="button primary" data-testid="try-lesson-link" href=format!("/lessons/{lesson_id}/try")>"Try this lesson"</a>
                        </section>
                    }
                }
            </Loaded>
        </RequireRole>
    }
}

/// The editor, hydrated on its own: the lesson and its history come with
/// the page as props (read with the one JSON reader, `JsonProp`); the
/// history is loaded again after each save. Restoring a version reloads
/// the page, which renders the restored lesson.
#[island]
pub fn EditorIsland(
    lesson: JsonProp<LessonView>,
    versions: JsonProp<Vec<LessonVersionMeta>>,
) -> impl IntoView {
    let reload = RwSignal::new(0u32);
    let versions: Versions = RwSignal::new(Ok(versions.0));
    Effect::new(move |_| {
        if reload.get() > 0 {
            let _ = window().location().reload();
        }
    });
    view! { <LessonEditor lesson=lesson.0 reload versions /> }
}

/// The editor for one loaded lesson: owns the draft, the last saved copy
/// and the save; the parts below read and change the draft.
#[component]
fn LessonEditor(lesson: LessonView, reload: RwSignal<u32>, versions: Versions) -> impl IntoView {
    let lesson_id = lesson.id;
    let draft = RwSignal::new(lesson.draft.clone());
    let saved = RwSignal::new(lesson.draft.clone());
    let version = RwSignal::new(lesson.version);
    // Nothing to save without a change (each save is a version), but for
    // a lesson whose proposed tool configuration was never saved.
    let proposed = RwSignal::new(lesson.legacy_configuration);
    let notices = RwSignal::new(Vec::<String>::new());
    let optimise = RwSignal::new(Some(OptimiseMode::Normal));
    let format = RwSignal::new(DeclarationFormat::Gemini);

    let problems = Memo::new(move |_| draft.with(|d| d.problems()));
    let built = Memo::new(move |_| draft.with(|d| build(&d.prompt_input(optimise.get()))));
    let dirty = move || {
        draft
            .try_with(|d| saved.try_with(|s| d != s))
            .flatten()
            .unwrap_or(false)
    };
    guard_unsaved(dirty);

    let duplicate = ServerAction::<DuplicateLesson>::new();
    let duplicate_result = duplicate.value();
    Effect::new(move |_| {
        if let Some(Ok(copy)) = current(&duplicate_result) {
            crate::ui::auth::go_to(&format!("/lessons/{copy}"));
        }
    });

    let save = ServerAction::<SaveLesson>::new();
    let (save_result, saving) = (save.value(), save.pending());
    let save_message: SaveMessage = RwSignal::new(None);
    Effect::new(move |_| {
        if let Some(result) = current(&save_result) {
            match result {
                Ok(new_version) => {
                    version.set(new_version);
                    proposed.set(false);
                    saved.set(draft.get_untracked());
                    reload_history(lesson_id, versions);
                    save_message.set(Some(Ok("Saved.".into())));
                }
                Err(e) => save_message.set(Some(Err(e))),
            }
        }
    });
    let on_save = move |_| {
        save_message.set(None);
        save.dispatch(SaveLesson {
            id: lesson_id,
            version: version.get_untracked(),
            draft: draft.get_untracked(),
        });
    };
    let can_save = move || {
        (dirty() || proposed.try_get().unwrap_or(false))
            && problems.try_with(Vec::is_empty).unwrap_or(false)
            && !saving.try_get().unwrap_or(true)
    };

    view! {
        <section class="page-head split">
            <div>
                <a href="/lessons" class="muted small">
                    "← Lessons"
                </a>
                <h1>{move || draft.with(|d| d.title.clone())}</h1>
                <p class="muted small">
                    {format!(
                        "By {} · last changed {}{}",
                        lesson.owner_name,
                        format_utc(lesson.updated_at),
                        lesson.updated_by.as_ref().map(|b| format!(" by {b}")).unwrap_or_default(),
                    )}
                    {lesson
                        .legacy_configuration
                        .then(|| {
                            view! {
                                <span class="badge warn">
                                    "No tool configuration yet — the standard lesson tools are proposed"
                                </span>
                            }
                        })}
                </p>
            </div>
            <div class="save-bar">
                <a
                    class="button ghost small"
                    href=format!("/lessons/{}/sessions", lesson.id)
                    data-testid="lesson-runs"
                >
                    "Sessions"
                </a>
                <a
                    class="button ghost small"
                    href=format!("/lessons/{}/try", lesson.id)
                    data-testid="lesson-try"
                >
                    "Try it"
                </a>
                <span class="muted small" data-testid="version">
                    {move || format!("Version {}", version.get())}
                </span>
                {move || dirty().then(|| view! { <span class="badge warn">"Unsaved changes"</span> })}
                <button
                    type="button"
                    class="button"
                    data-testid="duplicate-lesson"
                    title=move || {
                        if dirty() { "Save first: the copy is made from the saved lesson" } else { "Copy this lesson into a new one" }
                    }
                    disabled=move || dirty() || duplicate.pending().try_get().unwrap_or(true)
                    on:click=move |_| {
                        duplicate.dispatch(DuplicateLesson { id: lesson_id });
                    }
                >
                    "Duplicate"
                </button>
                <button
                    type="button"
                    class="button primary"
                    data-testid="save-lesson"
                    disabled=move || !can_save()
                    on:click=on_save
                >
                    {move || if saving.try_get().unwrap_or(false) { "Saving…" } else { "Save" }}
                </button>
            </div>
        </section>
        <SaveStatus message=save_message testid="save-status" reload=format!("/lessons/{lesson_id}") />
        {move || {
            current(&duplicate_result)
                .and_then(Result::err)
                .map(|e| view! { <p class="error" role="alert">{e.to_string()}</p> })
        }}
        {move || {
            (!problems.with(Vec::is_empty))
                .then(|| {
                    view! {
                        <p class="error small" data-testid="problem-count">
                            {move || {
                                let n = problems.with(Vec::len);
                                format!("{n} problem{} to fix before saving", if n == 1 { "" } else { "s" })
                            }}
                        </p>
                    }
                })
        }}
        <div class="editor-grid">
            <div class="editor-main">
                <LessonForm draft notices problems />
                <ToolPanel draft notices problems built />
            </div>
            <aside class="editor-preview">
                <Preview built optimise format />
                <LessonHistory lesson_id versions version dirty=Signal::derive(dirty) reload />
            </aside>
        </div>
    }
    .into_any()
}
