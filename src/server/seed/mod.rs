//! Demo data for a fresh database, so `make run` shows a usable app at once:
//! accounts here, the catalogue and workflows in [`catalogue`]; and
//! [`todo_contracts`], which brings an older database's todo tools to the
//! contracts the built-in runs.

pub mod catalogue;
pub mod todo_contracts;

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

/// Creates a few realistic lessons for the demo teacher: a café role-play
/// with three tasks, a review lesson, and one made "before tool
/// configuration existed" (it gets the standard default on first edit).
pub async fn seed_demo_lessons(state: &AppState) -> Result<(), ServerError> {
    use crate::domain::lesson::config::{default_configuration, LessonFacts, Preset};
    use crate::domain::lesson::review::ReviewItem;
    use crate::domain::lesson::{CefrLevel, LessonDraft, LessonTask};
    use crate::server::store::lessons;

    let Some(teacher) =
        users::find_by_email(&state.db, &Email::parse("teacher@example.com")?).await?
    else {
        return Ok(());
    };
    let task = |id: &str, text: &str| LessonTask {
        id: id.into(),
        text: text.into(),
    };
    let item = |id: &str, text: &str, audio: Option<&str>| ReviewItem {
        id: id.into(),
        text: text.into(),
        audio: audio.map(str::to_owned),
    };
    let cafe = LessonDraft {
        title: "Spanish café role-play".into(),
        conversation_prompt: "You are Lucía, a friendly waiter in a busy café in Madrid. Speak only Spanish, \
slowly and clearly, using vocabulary suitable for the student's level. Stay in role: greet the student, \
take their order, and bring the bill when asked. If the student is stuck, offer two short options \
rather than translating."
            .into(),
        tasks: vec![
            task("greet-waiter", "Greet the waiter and ask for a table"),
            task("order-drink", "Order a drink and something to eat"),
            task("ask-bill", "Ask for the bill and pay"),
        ],
        duration_minutes: Some(15),
        level: Some(CefrLevel::A2),
        review: false,
        review_items: vec![],
        tool_configuration: Preset::StandardLesson.configuration(),
    };
    let review = LessonDraft {
        title: "Review: past-tense slips from last week".into(),
        conversation_prompt: "Run a relaxed review of the items the student found hard last week. For each \
item, ask a question that makes the student use it, listen to the answer, and move on once they get it \
right twice."
            .into(),
        tasks: vec![],
        duration_minutes: Some(10),
        level: Some(CefrLevel::B1),
        review: true,
        review_items: vec![
            item("fui-ayer", "Ayer fui al mercado con mi hermana.", Some("recordings/demo/fui-ayer.webm")),
            item("comi-paella", "El sábado comí paella en casa de mis abuelos.", None),
            item("estuve-enfermo", "La semana pasada estuve enfermo dos días.", Some("recordings/demo/estuve-enfermo.webm")),
        ],
        tool_configuration: Preset::ReviewLesson.configuration(),
    };
    let legacy = LessonDraft {
        title: "Free conversation: weekend plans".into(),
        conversation_prompt:
            "Chat with the student about their plans for the weekend. Ask open questions \
and follow their interests."
                .into(),
        tasks: vec![],
        duration_minutes: Some(20),
        level: Some(CefrLevel::B2),
        review: false,
        review_items: vec![],
        // Not stored (a legacy lesson); what loading it proposes: the
        // standard tools that fit a lesson without tasks.
        tool_configuration: default_configuration(LessonFacts::default()),
    };
    lessons::create_with(&state.db, teacher.id, &legacy, None).await?;
    lessons::create(&state.db, teacher.id, &review).await?;
    lessons::create(&state.db, teacher.id, &cafe).await?;
    Ok(())
}
