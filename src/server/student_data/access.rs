//! Who may see a student's data: the student's own teacher, or an admin.
//! One rule, asked by every door to a student's data (deleting, exporting)
//! through [`may_see`], so a new door cannot forget it; a student someone
//! may not see is answered as one that does not exist (404), so ids cannot
//! be probed.

use crate::domain::user::{Role, UserView};
use crate::error::ApiError;
use crate::server::store::student_data::{self as store, StudentRow};
use crate::server::ServerError;
use sqlx::SqlitePool;

/// The account a request acts as: the signed-in user, or the user who
/// made the API key it came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewer {
    /// The account's id.
    pub user: i64,
    /// Its role.
    pub role: Role,
}

impl Viewer {
    /// The signed-in `user`.
    pub fn of(user: &UserView) -> Self {
        Viewer {
            user: user.id,
            role: user.role,
        }
    }
}

/// Whether `viewer` may see the data of a student of teacher `teacher_id`:
/// their own teacher, or any admin.
pub fn permits(viewer: &Viewer, teacher_id: i64) -> bool {
    viewer.role == Role::Admin || viewer.user == teacher_id
}

/// Student `id`, if `viewer` may see them; 404 `Student {id}` if there is
/// no such student or they are another teacher's.
pub async fn may_see(db: &SqlitePool, viewer: &Viewer, id: i64) -> Result<StudentRow, ServerError> {
    match store::find(db, id).await? {
        Some(student) if permits(viewer, student.teacher_id) => Ok(student),
        _ => Err(ApiError::NotFound(format!("Student {id}")).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_teacher_sees_their_own_students_and_an_admin_everyone() {
        let teacher = Viewer {
            user: 7,
            role: Role::Teacher,
        };
        let admin = Viewer {
            user: 1,
            role: Role::Admin,
        };
        assert!(permits(&teacher, 7));
        assert!(!permits(&teacher, 8));
        assert!(permits(&admin, 7));
        assert!(permits(&admin, 1));
    }
}
