//! `/accounts`: the admins' accounts page — every account with its role,
//! status and last sign-in, changed in place; a form that makes one; and
//! the one-time password link an admin asked for, shown once.

use crate::api::accounts::{accounts, AccountResetLink, ChangeAccount, CreateAccount};
use crate::ui::accounts::create::NewAccountForm;
use crate::ui::accounts::link::LinkNotice;
use crate::ui::accounts::row::AccountRow;
use crate::ui::components::{fetched, Loaded};
use crate::ui::current;
use leptos::prelude::*;

/// The page (admins; the server checks each call too). The list is read
/// again after every change.
#[island]
pub fn AccountsPage() -> impl IntoView {
    let create = ServerAction::<CreateAccount>::new();
    let change = ServerAction::<ChangeAccount>::new();
    let reset = ServerAction::<AccountResetLink>::new();
    let (creates, changes) = (create.version(), change.version());
    let list = fetched(
        move || (creates.try_get(), changes.try_get()),
        |_| accounts(),
    );
    let (changed, linked) = (change.value(), reset.value());
    view! {
        <section class="page-head">
            <h1>"Accounts"</h1>
            <p class="muted">
                "Who may sign in, and as what. A disabled account cannot sign in, its sign-ins and open "
                "pages' live updates end at once, and its API keys are refused until it is enabled again."
            </p>
        </section>
        <NewAccountForm action=create />
        <section class="panel" data-testid="accounts-list">
            {move || {
                current(&changed)
                    .and_then(Result::err)
                    .map(|e| {
                        view! {
                            <p class="error" role="alert" data-testid="account-change-error">
                                {e.to_string()}
                            </p>
                        }
                    })
            }}
            {move || {
                current(&linked)
                    .map(|r| match r {
                        Ok(link) => view! { <LinkNotice link /> }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any(),
                    })
            }}
            <Loaded resource=list loading="Loading accounts…" let:list>
                <table class="table" data-testid="accounts">
                    <thead>
                        <tr>
                            <th>"Name"</th>
                            <th>"E-mail"</th>
                            <th>"Role"</th>
                            <th>"Status"</th>
                            <th>"Last sign-in"</th>
                            <th></th>
                        </tr>
                    </thead>
                    <tbody>
                        <For
                            each=move || list.clone()
                            key=|a| (a.id, a.role, a.disabled, a.last_sign_in_at)
                            let:account
                        >
                            <AccountRow account change reset />
                        </For>
                    </tbody>
                </table>
            </Loaded>
        </section>
    }
}
