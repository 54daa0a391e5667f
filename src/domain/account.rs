//! Accounts as admins run them: a new account's fields parsed once (the
//! e-mail, the name, the role, an optional first password), an account as
//! the list and the API show it, the change an admin asks for, and the rule
//! that an installation always keeps one active admin.
//!
//! The sign-in types themselves (`Email`, `Role`, the password length
//! rule) are `domain::user`'s; this module builds the admin's view on them.

use crate::domain::error::FieldError;
use crate::domain::user::{check_new_password, Email, Role};
use serde::{Deserialize, Serialize};

/// Longest account name: it is shown in the header, the accounts list and
/// every lesson's owner column, so a paragraph would break those.
pub const ACCOUNT_NAME_MAX_CHARS: usize = 80;

/// A person's name as shown in the app: trimmed, 1–80 characters, no
/// control characters (it is printed in lists and mails as it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountName(String);

impl AccountName {
    /// Parses a name; the error names the field `name`.
    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        let value = raw.trim();
        let err = |rule: String| Err(FieldError::new("name", rule));
        if value.is_empty() {
            return err("is required".into());
        }
        if value.chars().count() > ACCOUNT_NAME_MAX_CHARS {
            return err(format!(
                "must be at most {ACCOUNT_NAME_MAX_CHARS} characters"
            ));
        }
        if value.chars().any(char::is_control) {
            return err("must not contain control characters".into());
        }
        Ok(Self(value.to_owned()))
    }

    /// The trimmed name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A new account as an admin asks for it, every field checked: the
/// e-mail, the name, the role and, when given, the first password (an
/// empty one counts as none: the answer then carries a reset link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAccount {
    /// Its login.
    pub email: Email,
    /// Its name.
    pub name: AccountName,
    /// What it may do.
    pub role: Role,
    /// Its first password; `None` to send a one-time link instead.
    pub password: Option<String>,
}

impl NewAccount {
    /// Checks each field in the order a form shows them, the first problem
    /// naming its field (`email`, `name`, `role`, `password`).
    pub fn parse(
        email: &str,
        name: &str,
        role: &str,
        password: Option<&str>,
    ) -> Result<Self, FieldError> {
        let email = Email::parse(email)?;
        let name = AccountName::parse(name)?;
        let role = Role::parse(role.trim())?;
        let password = password.filter(|p| !p.is_empty());
        if let Some(password) = password {
            check_new_password("password", password)?;
        }
        Ok(Self {
            email,
            name,
            role,
            password: password.map(str::to_owned),
        })
    }
}

/// An account as the admins' list and the API show it (never a hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountView {
    /// Its id, for `PATCH /api/accounts/{id}`.
    pub id: i64,
    /// Its login.
    pub email: Email,
    /// Its name.
    pub name: String,
    /// What it may do.
    pub role: Role,
    /// Disabled accounts cannot sign in, and their API keys are refused.
    pub disabled: bool,
    /// Its last sign-in, Unix seconds; `None` if never.
    pub last_sign_in_at: Option<i64>,
    /// When it was made, Unix seconds.
    pub created_at: i64,
}

/// The change an admin asks for: a new role, disabling or re-enabling,
/// or both. At least one must be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccountChange {
    /// The new role, if it changes.
    pub role: Option<Role>,
    /// `true` disables, `false` enables again.
    pub disabled: Option<bool>,
}

impl AccountChange {
    /// Parses the raw request (`role` spelled `teacher` or `admin`); an
    /// empty change is refused naming the whole `body`.
    pub fn parse(role: Option<&str>, disabled: Option<bool>) -> Result<Self, FieldError> {
        let role = role.map(|r| Role::parse(r.trim())).transpose()?;
        if role.is_none() && disabled.is_none() {
            return Err(FieldError::new("body", "give role, disabled or both"));
        }
        Ok(Self { role, disabled })
    }
}

