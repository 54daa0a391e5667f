//! The app's pages, in one table: each page's route, browser bundle,
//! required role and title. The route table (`app`), the sign-in redirect
//! and role check (`server::auth::guard_pages`) and the bundle a page loads
//! (`app::bundle_for`) all read [`PAGES`], so a page added here is routed,
//! guarded and bundled at once, and one cannot be added anywhere else.

use crate::domain::assets::Bundle;
use crate::domain::user::Role;

/// Which page: the route table maps each to its component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PageId {
    /// The sign-in form.
    Login,
    /// The start page.
    Home,
    /// The lesson list.
    Lessons,
    /// One lesson's editor.
    LessonEditor,
    /// One lesson's past runs.
    LessonRuns,
    /// Trying one lesson: a trial beside the live visualiser.
    LessonTrial,
    /// Agents and vibes.
    Agents,
    /// The tool bindings.
    Bindings,
    /// The connected MCP servers.
    McpServers,
    /// The live sessions list.
    Sessions,
    /// The plugin playground.
    Playground,
    /// One session's visualiser.
    Session,
    /// The workflows.
    Workflows,
    /// One workflow's settings and chat.
    Workflow,
    /// A teacher's students.
    Students,
    /// One student.
    Student,
    /// The admins' accounts list.
    Accounts,
    /// The signed-in account's own profile and password.
    Profile,
    /// Where a one-time password link leads (open to anyone holding one).
    ResetPassword,
}

/// One page of the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// Which page.
    pub id: PageId,
    /// Its route: `/`-separated segments, `:name` for a parameter.
    pub path: &'static str,
    /// The browser bundle with its islands.
    pub bundle: Bundle,
    /// The role it needs; `None` for a page anyone may see (signed out
    /// too). A page that needs one sends a signed-out visitor to sign in.
    pub role: Option<Role>,
    /// Its title (the tab's, before " · Switchboard").
    pub title: &'static str,
}

/// One segment of a page's route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    /// Matched as written.
    Static(&'static str),
    /// Any one segment, under this name.
    Param(&'static str),
}

const fn page(
    id: PageId,
    path: &'static str,
    bundle: Bundle,
    role: Option<Role>,
    title: &'static str,
) -> Page {
    Page {
        id,
        path,
        bundle,
        role,
        title,
    }
}

const TEACHER: Option<Role> = Some(Role::Teacher);
const ADMIN: Option<Role> = Some(Role::Admin);

/// Every page. A role of `Teacher` means any signed-in account (admins can
/// do what teachers can).
pub const PAGES: [Page; 19] = [
    page(PageId::Login, "/login", Bundle::Start, None, "Sign in"),
    page(PageId::Home, "/", Bundle::Start, TEACHER, "Home"),
    page(
        PageId::Lessons,
        "/lessons",
        Bundle::Start,
        TEACHER,
        "Lessons",
    ),
    page(
        PageId::LessonEditor,
        "/lessons/:id",
        Bundle::Editor,
        TEACHER,
        "Lesson",
    ),
    page(
        PageId::LessonRuns,
        "/lessons/:id/sessions",
        Bundle::Start,
        TEACHER,
        "Lesson runs",
    ),
    // In the sessions bundle with the visualiser it embeds, so the
    // editor's bundle stays without it.
    page(
        PageId::LessonTrial,
        "/lessons/:id/try",
        Bundle::Sessions,
        TEACHER,
        "Try lesson",
    ),
    page(PageId::Agents, "/agents", Bundle::Admin, ADMIN, "Agents"),
    page(
        PageId::Bindings,
        "/bindings",
        Bundle::Admin,
        ADMIN,
        "Tool bindings",
    ),
    page(
        PageId::McpServers,
        "/mcp-servers",
        Bundle::Admin,
        ADMIN,
        "MCP servers",
    ),
    page(
        PageId::Sessions,
        "/sessions",
        Bundle::Sessions,
        TEACHER,
        "Live sessions",
    ),
    page(
        PageId::Playground,
        "/playground",
        Bundle::Workflows,
        TEACHER,
        "Plugin playground",
    ),
    page(
        PageId::Session,
        "/sessions/:id",
        Bundle::Sessions,
        TEACHER,
        "Session",
    ),
    page(
        PageId::Workflows,
        "/workflows",
        Bundle::Workflows,
        ADMIN,
        "Workflows",
    ),
    page(
        PageId::Workflow,
        "/workflows/:id",
        Bundle::Workflows,
        ADMIN,
        "Workflow settings",
    ),
    page(
        PageId::Students,
        "/students",
        Bundle::Start,
        TEACHER,
        "Students",
    ),
    page(
        PageId::Student,
        "/students/:id",
        Bundle::Start,
        TEACHER,
        "Student",
    ),
    page(
        PageId::Accounts,
        "/accounts",
        Bundle::Start,
        ADMIN,
        "Accounts",
    ),
    page(
        PageId::Profile,
        "/profile",
        Bundle::Start,
        TEACHER,
        "Profile",
    ),
    page(
        PageId::ResetPassword,
        "/reset-password",
        Bundle::Start,
        None,
        "Set your password",
    ),
];

impl Page {
    /// The route's segments, in order (none for `/`).
    pub fn segments(&self) -> impl Iterator<Item = Segment> + Clone {
        self.path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| match s.strip_prefix(':') {
                Some(name) => Segment::Param(name),
                None => Segment::Static(s),
            })
    }

    /// Whether `path` (no query) is this page.
    pub fn matches(&self, path: &str) -> bool {
        let mut given = path.split('/').filter(|s| !s.is_empty());
        let mut expected = self.segments();
        loop {
            match (given.next(), expected.next()) {
                (None, None) => return true,
                (Some(g), Some(Segment::Static(s))) if g == s => {}
                (Some(_), Some(Segment::Param(_))) => {}
                _ => return false,
            }
        }
    }

    /// Whether `path` starts with this page's route, segment by segment.
    fn begins(&self, path: &str) -> bool {
        let mut given = path.split('/').filter(|s| !s.is_empty());
        self.segments()
            .all(|expected| match (given.next(), expected) {
                (Some(g), Segment::Static(s)) => g == s,
                (Some(_), Segment::Param(_)) => true,
                (None, _) => false,
            })
    }

    /// An address of this page, with `value` for each parameter (for tests
    /// and examples: `/lessons/1`).
    pub fn address_with(&self, value: &str) -> String {
        let parts: Vec<&str> = self
            .segments()
            .map(|s| match s {
                Segment::Static(s) => s,
                Segment::Param(_) => value,
            })
            .collect();
        format!("/{}", parts.join("/"))
    }

    /// Whether an account with `role` (or a signed-out visitor, `None`)
    /// may see this page.
    pub fn allows(&self, role: Option<Role>) -> bool {
        match (self.role, role) {
            (None, _) => true,
            (Some(needed), Some(role)) => role.satisfies(needed),
            (Some(_), None) => false,
        }
    }
}

