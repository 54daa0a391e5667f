//! Agent sessions: one row per session an agent backend opened, holding its
//! workflow state as JSON, the account whose identity it verified, and when
//! it was last active or ended; and each session's plugin token (migration
//! `0018_plugin_tokens.sql`), kept as a hash like the session token (the
//! plugin tokens exchanged for join codes are `join_codes`').
//!
//! The session engine (`server::agent::sessions`) decides; this module only
//! reads and writes rows.

mod lists;
mod rows;
mod writes;

pub use lists::{idle_since, open, open_for_key, open_trials_of, owners, recent};
pub use rows::{find, find_by_plugin_token_hash, find_by_token_hash, set_plugin_token, SessionRow};
pub use writes::{end, insert, set_state, set_tools_seen, set_turns, LessonFields, NewSession};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ownership::{may_see, SessionOwners, Viewer};

    /// Every combination of ties a session can have to teachers 1 and 2
    /// (a lesson, an opener, a key made by either or by nobody, a student
    /// record), for each viewer: the list's SQL filter keeps exactly the
    /// sessions the pure rule lets the viewer see, and `owners` reads the
    /// ties as they were stored.
    #[tokio::test]
    async fn the_list_filter_and_the_ownership_rule_agree_on_every_combination_of_ties() {
        let db = crate::server::platform::db::memory().await;
        sqlx::migrate!("./migrations/sqlite")
            .run(&db)
            .await
            .unwrap();
        for sql in [
            "INSERT INTO users (id, email, display_name, role, password_hash, created_at) VALUES
               (1, 'a@x.org', 'A', 'teacher', 'h', 0), (2, 'b@x.org', 'B', 'teacher', 'h', 0),
               (3, 'c@x.org', 'C', 'teacher', 'h', 0)",
            "INSERT INTO lessons (id, owner_id, title, created_at, updated_at) VALUES
               (11, 1, 'L1', 0, 0), (12, 2, 'L2', 0, 0)",
            "INSERT INTO api_keys (id, name, key_hash, prefix, created_by, created_at) VALUES
               (21, 'k1', 'h21', 'sb_', 1, 0), (22, 'k2', 'h22', 'sb_', 2, 0),
               (23, 'orphan', 'h23', 'sb_', NULL, 0)",
            "INSERT INTO students (id, teacher_id, name, created_at) VALUES
               (31, 1, 'Ana', 0), (32, 2, 'Ben', 0)",
        ] {
            sqlx::query(sql).execute(&db).await.unwrap();
        }
        let mut expected = Vec::new();
        let mut n = 0;
        for lesson in [None, Some(11i64), Some(12)] {
            for opener in [None, Some(1i64), Some(2)] {
                for key in [None, Some(21i64), Some(22), Some(23)] {
                    for student in [None, Some(31i64), Some(32)] {
                        n += 1;
                        let id = format!("s{n}");
                        sqlx::query(
                            "INSERT INTO agent_sessions (id, token_hash, state, created_at, last_activity,
                                                         lesson_id, opened_by, api_key_id, student_id)
                             VALUES ($1, $2, '{}', 0, $3, $4, $5, $6, $7)",
                        )
                        .bind(&id)
                        .bind(format!("t{n}"))
                        .bind(n)
                        .bind(lesson)
                        .bind(opener)
                        .bind(key)
                        .bind(student)
                        .execute(&db)
                        .await
                        .unwrap();
                        let ties = SessionOwners {
                            lesson_owner: lesson.map(|l| l - 10),
                            opened_by: opener,
                            key,
                            key_maker: key.and_then(|k| (k < 23).then_some(k - 20)),
                            student_teacher: student.map(|s| s - 30),
                        };
                        assert_eq!(owners(&db, &id).await.unwrap(), Some(ties), "{id}");
                        expected.push((id, ties));
                    }
                }
            }
        }
        assert!(expected.len() < 200, "all fit in one list");
        let viewers = [
            Viewer::Admin,
            Viewer::User(1),
            Viewer::User(2),
            Viewer::User(3),
            Viewer::Key(23),
            Viewer::Key(21),
        ];
        for viewer in viewers {
            let mut listed: Vec<String> = recent(&db, viewer)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.id)
                .collect();
            let mut seen: Vec<String> = expected
                .iter()
                .filter(|(_, o)| may_see(viewer, o))
                .map(|(id, _)| id.clone())
                .collect();
            listed.sort();
            seen.sort();
            assert_eq!(listed, seen, "{viewer:?}");
        }
        // Not vacuous: teacher 3 has nothing, teacher 1 some, the admin all.
        assert!(recent(&db, Viewer::User(3)).await.unwrap().is_empty());
        assert_eq!(
            recent(&db, Viewer::Admin).await.unwrap().len(),
            expected.len()
        );
        assert_eq!(owners(&db, "nope").await.unwrap(), None);
    }
}
