//! A teacher's students: `/students` (each with their runs and what is due
//! in their review queue) and `/students/{id}` (their runs across lessons,
//! the errors logged, facts learnt, tasks done, items mastered and the
//! queue with its due dates).

mod detail;
mod list;

pub use detail::StudentPage;
pub use list::StudentsPage;
