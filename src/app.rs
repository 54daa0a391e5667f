//! The HTML shell and the route table. Both run on the server only: the
//! browser hydrates the pages' islands (`HydrationScripts` in islands mode),
//! and every link is a page load. Which browser bundle a page loads is
//! `bundle_for`, next to the routes it names.

use crate::domain::assets::Bundle;
use crate::ui::agents::AgentsPage;
use crate::ui::auth::provide_auth;
use crate::ui::bindings::BindingsPage;
use crate::ui::home::HomePage;
use crate::ui::layout::{Layout, NotFound};
use crate::ui::lessons::{LessonEditorPage, LessonRunsPage, LessonsPage};
use crate::ui::login::LoginPage;
use crate::ui::sessions::{SessionPage, SessionsPage};
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::components::{ParentRoute, Route, Router, Routes};
use leptos_router::{path, SsrMode};

/// The document around every page: stylesheet (at `stylesheet`, its
/// content-hashed name), favicon, and the hydration scripts of the bundle
/// `options` names (the page's group's, from `bundle_for`).
pub fn shell(options: LeptosOptions, stylesheet: &str) -> impl IntoView {
    let stylesheet = stylesheet.to_owned();
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <link rel="icon" type="image/svg+xml" href="/favicon.svg" />
                <link rel="stylesheet" href=stylesheet />
                <HydrationScripts options islands=true />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

/// The application: the signed-in user and the routes. Pages render fully
/// on the server before being sent (`SsrMode::Async`), so they read the
/// same with JavaScript disabled.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    provide_auth();

    view! {
        <Title text="Switchboard" />
        <Router>
            <Routes fallback=|| view! { <NotFound /> }>
                <Route path=path!("/login") view=LoginPage ssr=SsrMode::Async />
                <ParentRoute path=path!("") view=Layout ssr=SsrMode::Async>
                    <Route path=path!("") view=HomePage ssr=SsrMode::Async />
                    <Route path=path!("lessons") view=LessonsPage ssr=SsrMode::Async />
                    <Route path=path!("lessons/:id") view=LessonEditorPage ssr=SsrMode::Async />
                    <Route path=path!("lessons/:id/sessions") view=LessonRunsPage ssr=SsrMode::Async />
                    <Route path=path!("agents") view=AgentsPage ssr=SsrMode::Async />
                    <Route path=path!("bindings") view=BindingsPage ssr=SsrMode::Async />
                    <Route path=path!("sessions") view=SessionsPage ssr=SsrMode::Async />
                    <Route path=path!("playground") view=crate::ui::playground::PlaygroundPage ssr=SsrMode::Async />
                    <Route path=path!("sessions/:id") view=SessionPage ssr=SsrMode::Async />
                    <Route path=path!("workflows") view=crate::ui::workflows::WorkflowsPage ssr=SsrMode::Async />
                    <Route path=path!("workflows/:id") view=crate::ui::workflows::WorkflowSettingsPage ssr=SsrMode::Async />
                </ParentRoute>
            </Routes>
        </Router>
    }
}

/// The browser bundle a page at `path` loads: the one built with the
/// islands of the page's group (`ui::mod`'s `pages-*` features). A page
/// whose islands are not in its bundle would stay inert, so every route
/// above is named here, and an end-to-end spec (`bundles.spec.ts`) visits
/// each page checking that its islands hydrated. Paths no route matches
/// get `Start` (the "not found" page has no islands).
pub fn bundle_for(path: &str) -> Bundle {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["lessons", _id] => Bundle::Editor,
        ["sessions"] | ["sessions", _] => Bundle::Sessions,
        ["agents"] | ["bindings"] => Bundle::Admin,
        ["playground"] | ["workflows"] | ["workflows", _] => Bundle::Workflows,
        _ => Bundle::Start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_page_loads_its_groups_bundle() {
        for (path, bundle) in [
            ("/login", Bundle::Start),
            ("/", Bundle::Start),
            ("/lessons", Bundle::Start),
            ("/lessons/3/sessions", Bundle::Start),
            ("/lessons/3", Bundle::Editor),
            ("/lessons/3/", Bundle::Editor),
            ("/sessions", Bundle::Sessions),
            ("/sessions/abc", Bundle::Sessions),
            ("/agents", Bundle::Admin),
            ("/bindings", Bundle::Admin),
            ("/playground", Bundle::Workflows),
            ("/workflows", Bundle::Workflows),
            ("/workflows/idv", Bundle::Workflows),
            ("/nowhere/at/all", Bundle::Start),
            ("", Bundle::Start),
        ] {
            assert_eq!(bundle_for(path), bundle, "{path}");
        }
    }
}
