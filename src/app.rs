//! The HTML shell and the route table. Both run on the server only: the
//! browser hydrates the pages' islands (`HydrationScripts` in islands mode),
//! and every link is a page load.

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

/// The document around every page: stylesheet (at `stylesheet`, the
/// bundle's content-hashed name), favicon, hydration scripts.
pub fn shell(options: LeptosOptions, stylesheet: String) -> impl IntoView {
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
