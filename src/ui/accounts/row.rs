//! One account in the admins' list: its name, e-mail, role (changed in
//! place), status, last sign-in, and disabling, enabling and a password
//! link.

use crate::api::accounts::{AccountResetLink, ChangeAccount};
use crate::domain::account::AccountView;
use crate::domain::time::format_utc;
use crate::domain::user::Role;
use leptos::prelude::*;

/// The row; each control dispatches its action, and the page reads the
/// list again after a change.
#[component]
pub fn AccountRow(
    account: AccountView,
    change: ServerAction<ChangeAccount>,
    reset: ServerAction<AccountResetLink>,
) -> impl IntoView {
    let id = account.id;
    let disabled = account.disabled;
    let set_role = move |ev| {
        change.dispatch(ChangeAccount {
            id,
            role: Some(event_target_value(&ev)),
            disabled: None,
        });
    };
    let toggle = move |_| {
        change.dispatch(ChangeAccount {
            id,
            role: None,
            disabled: Some(!disabled),
        });
    };
    let role_option = |role: Role| {
        view! {
            <option value=role.as_str() selected=account.role == role>
                {role.as_str()}
            </option>
        }
    };
    view! {
        <tr data-testid="account-row" data-email=account.email.to_string()>
            <td>{account.name}</td>
            <td class="email">{account.email.to_string()}</td>
            <td>
                <select aria-label="Role" on:change=set_role>
                    {role_option(Role::Teacher)}
                    {role_option(Role::Admin)}
                </select>
            </td>
            <td data-testid="account-status">
                {if disabled {
                    view! { <span class="badge warn">"disabled"</span> }.into_any()
                } else {
                    view! { <span class="badge">"active"</span> }.into_any()
                }}
            </td>
            <td class="muted nowrap">{account.last_sign_in_at.map_or_else(|| "never".to_owned(), format_utc)}</td>
            <td class="actions">
                <button
                    type="button"
                    class=if disabled { "button ghost small" } else { "button ghost small danger" }
                    on:click=toggle
                >
                    {if disabled { "Enable" } else { "Disable" }}
                </button>
                <button
                    type="button"
                    class="button ghost small"
                    disabled=disabled
                    on:click=move |_| {
                        reset.dispatch(AccountResetLink { id });
                    }
                >
                    "Password link"
                </button>
            </td>
        </tr>
    }
}
