//! Pages and components, rendered on the server and hydrated in the browser.

pub mod bindings;
pub mod home;
pub mod layout;
pub mod lessons;
pub mod login;
pub mod session;
pub mod sessions;
