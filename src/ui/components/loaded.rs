//! `<Loaded>`: a page's data with its loading, error and (for lists) empty
//! states, the skeleton every page used to write out by hand.

use crate::error::ApiError;
use crate::ui::components::Fetched;
use crate::ui::current;
use leptos::prelude::*;
use std::sync::Arc;

/// Whether loaded data has nothing to show, so `<Loaded>` can show its
/// `empty` view instead. Lists are empty without items; a single record
/// never is (the default).
pub trait MaybeEmpty {
    /// True when there is nothing to show.
    fn is_empty(&self) -> bool {
        false
    }
}

impl<T> MaybeEmpty for Vec<T> {
    fn is_empty(&self) -> bool {
        <[T]>::is_empty(self)
    }
}

impl<T> MaybeEmpty for Option<T> {}

/// Shows `children` with the resource's data once it has loaded; until then
/// `loading` (on the first load only: a reload keeps the old data on screen,
/// as `<Transition>` does), the error if it failed, and `empty` (when given)
/// for data with nothing in it.
///
/// An error is a plain `error` paragraph, or with `back` (link, text) a
/// notice with a way back, for a page that has nothing else to show.
///
/// The data is read with [`current`], so a response that lands as the page
/// is torn down shows nothing instead of panicking.
#[component]
pub fn Loaded<T, V, F>(
    /// The page's data.
    resource: Fetched<T>,
    /// What shows while it loads (`"Loading lessons…"`).
    loading: &'static str,
    /// What shows instead of `children` when the data is empty.
    #[prop(optional, into)]
    empty: Option<ViewFn>,
    /// Where a failed load offers to go instead: (href, link text).
    #[prop(optional)]
    back: Option<(&'static str, &'static str)>,
    /// The view of the loaded data.
    children: F,
) -> impl IntoView
where
    T: MaybeEmpty + Clone + Send + Sync + 'static,
    V: IntoView + 'static,
    F: Fn(T) -> V + Send + Sync + 'static,
{
    let children = Arc::new(children);
    view! {
        <Transition fallback=move || view! { <p class="muted">{loading}</p> }>
            {
                let children = children.clone();
                let empty = empty.clone();
                move || {
                    current(&resource)
                        .map(|result| match result {
                            Err(e) => failed(e, back),
                            Ok(data) if data.is_empty() && empty.is_some() => {
                                empty.as_ref().map(ViewFn::run).into_any()
                            }
                            Ok(data) => children(data).into_any(),
                        })
                }
            }
        </Transition>
    }
}

/// The view of a failed load.
fn failed(error: ApiError, back: Option<(&'static str, &'static str)>) -> AnyView {
    match back {
        None => view! { <p class="error">{error.to_string()}</p> }.into_any(),
        Some((href, text)) => view! {
            <section class="panel notice">
                <p>{error.to_string()}</p>
                <a href=href>{text}</a>
            </section>
        }
        .into_any(),
    }
}