/// The page at `path` (no query), if any.
pub fn page_at(path: &str) -> Option<&'static Page> {
    PAGES.iter().find(|page| page.matches(path))
}

/// The page whose area `path` is in: the page at `path`, or else the
/// page with the longest route that `path` continues (a file a page links,
/// such as `/lessons/4/sessions.csv` under `/lessons/:id`). The start page
/// (`/`) is no area: it would take in every path.
pub fn area_at(path: &str) -> Option<&'static Page> {
    page_at(path).or_else(|| {
        PAGES
            .iter()
            .filter(|page| page.segments().count() > 0 && page.begins(path))
            .max_by_key(|page| page.segments().count())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_is_one_page_or_none() {
        for (path, id) in [
            ("/", Some(PageId::Home)),
            ("", Some(PageId::Home)),
            ("/login", Some(PageId::Login)),
            ("/lessons/3", Some(PageId::LessonEditor)),
            ("/lessons/3/", Some(PageId::LessonEditor)),
            ("/lessons/3/sessions", Some(PageId::LessonRuns)),
            ("/lessons/3/try", Some(PageId::LessonTrial)),
            ("/sessions/abc", Some(PageId::Session)),
            ("/workflows/idv", Some(PageId::Workflow)),
            ("/lessonsx", None),
            ("/lessons/3/x", None),
            ("/healthz", None),
            ("/bindings/tool-bindings.json", None),
            ("/pkg/start.js", None),
        ] {
            assert_eq!(page_at(path).map(|p| p.id), id, "{path}");
        }
    }

    #[test]
    fn files_a_page_links_are_in_its_area_and_other_paths_in_none() {
        for (path, id) in [
            ("/lessons/4/sessions.csv", Some(PageId::LessonEditor)),
            ("/bindings/tool-bindings.json", Some(PageId::Bindings)),
            ("/lessons", Some(PageId::Lessons)),
            ("/", Some(PageId::Home)),
            ("/healthz", None),
            ("/api/sessions/events", None),
            ("/no-such-page", None),
        ] {
            assert_eq!(area_at(path).map(|p| p.id), id, "{path}");
        }
    }

    #[test]
    fn every_page_is_listed_once_at_an_address_that_finds_it() {
        for page in &PAGES {
            let address = page.address_with("1");
            assert_eq!(page_at(&address), Some(page), "{address}");
            assert_eq!(PAGES.iter().filter(|p| p.id == page.id).count(), 1);
        }
    }

    #[test]
    fn only_signing_in_and_setting_a_password_are_open_to_visitors_and_admin_pages_to_admins() {
        let open: Vec<PageId> = PAGES
            .iter()
            .filter(|p| p.allows(None))
            .map(|p| p.id)
            .collect();
        assert_eq!(open, [PageId::Login, PageId::ResetPassword]);
        for admin_page in ["/bindings", "/mcp-servers", "/accounts"] {
            let page = page_at(admin_page).unwrap();
            assert!(!page.allows(Some(Role::Teacher)), "{admin_page}");
            assert!(page.allows(Some(Role::Admin)), "{admin_page}");
        }
        assert!(page_at("/lessons").unwrap().allows(Some(Role::Admin)));
    }
}
