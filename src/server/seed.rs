//! Demo data for a fresh database, so `make run` shows a usable app at once.

use crate::domain::user::{Email, Role};
use crate::server::auth::{hash_password, random_token};
use crate::server::store::users;
use crate::server::{AppState, ServerError};

/// The demo accounts and the passwords they were given, for printing once.
pub struct SeededAccounts(pub Vec<(Email, Role, String)>);

/// Creates the demo teacher and admin when the database has no accounts yet.
/// Passwords come from the configuration or are generated; either way they
/// are returned so `main` can print them once. Does nothing on a database
/// that already has accounts.
pub async fn seed_demo_accounts(state: &AppState) -> Result<Option<SeededAccounts>, ServerError> {
    if users::count(&state.db).await? > 0 {
        return Ok(None);
    }
    let demo = [
        (
            "teacher@example.com",
            "Tess Teacher",
            Role::Teacher,
            state.config.teacher_password.clone(),
        ),
        (
            "admin@example.com",
            "Ada Admin",
            Role::Admin,
            state.config.admin_password.clone(),
        ),
    ];
    let mut created = Vec::new();
    for (email, name, role, password) in demo {
        let email = Email::parse(email)?;
        let password = password.unwrap_or_else(|| random_token()[..16].to_owned());
        let hash = hash_password(password.clone()).await?;
        users::create(&state.db, &email, name, role, &hash).await?;
        created.push((email, role, password));
    }
    Ok(Some(SeededAccounts(created)))
}

impl std::fmt::Display for SeededAccounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "Demo accounts created (passwords are shown only this once):"
        )?;
        for (email, role, password) in &self.0 {
            writeln!(f, "  {role:<8} {email:<22} password: {password}")?;
        }
        Ok(())
    }
}
