//! Who is calling, and with what body, said once at the edge: the axum
//! extractors every REST handler starts with, so a handler's arguments
//! name its caller and its body and its first line is its work.
//!
//! - callers: [`Admin`] and [`Teacher`] (a signed-in account with that
//!   role; for anything but `GET` also from the app's own pages, since the
//!   cookie authenticates it), [`ApiKey`] (any live key) and [`Key<S>`]
//!   (a key with one of the scopes `S` names), [`Session<A>`] (the
//!   session's token or plugin token, let do act `A` by the door-keeper,
//!   `sessions::admit`) and [`PluginSession<A>`] (the same for the plugin
//!   API, with its own 404), [`Viewing`] and [`Watching`] (a person or
//!   an API key seeing sessions by `domain::ownership`, or a session's
//!   own token watching it), [`BearerToken`] and [`StreamToken`] for
//!   routes that decide themselves, [`Hook<K>`] (a hook URL's secret, for the
//!   start triggers platforms call), [`ActingUser<S>`] (the signed-in
//!   teacher, or a key with a scope `S` names acting as the account that
//!   made it, for data that belongs to a user: students');
//! - bodies: [`JsonBody<T, LIMIT>`] (and [`BytesBody`] for archives),
//!   whose refusals are the API's JSON errors: 413 naming the limit, 400
//!   for what is not JSON, 422 naming the field;
//! - headers, path and query: [`IfMatch`], [`Expected`], [`IdPath<T>`],
//!   [`CallId`], [`QueryParams<T>`] (422 naming the parameter).
//!
//! Extractors run in the order a handler lists them, and the body last,
//! so a handler lists them in the order its checks answer (401, 403, then
//! the path, the preconditions, the body).

mod acting;
mod body;
mod caller;
mod hook;
mod known;
mod path;
mod query;
mod session;
#[cfg(test)]
mod tests;
mod watcher;

pub use acting::*;
pub use body::*;
pub use caller::*;
pub use hook::*;
pub use known::*;
pub use path::*;
pub use query::*;
pub use session::*;
pub use watcher::*;