/// Whether an account counts as an active admin: the admin role and not
/// disabled.
pub fn is_active_admin(role: Role, disabled: bool) -> bool {
    role == Role::Admin && !disabled
}

/// Refuses a change that would leave the installation without an active
/// admin: the account is one now, would not be after `change`, and is the
/// only one of `active_admins`. The words say what to do instead. The
/// caller counts inside the same write transaction as the change, so two
/// concurrent changes cannot both pass.
pub fn keeps_an_admin(
    role: Role,
    disabled: bool,
    change: AccountChange,
    active_admins: i64,
) -> Result<(), String> {
    let now = is_active_admin(role, disabled);
    let after = is_active_admin(
        change.role.unwrap_or(role),
        change.disabled.unwrap_or(disabled),
    );
    if now && !after && active_admins <= 1 {
        return Err(
            "This is the last active admin account: make another account an admin \
             (or enable one) first, so someone can still run the installation."
                .into(),
        );
    }
    Ok(())
}

/// A new account as answered: the account, and when it was made without a
/// password the one-time link that sets one (or, with mail set up, where
/// it was sent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedAccount {
    /// The account.
    #[serde(flatten)]
    pub account: AccountView,
    /// How its first password is set, when none was given.
    #[serde(flatten)]
    pub reset: Option<ResetLink>,
}

