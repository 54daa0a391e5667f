//! The banking demo's tools, acting on the demo accounts in SQLite, run
//! for sessions opened with built-ins on (`runBuiltins`, the default):
//! identity checks, balances, transactions, disputes, interaction notes
//! and a mortgage calculator.

use super::{arg, plain, Ctx, Family, Outcome};
use crate::domain::limits::{excerpt, IDV_FAILURES_PER_ACCOUNT_PER_HOUR};
use crate::domain::workflow_state::MAX_FAILED_IDENTITY_CHECKS;
use crate::server::store::bank_accounts;
use crate::server::ServerError;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

/// The banking demo's tools.
pub const FAMILY: Family = Family {
    name: "banking demo",
    tools: || {
        vec![
            "perform_idv_check",
            "lookup_account",
            "check_balance",
            "lookup_transaction",
            "create_dispute_case",
            "manage_recent_interactions",
            "mortgage_calculator",
        ]
    },
    runs_for: |kind| kind.builtins,
    claims: super::by_id_only,
    run,
};

/// A demo tool's result or refusal, or a server failure.
type Answer = Result<Result<Value, String>, ServerError>;

fn run(cx: Ctx<'_>) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let answer = match cx.tool {
            "perform_idv_check" => idv_check(cx).await,
            "lookup_account" => {
                let account = arg(cx.arguments, "accountNumber");
                let holder = bank_accounts::holder(&cx.state.db, account).await?;
                Ok(Ok(
                    json!({"found": holder.is_some(), "accountNumber": account}),
                ))
            }
            "check_balance" => balance(cx).await,
            "lookup_transaction" | "create_dispute_case" => transaction(cx).await,
            "manage_recent_interactions" => interactions(cx).await,
            _ => Ok(Ok(mortgage(cx.arguments))),
        };
        Ok(plain(answer?))
    })
}

fn pounds(pence: i64) -> String {
    format!(
        "{}£{}.{:02}",
        if pence < 0 { "-" } else { "" },
        pence.abs() / 100,
        pence.abs() % 100
    )
}

/// `perform_idv_check`: verifies the caller against the account's sort
/// code and date of birth; failures count per session and per account,
/// and lock the checks past their limits.
async fn idv_check(cx: Ctx<'_>) -> Answer {
    let (state, arguments) = (cx.state, cx.arguments);
    if cx.ws.failed_identity_checks >= MAX_FAILED_IDENTITY_CHECKS {
        return Ok(Err(format!(
            "identity checks are locked for this session after {MAX_FAILED_IDENTITY_CHECKS} failed attempts; hand the caller to a colleague"
        )));
    }
    let account = arg(arguments, "accountNumber");
    let at = state.clock.now();
    if state.budgets.idv_locked(account, at).await? {
        return Ok(Err(format!(
            "identity checks for account {} are locked after {IDV_FAILURES_PER_ACCOUNT_PER_HOUR} failed attempts within an hour; hand the caller to a colleague",
            excerpt(account)
        )));
    }
    let row = bank_accounts::identity_details(&state.db, account).await?;
    let passed = row.is_some_and(|(sort, dob)| {
        sort == arg(arguments, "sortCode") && dob == arg(arguments, "dateOfBirth")
    });
    if passed {
        *cx.verified = Some(account.to_owned());
        return Ok(Ok(
            json!({"verified": true, "message": "Identity verified."}),
        ));
    }
    *cx.verified = None;
    cx.ws.failed_identity_checks += 1;
    state.budgets.idv_failed(account, at).await?;
    Ok(Ok(
        json!({"verified": false, "message": "The details do not match our records."}),
    ))
}

/// `check_balance`: the verified account's balance.
async fn balance(cx: Ctx<'_>) -> Answer {
    let account = arg(cx.arguments, "accountNumber");
    if cx.verified.as_deref() != Some(account) {
        return Ok(Err(format!(
            "identity was not verified for account {account}"
        )));
    }
    let balance = bank_accounts::balance_pence(&cx.state.db, account).await?;
    Ok(Ok(
        json!({"accountNumber": account, "balancePence": balance, "balance": pounds(balance)}),
    ))
}

/// `lookup_transaction` and `create_dispute_case`: a transaction on the
/// verified account, and a dispute case opened for it.
async fn transaction(cx: Ctx<'_>) -> Answer {
    let (db, arguments) = (&cx.state.db, cx.arguments);
    let id = arg(arguments, "transactionId");
    let Some(bank_accounts::Transaction {
        account_number: account,
        booked_on,
        description,
        amount_pence: amount,
    }) = bank_accounts::transaction(db, id).await?
    else {
        return Ok(Err(format!("there is no transaction `{}`", excerpt(id))));
    };
    if cx.verified.as_deref() != Some(account.as_str()) {
        return Ok(Err(format!(
            "transaction `{id}` is not on the verified account"
        )));
    }
    if cx.tool == "lookup_transaction" {
        return Ok(Ok(
            json!({"transactionId": id, "bookedOn": booked_on, "description": description, "amount": pounds(amount)}),
        ));
    }
    let case = bank_accounts::open_dispute(
        db,
        &cx.row.id,
        &account,
        id,
        arg(arguments, "reason"),
        arguments.get("details").and_then(Value::as_str),
    )
    .await?;
    Ok(Ok(
        json!({"caseId": format!("DC-{case:05}"), "transactionId": id, "status": "open"}),
    ))
}

/// `manage_recent_interactions`: adds a note (`"action": "add"`) and
/// lists the verified account's recent notes.
async fn interactions(cx: Ctx<'_>) -> Answer {
    let db = &cx.state.db;
    let Some(account) = cx.verified.clone() else {
        return Ok(Err("identity was not verified".into()));
    };
    if arg(cx.arguments, "action") == "add" {
        bank_accounts::add_interaction(db, &account, arg(cx.arguments, "note")).await?;
    }
    let notes = bank_accounts::recent_interactions(db, &account).await?;
    Ok(Ok(json!({
        "interactions": notes.into_iter().map(|(at, note)| json!({"at": crate::domain::time::format_utc(at), "note": note})).collect::<Vec<_>>()
    })))
}

/// `mortgage_calculator`: the monthly repayment of a loan.
fn mortgage(arguments: &Value) -> Value {
    let number = |name: &str| arguments.get(name).and_then(Value::as_f64);
    let principal = number("principal").unwrap_or_default();
    let rate = number("annualRatePercent").unwrap_or_default() / 1200.0;
    let months = number("years").unwrap_or(1.0) * 12.0;
    let monthly = if rate == 0.0 {
        principal / months
    } else {
        principal * rate / (1.0 - (1.0 + rate).powf(-months))
    };
    json!({"monthlyPayment": (monthly * 100.0).round() / 100.0})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pounds_are_formatted_with_sign_and_pence() {
        assert_eq!(pounds(254399), "£2543.99");
        assert_eq!(pounds(-450), "-£4.50");
        assert_eq!(pounds(5), "£0.05");
    }
}
