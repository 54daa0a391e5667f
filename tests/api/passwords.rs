//! Admins set passwords on a page: their own (with the current one) or a
//! teacher's, never another admin's; the account's other sign-ins end.

use crate::helpers::{spawn_app, TestApp, ADMIN, TEACHER};
use serde_json::Value;
use switchboard::domain::user::{Email, Role};

async fn id_of(app: &TestApp, email: &str) -> String {
    let row = switchboard::server::store::users::find_by_email(
        &app.state.db,
        &Email::parse(email).unwrap(),
    )
    .await
    .unwrap()
    .unwrap();
    row.id.to_string()
}

#[tokio::test]
async fn an_admin_sets_a_teachers_password_and_the_teachers_sign_ins_end() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let teacher = app.signed_in(TEACHER).await;
    let id = id_of(&app, TEACHER.0).await;
    let res = app
        .rpc_with(
            &admin,
            "set_password",
            &[("account_id", &id), ("new_password", "a brand new secret")],
        )
        .await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let me: Value = app
        .rpc_with(&teacher, "current_user", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(me, Value::Null);
    app.signed_in((TEACHER.0, "a brand new secret")).await;
    let old = app
        .rpc_with(
            &crate::helpers::new_client(),
            "login",
            &[("email", TEACHER.0), ("password", TEACHER.1)],
        )
        .await;
    assert_eq!(old.status(), 401);
}

#[tokio::test]
async fn an_admin_changes_their_own_password_only_with_the_current_one() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let id = id_of(&app, ADMIN.0).await;
    for current in ["", "not it at all"] {
        let res = app
            .rpc_with(
                &admin,
                "set_password",
                &[
                    ("account_id", &id),
                    ("new_password", "another long one"),
                    ("current_password", current),
                ],
            )
            .await;
        assert_eq!(res.status(), 422);
        assert_eq!(
            res.json::<Value>().await.unwrap()["Invalid"]["field"],
            "current_password"
        );
    }
    let res = app
        .rpc_with(
            &admin,
            "set_password",
            &[
                ("account_id", &id),
                ("new_password", "another long one"),
                ("current_password", ADMIN.1),
            ],
        )
        .await;
    assert_eq!(res.status(), 200);
    // The session that made the change stays signed in.
    let me: Value = app
        .rpc_with(&admin, "current_user", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(me["email"], ADMIN.0);
}

#[tokio::test]
async fn short_passwords_teachers_and_other_admins_accounts_are_refused() {
    let app = spawn_app().await;
    let admin = app.signed_in(ADMIN).await;
    let teacher_id = id_of(&app, TEACHER.0).await;
    let res = app
        .rpc_with(
            &admin,
            "set_password",
            &[("account_id", &teacher_id), ("new_password", "short")],
        )
        .await;
    assert_eq!(res.status(), 422);
    assert_eq!(
        res.json::<Value>().await.unwrap()["Invalid"]["field"],
        "new_password"
    );

    let hash = switchboard::server::auth::hash_password("second-admin-pass".into())
        .await
        .unwrap();
    let other = Email::parse("other.admin@example.com").unwrap();
    let other_id = switchboard::server::store::users::create(
        &app.state.db,
        &other,
        "Other",
        Role::Admin,
        &hash,
    )
    .await
    .unwrap()
    .to_string();
    let res = app
        .rpc_with(
            &admin,
            "set_password",
            &[
                ("account_id", &other_id),
                ("new_password", "a takeover attempt"),
            ],
        )
        .await;
    assert_eq!(res.status(), 403);

    let teacher = app.signed_in(TEACHER).await;
    let res = app
        .rpc_with(
            &teacher,
            "set_password",
            &[
                ("account_id", &teacher_id),
                ("new_password", "a long enough one"),
            ],
        )
        .await;
    assert_eq!(res.status(), 403);
}
