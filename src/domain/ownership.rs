//! Whose sessions are whose: the one rule deciding which tutor and agent
//! sessions a signed-in person, or an API key, may see (list, watch, read
//! the calls of). A session holds a student's name and words, so a
//! teacher sees only what is theirs; every door asks [`may_see`] (through
//! `server::agent::access::watchable`) or, for lists, the SQL filter in
//! `server::store::agent_sessions` that a test holds to this rule.
//!
//! A session is a teacher's when it runs one of their lessons, they opened
//! it (a trial, a playground session, a manual start), it was opened with
//! an API key they made, or it is for one of their student records. Admins
//! see every session. An API key acts as the user who made it; a key whose
//! maker's account is gone sees only the sessions it opened itself.

use crate::domain::user::Role;

/// Who is looking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewer {
    /// An admin, or a key an admin made: every session.
    Admin,
    /// A teacher signed in, or a key a teacher made: that teacher's
    /// sessions.
    User(i64),
    /// A key whose maker is gone: the sessions it opened.
    Key(i64),
}

impl Viewer {
    /// A signed-in account.
    pub fn user(id: i64, role: Role) -> Self {
        match role {
            Role::Admin => Viewer::Admin,
            Role::Teacher => Viewer::User(id),
        }
    }

    /// API key `key`, made by `maker` (its id and role) if that account
    /// still exists: it acts as its maker.
    pub fn key(key: i64, maker: Option<(i64, Role)>) -> Self {
        match maker {
            Some((id, role)) => Viewer::user(id, role),
            None => Viewer::Key(key),
        }
    }
}

/// What makes a session someone's: the facts [`may_see`] reads, as stored
/// with the session and its lesson, key and student record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionOwners {
    /// The owner of the lesson it runs (`lessons.owner_id`).
    pub lesson_owner: Option<i64>,
    /// The signed-in user who opened it (`agent_sessions.opened_by`).
    pub opened_by: Option<i64>,
    /// The API key that opened it (`agent_sessions.api_key_id`).
    pub key: Option<i64>,
    /// Who made that key (`api_keys.created_by`).
    pub key_maker: Option<i64>,
    /// The teacher of its student record (`students.teacher_id`).
    pub student_teacher: Option<i64>,
}

/// Whether `viewer` may see a session with `owners`.
pub fn may_see(viewer: Viewer, owners: &SessionOwners) -> bool {
    match viewer {
        Viewer::Admin => true,
        Viewer::User(id) => [
            owners.lesson_owner,
            owners.opened_by,
            owners.key_maker,
            owners.student_teacher,
        ]
        .contains(&Some(id)),
        Viewer::Key(key) => owners.key == Some(key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ANA: i64 = 1;
    const BEN: i64 = 2;

    #[test]
    fn a_teacher_sees_a_session_by_each_of_the_four_ties_and_by_no_other() {
        let ties = [
            SessionOwners {
                lesson_owner: Some(ANA),
                ..Default::default()
            },
            SessionOwners {
                opened_by: Some(ANA),
                ..Default::default()
            },
            SessionOwners {
                key: Some(7),
                key_maker: Some(ANA),
                ..Default::default()
            },
            SessionOwners {
                student_teacher: Some(ANA),
                ..Default::default()
            },
        ];
        for owners in ties {
            assert!(may_see(Viewer::User(ANA), &owners), "{owners:?}");
            assert!(!may_see(Viewer::User(BEN), &owners), "{owners:?}");
        }
    }

    #[test]
    fn nobody_but_an_admin_sees_a_session_nothing_ties_to_a_person() {
        // A start trigger's session (a webhook, a schedule): no lesson, no
        // opener, no key, no student.
        let none = SessionOwners::default();
        assert!(may_see(Viewer::Admin, &none));
        assert!(!may_see(Viewer::User(ANA), &none));
        assert!(!may_see(Viewer::Key(7), &none));
    }

    #[test]
    fn a_key_acts_as_its_maker_and_an_orphan_key_sees_only_what_it_opened() {
        assert_eq!(
            Viewer::key(7, Some((ANA, Role::Teacher))),
            Viewer::User(ANA)
        );
        assert_eq!(Viewer::key(7, Some((BEN, Role::Admin))), Viewer::Admin);
        assert_eq!(Viewer::key(7, None), Viewer::Key(7));
        let opened_by_it = SessionOwners {
            key: Some(7),
            lesson_owner: Some(BEN),
            ..Default::default()
        };
        assert!(may_see(Viewer::Key(7), &opened_by_it));
        assert!(!may_see(Viewer::Key(8), &opened_by_it));
        let only_lesson = SessionOwners {
            lesson_owner: Some(BEN),
            ..Default::default()
        };
        assert!(!may_see(Viewer::Key(7), &only_lesson));
    }

    #[test]
    fn a_signed_in_admin_is_the_admin_viewer_and_a_teacher_their_own() {
        assert_eq!(Viewer::user(ANA, Role::Admin), Viewer::Admin);
        assert_eq!(Viewer::user(ANA, Role::Teacher), Viewer::User(ANA));
    }

    fn id() -> impl Strategy<Value = Option<i64>> {
        prop::option::of(1i64..5)
    }

    fn owners() -> impl Strategy<Value = SessionOwners> {
        (id(), id(), id(), id(), id()).prop_map(|(l, o, k, m, s)| SessionOwners {
            lesson_owner: l,
            opened_by: o,
            key: k,
            key_maker: m,
            student_teacher: s,
        })
    }

    proptest! {
        #[test]
        fn an_admin_sees_everything_and_a_teacher_only_what_names_them(
            owners in owners(),
            user in 1i64..5,
        ) {
            prop_assert!(may_see(Viewer::Admin, &owners));
            let named = owners.lesson_owner == Some(user)
                || owners.opened_by == Some(user)
                || owners.key_maker == Some(user)
                || owners.student_teacher == Some(user);
            prop_assert_eq!(may_see(Viewer::User(user), &owners), named);
        }

        #[test]
        fn a_teacher_who_may_see_a_session_keeps_seeing_it_when_more_ties_are_added(
            owners in owners(),
            more in owners(),
            user in 1i64..5,
        ) {
            let merged = SessionOwners {
                lesson_owner: owners.lesson_owner.or(more.lesson_owner),
                opened_by: owners.opened_by.or(more.opened_by),
                key: owners.key.or(more.key),
                key_maker: owners.key_maker.or(more.key_maker),
                student_teacher: owners.student_teacher.or(more.student_teacher),
            };
            if may_see(Viewer::User(user), &owners) {
                prop_assert!(may_see(Viewer::User(user), &merged));
            }
        }
    }
}
