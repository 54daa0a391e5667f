//! The HTML shell and the route table. Both run on the server only: the
//! browser hydrates the pages' islands (`HydrationScripts` in islands mode),
//! and every link is a page load. The routes are made from the page table
//! (`domain::pages::PAGES`): each page's path, title and role come from
//! there, and `page_view` gives its component; which browser bundle a page
//! loads (`bundle_for`) is read from the same table.

use crate::domain::assets::Bundle;
use crate::domain::pages::{page_at, Page, PageId, Segment, PAGES};
use crate::ui::agents::AgentsPage;
use crate::ui::auth::{provide_auth, RequireRole};
use crate::ui::bindings::BindingsPage;
use crate::ui::home::HomePage;
use crate::ui::layout::{Layout, NotFound};
use crate::ui::lessons::{LessonEditorPage, LessonRunsPage, LessonsPage};
use crate::ui::login::LoginPage;
use crate::ui::mcp_servers::McpServersPage;
use crate::ui::sessions::{SessionPage, SessionsPage};
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::any_nested_route::{AnyNestedRoute, IntoAnyNestedRoute};
use leptos_router::components::{Router, Routes};
use leptos_router::{
    path, NestedRoute, ParamSegment, PartialPathMatch, PathSegment, PossibleRouteMatch, SsrMode,
    StaticSegment,
};

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

/// The application: the signed-in user and the routes ([`TableRoutes`]).
/// Pages render fully on the server before being sent (`SsrMode::Async`),
/// so they read the same with JavaScript disabled.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    provide_auth();

    view! {
        <Title text="Switchboard" />
        <Router>
            <Routes fallback=|| view! { <NotFound /> }>
                <TableRoutes />
            </Routes>
        </Router>
    }
}

/// The routes, one per entry of the page table: pages anyone may see stand
/// alone; the others are framed by the layout (header, navigation).
#[component(transparent)]
fn TableRoutes() -> AnyNestedRoute {
    use leptos::tachys::view::iterators::StaticVec;
    let route = |page: &'static Page| {
        NestedRoute::new(TablePath(page), move || page_view(page)).ssr_mode(SsrMode::Async)
    };
    let open: Vec<_> = PAGES
        .iter()
        .filter(|p| p.role.is_none())
        .map(route)
        .collect();
    let framed: Vec<_> = PAGES
        .iter()
        .filter(|p| p.role.is_some())
        .map(route)
        .collect();
    let framed = NestedRoute::new(path!(""), Layout)
        .ssr_mode(SsrMode::Async)
        .child(StaticVec::from(framed));
    (StaticVec::from(open), framed).into_any_nested_route()
}

/// A page as its route shows it: its title, and its component behind the
/// role the table gives it (a 403 notice for an account without it), so
/// no page can forget its guard.
fn page_view(page: &'static Page) -> AnyView {
    let content = component_of(page.id);
    let title = format!("{} · Switchboard", page.title);
    match page.role {
        Some(role) => view! {
            <Title text=title />
            <RequireRole role>{content()}</RequireRole>
        }
        .into_any(),
        None => view! {
            <Title text=title />
            {content()}
        }
        .into_any(),
    }
}

/// Each page's component; a new `PageId` does not compile until it has one.
fn component_of(id: PageId) -> fn() -> AnyView {
    match id {
        PageId::Login => || view! { <LoginPage /> }.into_any(),
        PageId::Home => || view! { <HomePage /> }.into_any(),
        PageId::Lessons => || view! { <LessonsPage /> }.into_any(),
        PageId::LessonEditor => || view! { <LessonEditorPage /> }.into_any(),
        PageId::LessonRuns => || view! { <LessonRunsPage /> }.into_any(),
        PageId::LessonTrial => {
            || view! { <crate::ui::sessions::try_lesson::TryLessonPage /> }.into_any()
        }
        PageId::Agents => || view! { <AgentsPage /> }.into_any(),
        PageId::Bindings => || view! { <BindingsPage /> }.into_any(),
        PageId::McpServers => || view! { <McpServersPage /> }.into_any(),
        PageId::Sessions => || view! { <SessionsPage /> }.into_any(),
        PageId::Playground => || view! { <crate::ui::playground::PlaygroundPage /> }.into_any(),
        PageId::Session => || view! { <SessionPage /> }.into_any(),
        PageId::Workflows => || view! { <crate::ui::workflows::WorkflowsPage /> }.into_any(),
        PageId::Workflow => || view! { <crate::ui::workflows::WorkflowSettingsPage /> }.into_any(),
        PageId::Students => || view! { <crate::ui::students::StudentsPage /> }.into_any(),
        PageId::Student => || view! { <crate::ui::students::StudentPage /> }.into_any(),
        PageId::Accounts => || view! { <crate::ui::accounts::AccountsPage /> }.into_any(),
        PageId::Profile => || view! { <crate::ui::accounts::ProfilePage /> }.into_any(),
        PageId::ResetPassword => || view! { <crate::ui::accounts::ResetPasswordPage /> }.into_any(),
    }
}

/// A page's route for the router, made from its path in the table: the
/// same matching as `path!` with static and parameter segments.
#[derive(Debug, Clone, Copy)]
struct TablePath(&'static Page);

impl PossibleRouteMatch for TablePath {
    fn optional(&self) -> bool {
        false
    }

    fn test<'a>(&self, path: &'a str) -> Option<PartialPathMatch<'a>> {
        let mut remaining = path;
        let mut matched_len = 0;
        let mut params = Vec::new();
        for segment in self.0.segments() {
            let found = match segment {
                Segment::Static(s) => StaticSegment(s).test(remaining)?,
                Segment::Param(name) => ParamSegment(name).test(remaining)?,
            };
            matched_len += found.matched().len();
            remaining = found.remaining();
            params.extend(found.params());
        }
        Some(PartialPathMatch::new(
            remaining,
            params,
            &path[..matched_len],
        ))
    }

    fn generate_path(&self, path: &mut Vec<PathSegment>) {
        for segment in self.0.segments() {
            match segment {
                Segment::Static(s) => StaticSegment(s).generate_path(path),
                Segment::Param(name) => ParamSegment(name).generate_path(path),
            }
        }
    }
}

/// The browser bundle a page at `path` loads: the one built with the
/// islands of the page's group (`ui::mod`'s `pages-*` features), as the
/// page table says. A page whose islands are not in its bundle would stay
/// inert, so an end-to-end spec (`bundles.spec.ts`) visits each page
/// checking that its islands hydrated. Paths no page matches get `Start`
/// (the "not found" page has no islands).
pub fn bundle_for(path: &str) -> Bundle {
    page_at(path).map_or(Bundle::Start, |page| page.bundle)
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
            ("/mcp-servers", Bundle::Admin),
            ("/playground", Bundle::Workflows),
            ("/workflows", Bundle::Workflows),
            ("/workflows/idv", Bundle::Workflows),
            ("/accounts", Bundle::Start),
            ("/profile", Bundle::Start),
            ("/reset-password", Bundle::Start),
            ("/nowhere/at/all", Bundle::Start),
            ("", Bundle::Start),
        ] {
            assert_eq!(bundle_for(path), bundle, "{path}");
        }
    }
}
