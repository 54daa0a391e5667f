//! Authentication: password hashing, database-backed sign-in sessions, and
//! the middleware that attaches the signed-in user to each request, keeps
//! anonymous visitors out of the app's pages and refuses cross-site calls.

mod middleware;
mod origin;
mod passwords;
mod sign_ins;
pub mod throttle;

use crate::domain::user::{Role, UserView};
use crate::error::ApiError;
pub use middleware::{guard_pages, resolve_user};
pub use origin::{check_origin, link_origin, require_same_origin};
pub use passwords::{authenticate, hash_password, set_password, sign_in, HASH_QUEUE_WAIT};
pub use sign_ins::{
    end_session, random_token, session_cookie, session_token, start_session, token_hash,
};

/// Name of the sign-in cookie.
pub const SESSION_COOKIE: &str = "sb_session";

/// The signed-in user, put in the request's extensions by [`resolve_user`]
/// for server functions and pages to read.
#[derive(Debug, Clone)]
pub struct AuthUser(pub UserView);

impl AuthUser {
    /// The shared view of the account.
    pub fn view(&self) -> UserView {
        self.0.clone()
    }

    /// Refuses unless the account's role satisfies `needed`.
    pub fn require(&self, needed: Role) -> Result<(), ApiError> {
        if self.0.role.satisfies(needed) {
            Ok(())
        } else {
            Err(ApiError::Forbidden {
                needed: needed.to_string(),
            })
        }
    }

    /// The admin as the actor of a catalogue change (attributed by e-mail,
    /// as the catalogue history names its authors); refuses (403) anyone
    /// who is not an admin: the admin role is the browser's
    /// `catalogue:write`.
    pub fn admin_actor(&self) -> Result<crate::domain::actor::Actor, ApiError> {
        self.require(Role::Admin)?;
        Ok(crate::domain::actor::Actor::admin(
            self.0.id,
            self.0.email.as_str(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::middleware::url_encode;
    use super::origin::claimed_origin;
    use super::*;
    use axum::http::{header, HeaderMap, HeaderValue};

    #[test]
    fn the_session_token_is_found_among_other_cookies() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; sb_session=tok; b=2"),
        );
        assert_eq!(session_token(&headers).as_deref(), Some("tok"));
        headers.insert(header::COOKIE, HeaderValue::from_static("sb_session="));
        assert_eq!(session_token(&headers), None);
    }

    #[test]
    fn token_hashes_are_stable_hex_sha256() {
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(random_token().len(), 43);
        assert_ne!(random_token(), random_token());
    }

    #[test]
    fn the_origin_falls_back_to_the_referer() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::REFERER,
            HeaderValue::from_static("http://127.0.0.1:3000/login?x=1"),
        );
        assert_eq!(
            claimed_origin(&headers).as_deref(),
            Some("http://127.0.0.1:3000")
        );
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example"),
        );
        assert_eq!(
            claimed_origin(&headers).as_deref(),
            Some("http://evil.example")
        );
    }

    #[test]
    fn next_values_are_percent_encoded() {
        assert_eq!(url_encode("/lessons?a=1&b=2"), "/lessons%3Fa%3D1%26b%3D2");
    }
}
