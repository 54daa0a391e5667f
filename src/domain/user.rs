//! Who may sign in, and what each kind of account may do.
//!
//! Values are parsed once at the edge (`Email::parse`, `Role::parse`) so the
//! rest of the code can hold a `Email` and know it is well formed, instead of
//! re-checking strings everywhere.

use crate::domain::error::FieldError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest address accepted; RFC 5321 caps a forward path at 254 octets.
pub const EMAIL_MAX_LEN: usize = 254;

/// A lower-cased, trimmed e-mail address used as the login name.
///
/// Lower-casing makes `Teacher@Example.com` and `teacher@example.com` the same
/// account, which is what people expect from a login form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Email(String);

impl Email {
    /// Accepts `local@domain.tld`-shaped addresses of sensible length.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        let value = raw.trim().to_lowercase();
        let err = |rule: &str| Err(FieldError::new("email", rule));
        if value.is_empty() {
            return err("is required");
        }
        if value.len() > EMAIL_MAX_LEN {
            return err("must be at most 254 characters");
        }
        if value.chars().any(char::is_whitespace) {
            return err("must not contain spaces");
        }
        if value.chars().any(char::is_control) {
            return err("must not contain control characters");
        }
        let Some((local, domain)) = value.split_once('@') else {
            return err("must look like name@example.com");
        };
        if local.is_empty()
            || domain.contains('@')
            || !domain.contains('.')
            || domain.starts_with('.')
            || domain.ends_with('.')
        {
            return err("must look like name@example.com");
        }
        Ok(Self(value))
    }

    /// The normalised address.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Email {
    type Error = FieldError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<Email> for String {
    fn from(value: Email) -> Self {
        value.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What an account may do. Teachers configure their own lessons; admins also
/// edit tool bindings, personas and every lesson.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Configures the tools of their own lessons.
    Teacher,
    /// Runs the installation: bindings, catalogue, all lessons, API keys.
    Admin,
}

impl Role {
    /// Parses the stored / wire spelling (`teacher`, `admin`).
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        match raw {
            "teacher" => Ok(Self::Teacher),
            "admin" => Ok(Self::Admin),
            _ => Err(FieldError::new("role", "must be teacher or admin")),
        }
    }

    /// The stored / wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Teacher => "teacher",
            Self::Admin => "admin",
        }
    }

    /// Whether an account with this role may do what `needed` requires.
    /// Admins can do everything a teacher can.
    pub fn satisfies(self, needed: Role) -> bool {
        match needed {
            Role::Teacher => true,
            Role::Admin => self == Role::Admin,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The signed-in user as the browser sees it: never the password hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserView {
    /// Database id, stable for the account's life.
    pub id: i64,
    /// Login name.
    pub email: Email,
    /// Name shown in the header.
    pub display_name: String,
    /// What the account may do.
    pub role: Role,
}

/// Turns a user-supplied "go here after login" value into a safe local path.
///
/// Only absolute paths on this site are followed (`/lessons/3`); anything that
/// could leave the site (`//evil.example`, `https://…`, `/\evil`) or loop back
/// to the login page becomes `/`. This closes the open-redirect hole a `next`
/// parameter otherwise opens.
pub fn safe_next_path(raw: Option<&str>) -> String {
    let Some(path) = raw.map(str::trim).filter(|p| !p.is_empty()) else {
        return "/".to_owned();
    };
    let leaves_site = !path.starts_with('/')
        || path.starts_with("//")
        || path.starts_with("/\\")
        || path.chars().any(|c| c.is_control());
    if leaves_site || path == "/login" || path.starts_with("/login?") {
        "/".to_owned()
    } else {
        path.to_owned()
    }
}

/// One account as listed for admins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountSummary {
    /// The account itself.
    pub user: UserView,
    /// How many signed-in sessions it has open right now.
    pub open_sessions: i64,
}

/// Shortest password an admin may set.
pub const PASSWORD_MIN_CHARS: usize = 10;
/// Longest password accepted (hashing cost grows with length).
pub const PASSWORD_MAX_CHARS: usize = 128;

/// Checks a new password's length; the error names `field`.
pub fn check_new_password(field: &str, password: &str) -> Result<(), FieldError> {
    let n = password.chars().count();
    if n < PASSWORD_MIN_CHARS {
        return Err(FieldError::new(
            field,
            format!("must be at least {PASSWORD_MIN_CHARS} characters"),
        ));
    }
    if n > PASSWORD_MAX_CHARS {
        return Err(FieldError::new(
            field,
            format!("must be at most {PASSWORD_MAX_CHARS} characters"),
        ));
    }
    Ok(())
}

/// Whether `actor` may set `target`'s password: admins their own and any
/// teacher's, never another admin's; teachers nobody's here.
pub fn may_set_password(actor: &UserView, target: &UserView) -> bool {
    actor.role == Role::Admin && (actor.id == target.id || target.role == Role::Teacher)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_email_is_trimmed_and_lower_cased() {
        let email = Email::parse("  Teacher@Example.COM ").unwrap();
        assert_eq!(email.as_str(), "teacher@example.com");
    }

    #[test]
    fn malformed_emails_are_refused_naming_the_field() {
        for bad in [
            "",
            "   ",
            "no-at-sign",
            "@example.com",
            "a@b",
            "a@.com",
            "a@b.",
            "a b@c.com",
            "a@b@c.com",
        ] {
            let err = Email::parse(bad).unwrap_err();
            assert_eq!(err.field, "email", "{bad:?}");
        }
    }

    #[test]
    fn an_overlong_email_is_refused() {
        let long = format!("{}@example.com", "a".repeat(250));
        assert_eq!(
            Email::parse(&long).unwrap_err().rule,
            "must be at most 254 characters"
        );
    }

    #[test]
    fn email_deserialisation_goes_through_parse() {
        let ok: Email = serde_json::from_str("\"A@B.io\"").unwrap();
        assert_eq!(ok.as_str(), "a@b.io");
        assert!(serde_json::from_str::<Email>("\"nope\"").is_err());
    }

    #[test]
    fn roles_round_trip_through_their_spelling() {
        for role in [Role::Teacher, Role::Admin] {
            assert_eq!(Role::parse(role.as_str()).unwrap(), role);
        }
        assert!(Role::parse("root").is_err());
        assert_eq!(serde_json::to_string(&Role::Admin).unwrap(), "\"admin\"");
    }

    #[test]
    fn admins_satisfy_teacher_requirements_but_not_the_reverse() {
        assert!(Role::Admin.satisfies(Role::Teacher));
        assert!(Role::Admin.satisfies(Role::Admin));
        assert!(Role::Teacher.satisfies(Role::Teacher));
        assert!(!Role::Teacher.satisfies(Role::Admin));
    }

    #[test]
    fn next_paths_never_leave_the_site() {
        assert_eq!(safe_next_path(Some("/lessons/3")), "/lessons/3");
        assert_eq!(safe_next_path(Some("/sessions?x=1")), "/sessions?x=1");
        for bad in [
            "https://evil.example",
            "//evil.example",
            "/\\evil.example",
            "evil",
            "/login",
            "/login?next=/x",
            "/a\nb",
        ] {
            assert_eq!(safe_next_path(Some(bad)), "/", "{bad:?}");
        }
        assert_eq!(safe_next_path(None), "/");
        assert_eq!(safe_next_path(Some("  ")), "/");
    }

    #[test]
    fn new_passwords_need_ten_to_128_characters() {
        assert_eq!(
            check_new_password("new_password", "short")
                .unwrap_err()
                .field,
            "new_password"
        );
        assert!(check_new_password("p", &"x".repeat(129)).is_err());
        assert!(check_new_password("p", "a long enough one").is_ok());
    }

    #[test]
    fn admins_set_their_own_and_teachers_passwords_only() {
        let user = |id, role| UserView {
            id,
            email: Email::parse("a@b.io").unwrap(),
            display_name: "x".into(),
            role,
        };
        let admin = user(1, Role::Admin);
        assert!(may_set_password(&admin, &admin));
        assert!(may_set_password(&admin, &user(2, Role::Teacher)));
        assert!(!may_set_password(&admin, &user(3, Role::Admin)));
        assert!(!may_set_password(
            &user(2, Role::Teacher),
            &user(2, Role::Teacher)
        ));
    }
}
