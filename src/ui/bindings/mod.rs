//! `/bindings`: the admin's matrix of which tools are global and which belong
//! to each workflow (`matrix`, cells in `grid`), with unsaved-change
//! tracking, history and restore (`history`, changes shown by `diff_view`),
//! the JSON file to download and load (`file_exchange`), the notice when
//! the start-up file differs from the bindings in force (`file_notice`),
//! the resulting tool list per workflow, the labels of checks and steps
//! (`labels`), and catalogue management (`catalogue`).

pub mod catalogue;
pub mod diff_view;
pub mod file_exchange;
pub mod file_notice;
pub mod grid;
pub mod history;
pub mod labels;
pub mod matrix;

use crate::api::bindings::{bindings_file, bindings_history, bindings_matrix, MatrixData};
use crate::domain::bindings::VersionMeta;
use crate::domain::bindings_file::BindingsFileStatus;
use crate::domain::user::Role;
use crate::ui::auth::RequireRole;
use crate::ui::bindings::matrix::Matrix;
use crate::ui::components::{fetched, Fetched, Loaded, MaybeEmpty};
use leptos::prelude::*;

impl MaybeEmpty for MatrixData {}

/// The page: admins only. Resources are created here, outside the role
/// guard's reactive children, so server rendering and hydration create them
/// in the same order. `reload` refetches everything (after a restore or a
/// catalogue change); `saves` only the history and the start-up file's
/// comparison.
#[island]
pub fn BindingsPage() -> impl IntoView {
    crate::ui::auth::provide_auth();
    let reload = RwSignal::new(0u32);
    let saves = RwSignal::new(0u32);
    let matrix = fetched(move || reload.get(), |_| bindings_matrix());
    let history = fetched(move || (reload.get(), saves.get()), |_| bindings_history());
    let file = fetched(move || (reload.get(), saves.get()), |_| bindings_file());
    let fetched = Fetches {
        history,
        file,
        reload,
        saves,
    };
    view! {
        <RequireRole role=Role::Admin>
            <BindingsArea matrix fetched />
        </RequireRole>
    }
}

/// What the panels under the matrix load, and the counters that refetch it.
#[derive(Clone, Copy)]
pub struct Fetches {
    /// Saved versions, newest first.
    pub history: Fetched<Vec<VersionMeta>>,
    /// How the start-up file compares with the bindings in force.
    pub file: Fetched<Option<BindingsFileStatus>>,
    /// Bumped to refetch everything.
    pub reload: RwSignal<u32>,
    /// Bumped after a save.
    pub saves: RwSignal<u32>,
}

/// The heading, then the matrix and everything under it once loaded.
#[component]
fn BindingsArea(matrix: Fetched<MatrixData>, fetched: Fetches) -> impl IntoView {
    view! {
        <section class="page-head">
            <h1>"Tool bindings"</h1>
            <p class="muted">
                "Global tools are available in every workflow; the rest only in the workflows they are bound to. An agent in Disputes never gets the Mortgage Calculator unless you bind it there."
            </p>
        </section>
        <Loaded resource=matrix loading="Loading bindings…" let:data>
            <Matrix data fetched />
        </Loaded>
    }
}
