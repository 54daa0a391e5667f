//! What a lesson has that decides which tutor tools can do anything in
//! it: tasks to mark, a review lesson's items.

/// Whether tool `id` can do anything in a lesson with `facts`: Task
/// Completion needs tasks to mark, and the review tools a review lesson's
/// items. An enabled tool that does not fit is a contradiction: the panel
/// warns about it and the prompt builder leaves it out.
pub fn fits_lesson(id: &str, facts: LessonFacts) -> bool {
    match id {
        TASK_TOOL => facts.has_tasks,
        _ if REVIEW_TOOLS.contains(&id) => facts.is_review && facts.has_review_items,
        _ => true,
    }
}

/// The tool that marks lesson objectives done; it needs tasks.
pub const TASK_TOOL: &str = "mark_task_complete";

/// The tools that only make sense in a review lesson.
pub const REVIEW_TOOLS: [&str; 2] = ["mark_item_mastered", "play_student_audio"];

/// The tool smart defaults add when a configuration lacks it.
pub const SUMMARY_TOOL: &str = "show_session_summary";

/// The facts of the lesson form that smart defaults react to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LessonFacts {
    /// The lesson lists at least one task.
    pub has_tasks: bool,
    /// The lesson is a review lesson.
    pub is_review: bool,
    /// The lesson lists at least one review item (the review tools' ids).
    pub has_review_items: bool,
}
