//! The start page: where to go next, one's API keys, and for admins who
//! has access.

use crate::api::keys::{list_api_keys, CreateApiKey, RevokeApiKey};
use crate::domain::api_key::{ApiKeyView, Scope};
use crate::domain::time::format_utc;
use crate::domain::user::Role;
use crate::ui::accounts::AccountsPanel;
use crate::ui::auth::use_auth;
use crate::ui::components::{fetched, CreateForm, Loaded};
use crate::ui::current;
use leptos::prelude::*;

/// Longest API key name the server accepts.
const MAX_KEY_NAME_CHARS: usize = 80;

/// Greets the user and links to each area they can use.
#[component]
pub fn HomePage() -> impl IntoView {
    let auth = use_auth();
    view! {
        <Loaded resource=auth.user loading="Loading…" let:user>
            {user
                .map(|u| {
                    let is_admin = u.role == Role::Admin;
                    view! {
                        <section class="hero">
                            <h1 data-testid="welcome">{format!("Welcome, {}", u.display_name)}</h1>
                            <p class="muted">{format!("Signed in as {} · {}", u.email, u.role)}</p>
                        </section>
                        <section class="cards">
                            <a class="card" href="/lessons">
                                <h2>"Lessons"</h2>
                                <p>
                                    "Choose the tools each lesson uses, when they fire, and see the exact prompt and token cost the tutor gets."
                                </p>
                            </a>
                            {is_admin
                                .then(|| {
                                    view! {
                                        <a class="card" href="/bindings">
                                            <h2>"Tool bindings"</h2>
                                            <p>
                                                "Decide which tools are global and which belong to each workflow."
                                            </p>
                                        </a>
                                        <a class="card" href="/agents">
                                            <h2>"Agents and vibes"</h2>
                                            <p>
                                                "Edit agent personas, their tools and prompts, and see exactly what each agent gets and costs."
                                            </p>
                                        </a>
                                    }
                                })}
                            <a class="card" href="/sessions">
                                <h2>"Live sessions"</h2>
                                <p>
                                    "Watch agent sessions move through workflows, checks and tool calls as they happen."
                                </p>
                            </a>
                        </section>
                        {is_admin.then(|| view! { <AccountsPanel me=u.id /> })}
                        <ApiKeysPanel admin=is_admin />
                    }
                })}
        </Loaded>
    }
}

/// API keys for agent backends: create (the secret is shown once), list,
/// revoke. Each user's own keys, which see what they see; an admin's
/// panel lists every key with its maker and offers every scope (the
/// server checks both).
#[island]
fn ApiKeysPanel(admin: bool) -> impl IntoView {
    let create = ServerAction::<CreateApiKey>::new();
    let revoke = ServerAction::<RevokeApiKey>::new();
    // Handles taken once, read with `try_get`/`current` (see `current`).
    let (creates, revokes, create_result) = (create.version(), revoke.version(), create.value());
    let keys = fetched(
        move || (creates.try_get(), revokes.try_get()),
        |_| list_api_keys(),
    );
    view! {
        <section class="panel" data-testid="api-keys">
            <div class="split">
                <h2>"API keys for agent backends"</h2>
                <CreateForm
                    action=create
                    name="name"
                    label="Key name"
                    placeholder="What it is for, e.g. Gemini Live tutor"
                    maxlength=MAX_KEY_NAME_CHARS
                    button="Create key"
                >
                    <ScopeChoices admin />
                </CreateForm>
            </div>
            {move || {
                current(&create_result)
                    .map(|result| match result {
                        Ok(created) => {
                            view! {
                                <div class="secret" role="status">
                                    <p>
                                        <strong>{format!("Key “{}” created.", created.key.name)}</strong>
                                        " Copy it now: it will not be shown again."
                                    </p>
                                    <code data-testid="new-api-key">{created.secret}</code>
                                </div>
                            }
                                .into_any()
                        }
                        Err(e) => view! { <p class="error">{e.to_string()}</p> }.into_any(),
                    })
            }}
            <p class="muted small">
                "Backends send it as " <code>"Authorization: Bearer <key>"</code>
                ", e.g. to GET /api/lessons/{id}/prompt?format=gemini."
            </p>
            <Loaded
                resource=keys
                loading="Loading keys…"
                empty=|| view! { <p class="muted">"No keys yet."</p> }
                let:list
            >
                <table class="table">
                    <thead>
                        <tr>
                            <th>"Name"</th>
                            {admin.then(|| view! { <th>"Made by"</th> })}
                            <th>"Key"</th>
                            <th>"Scopes"</th>
                            <th>"Created"</th>
                            <th>"Last used"</th>
                            <th></th>
                        </tr>
                    </thead>
                    <tbody>
                        <For each=move || list.clone() key=|k| k.id let:key>
                            <KeyRow key revoke admin />
                        </For>
                    </tbody>
                </table>
            </Loaded>
        </section>
    }
}

/// A checkbox per scope for a new key (a teacher's scopes only, for a
/// teacher); sessions and lesson prompts are ticked, since that is what a
/// voice-agent backend needs. Posted as `scopes[]`, the server function's
/// list argument.
#[component]
fn ScopeChoices(admin: bool) -> impl IntoView {
    let offered: &[Scope] = if admin { &Scope::ALL } else { &Scope::TEACHER };
    view! {
        <fieldset class="scopes" aria-label="Scopes">
            {offered
                .iter()
                .copied()
                .map(|scope| {
                    let ticked = matches!(scope, Scope::Sessions | Scope::LessonsRead);
                    view! {
                        <label class="small" title=scope.description()>
                            <input type="checkbox" name="scopes[]" value=scope.as_str() checked=ticked />
                            {scope.as_str()}
                        </label>
                    }
                })
                .collect_view()}
        </fieldset>
    }
}

/// One key: name (and for an admin its maker), prefix, scopes, when made
/// and last used, and Revoke while it is still valid.
#[component]
fn KeyRow(key: ApiKeyView, revoke: ServerAction<RevokeApiKey>, admin: bool) -> impl IntoView {
    let id = key.id;
    let owner = key.owner.unwrap_or_else(|| "(account gone)".to_owned());
    view! {
        <tr>
            <td>{key.name}</td>
            {admin.then(|| view! { <td data-testid="key-owner">{owner}</td> })}
            <td>
                <code>{format!("{}…", key.prefix)}</code>
            </td>
            <td data-testid="key-scopes">
                {key.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")}
            </td>
            <td class="muted">{format_utc(key.created_at)}</td>
            <td class="muted">
                {key.last_used_at.map_or_else(|| "never".to_owned(), format_utc)}
            </td>
            <td class="actions">
                {if key.revoked {
                    view! { <span class="badge warn">"revoked"</span> }.into_any()
                } else {
                    view! {
                        <button
                            type="button"
                            class="button ghost small danger"
                            on:click=move |_| {
                                revoke.dispatch(RevokeApiKey { id });
                            }
                        >
                            "Revoke"
                        </button>
                    }
                        .into_any()
                }}
            </td>
        </tr>
    }
}