/// A one-time password link as an admin gets it: shown once, or mailed to
/// the account (then not shown), or shown because mailing it failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetLink {
    /// The link, when it was not mailed; it is not stored and cannot be
    /// shown again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_link: Option<String>,
    /// The address it was mailed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_link_mailed_to: Option<String>,
    /// Why mailing it failed (the link is shown instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail_error: Option<String>,
    /// Until when it works, Unix seconds.
    pub reset_link_expires_at: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_new_account_names_the_first_field_that_is_wrong() {
        let field = |e: &str, n: &str, r: &str, p: Option<&str>| {
            NewAccount::parse(e, n, r, p).unwrap_err().field
        };
        assert_eq!(field("nope", "Ann", "teacher", None), "email");
        assert_eq!(field("ann@school.example", " ", "teacher", None), "name");
        assert_eq!(field("ann@school.example", "Ann", "root", None), "role");
        assert_eq!(
            field("ann@school.example", "Ann", "teacher", Some("short")),
            "password"
        );
    }

    #[test]
    fn an_empty_password_means_none_and_a_good_one_is_kept() {
        let none = NewAccount::parse("A@School.example", " Ann ", "admin", Some("")).unwrap();
        assert_eq!(none.password, None);
        assert_eq!(none.email.as_str(), "a@school.example");
        assert_eq!(none.name.as_str(), "Ann");
        assert_eq!(none.role, Role::Admin);
        let some =
            NewAccount::parse("a@s.example", "Ann", "teacher", Some("long enough!")).unwrap();
        assert_eq!(some.password.as_deref(), Some("long enough!"));
    }

    #[test]
    fn names_are_bounded_and_printable() {
        assert!(AccountName::parse(&"x".repeat(ACCOUNT_NAME_MAX_CHARS)).is_ok());
        let long = AccountName::parse(&"x".repeat(ACCOUNT_NAME_MAX_CHARS + 1)).unwrap_err();
        assert_eq!(long.rule, "must be at most 80 characters");
        assert!(AccountName::parse("Ann\u{7}").is_err());
        assert!(AccountName::parse("Ann\nBob").is_err());
    }

    #[test]
    fn an_empty_change_is_refused_and_a_role_is_parsed() {
        assert_eq!(AccountChange::parse(None, None).unwrap_err().field, "body");
        assert_eq!(
            AccountChange::parse(Some("x"), None).unwrap_err().field,
            "role"
        );
        let change = AccountChange::parse(Some("admin"), Some(false)).unwrap();
        assert_eq!(change.role, Some(Role::Admin));
        assert_eq!(change.disabled, Some(false));
    }

    #[test]
    fn the_last_active_admin_can_be_neither_disabled_nor_demoted() {
        let disable = AccountChange {
            role: None,
            disabled: Some(true),
        };
        let demote = AccountChange {
            role: Some(Role::Teacher),
            disabled: None,
        };
        assert!(keeps_an_admin(Role::Admin, false, disable, 1).is_err());
        assert!(keeps_an_admin(Role::Admin, false, demote, 1).is_err());
        assert!(keeps_an_admin(Role::Admin, false, disable, 2).is_ok());
        assert!(keeps_an_admin(Role::Admin, false, demote, 2).is_ok());
        // A teacher, or an admin already disabled, changes no count.
        assert!(keeps_an_admin(Role::Teacher, false, disable, 1).is_ok());
        assert!(keeps_an_admin(Role::Admin, true, demote, 1).is_ok());
        // Keeping the role while re-enabling is always fine.
        let enable = AccountChange {
            role: Some(Role::Admin),
            disabled: Some(false),
        };
        assert!(keeps_an_admin(Role::Admin, false, enable, 1).is_ok());
    }

    #[test]
    fn a_created_account_reads_flat_with_its_link() {
        let created = CreatedAccount {
            account: AccountView {
                id: 3,
                email: Email::parse("a@s.example").unwrap(),
                name: "Ann".into(),
                role: Role::Teacher,
                disabled: false,
                last_sign_in_at: None,
                created_at: 1,
            },
            reset: Some(ResetLink {
                reset_link: Some("http://x/reset-password?token=t".into()),
                reset_link_mailed_to: None,
                mail_error: None,
                reset_link_expires_at: 2,
            }),
        };
        let json = serde_json::to_value(&created).unwrap();
        assert_eq!(json["id"], 3);
        assert_eq!(json["resetLink"], "http://x/reset-password?token=t");
        assert!(json.get("resetLinkMailedTo").is_none());
        let back: CreatedAccount = serde_json::from_value(json).unwrap();
        assert_eq!(back, created);
    }

    proptest! {
        #[test]
        fn any_name_is_refused_or_kept_trimmed_and_bounded(raw in "\\PC{0,100}|.{0,100}") {
            match AccountName::parse(&raw) {
                Ok(name) => {
                    prop_assert_eq!(name.as_str(), raw.trim());
                    prop_assert!(!name.as_str().is_empty());
                    prop_assert!(name.as_str().chars().count() <= ACCOUNT_NAME_MAX_CHARS);
                }
                Err(e) => prop_assert_eq!(e.field, "name"),
            }
        }

        #[test]
        fn any_role_text_is_one_of_two_roles_or_refused(raw in ".{0,20}") {
            match Role::parse(&raw) {
                Ok(role) => prop_assert_eq!(role.as_str(), raw.as_str()),
                Err(e) => prop_assert_eq!(e.field, "role"),
            }
        }

        #[test]
        fn any_email_is_refused_naming_it_or_normalised(raw in "\\PC{0,40}|[a-zA-Z.]{1,10}@[a-z]{1,10}\\.[a-z]{2,4}") {
            match Email::parse(&raw) {
                Ok(email) => {
                    prop_assert_eq!(email.as_str(), raw.trim().to_lowercase());
                    prop_assert!(email.as_str().contains('@'));
                    prop_assert!(!email.as_str().chars().any(char::is_control));
                }
                Err(e) => prop_assert_eq!(e.field, "email"),
            }
        }

        #[test]
        fn any_password_is_accepted_exactly_within_its_bounds(len in 0usize..200) {
            let password = "é".repeat(len);
            let ok = check_new_password("password", &password).is_ok();
            prop_assert_eq!(
                ok,
                (crate::domain::user::PASSWORD_MIN_CHARS..=crate::domain::user::PASSWORD_MAX_CHARS)
                    .contains(&len)
            );
        }
    }
}
