//! Accounts in the browser: the admins' `/accounts` page (`page`: the
//! list, with one row per account in `row`, the form that makes one in
//! `create`, and a one-time link as shown in `link`), the start page's
//! password panel (`panel`), everyone's `/profile` (`profile`), and
//! setting a password with a one-time link (`reset`).

pub mod create;
pub mod link;
pub mod page;
pub mod panel;
pub mod profile;
pub mod reset;
pub mod row;

pub use page::AccountsPage;
pub use panel::AccountsPanel;
pub use profile::ProfilePage;
pub use reset::ResetPasswordPage;
