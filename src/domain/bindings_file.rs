//! The start-up bindings file (`SWITCHBOARD_BINDINGS_FILE`) against the
//! bindings in force.
//!
//! The file seeds a new database; after that the database's versions are
//! what the admins edit, and the file is only read again to compare. A
//! deployment that ships a newer file must not silently replace what an
//! admin saved, nor be silently ignored: start-up says which is used and
//! whether they differ, and the bindings page offers the file's version
//! for review and import as a new version.

use crate::domain::bindings::{BindingsDiff, ToolBindings};
use serde::{Deserialize, Serialize};

/// How the file stands against the bindings in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum FileComparison {
    /// Same bindings and labels (order and repeats aside).
    Same,
    /// Importing the file would make these changes.
    Differs {
        /// From the bindings in force to the file's.
        diff: BindingsDiff,
    },
    /// The file is missing, unreadable or not a bindings document.
    Unreadable {
        /// Why, in words.
        problem: String,
    },
}

impl FileComparison {
    /// Compares the file's text (or the reason it could not be read) with
    /// `in_force`.
    pub fn of(text: Result<&str, String>, in_force: &ToolBindings) -> Self {
        let text = match text {
            Ok(text) => text,
            Err(problem) => return FileComparison::Unreadable { problem },
        };
        match serde_json::from_str::<ToolBindings>(text) {
            Err(e) => FileComparison::Unreadable {
                problem: format!("it is not a tool-bindings document: {e}"),
            },
            Ok(file) => {
                let diff = BindingsDiff::between(in_force, &file);
                if diff.is_empty() {
                    FileComparison::Same
                } else {
                    FileComparison::Differs { diff }
                }
            }
        }
    }
}

/// The file's path and how it compares with the version in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingsFileStatus {
    /// As configured.
    pub path: String,
    /// The version in force it was compared with.
    pub version: i64,
    /// The outcome.
    pub comparison: FileComparison,
}

impl BindingsFileStatus {
    /// The start-up log line when the database already had bindings: which
    /// are used (always the database's) and how the file compares; `true`
    /// when it deserves a warning (the file differs or cannot be read).
    pub fn startup_report(&self) -> (bool, String) {
        let used = format!(
            "SWITCHBOARD_BINDINGS_FILE {} is set but the database already has bindings: using the database's (version {})",
            self.path, self.version
        );
        match &self.comparison {
            FileComparison::Same => (false, format!("{used}; the file has the same bindings")),
            FileComparison::Differs { diff } => (
                true,
                format!(
                    "{used}; the file differs ({}: {}); an admin can review and import it on /bindings",
                    diff.counts(),
                    diff.summary()
                ),
            ),
            FileComparison::Unreadable { problem } => {
                (true, format!("{used}; the file cannot be used: {problem}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(comparison: FileComparison) -> BindingsFileStatus {
        BindingsFileStatus {
            path: "/etc/tool-bindings.json".into(),
            version: 4,
            comparison,
        }
    }

    #[test]
    fn the_same_document_in_another_order_is_the_same() {
        let mut file = ToolBindings::demo();
        file.global.reverse();
        let text = serde_json::to_string(&file).unwrap();
        assert_eq!(
            FileComparison::of(Ok(&text), &ToolBindings::demo()),
            FileComparison::Same
        );
    }

    #[test]
    fn a_file_with_other_bindings_or_labels_differs_by_what_importing_adds() {
        let mut file = ToolBindings::demo();
        file.set("mortgage", "mortgage_calculator", true);
        file.labels.steps.insert("ended".into(), "Hung up".into());
        let text = serde_json::to_string(&file).unwrap();
        let FileComparison::Differs { diff } = FileComparison::of(Ok(&text), &ToolBindings::demo())
        else {
            panic!("should differ");
        };
        assert_eq!(
            diff.added,
            [("mortgage".to_owned(), "mortgage_calculator".to_owned())]
        );
        assert_eq!(diff.labels, ["step ended"]);
    }

    #[test]
    fn a_missing_or_broken_file_is_unreadable_with_the_reason() {
        let demo = ToolBindings::demo();
        assert_eq!(
            FileComparison::of(Err("No such file".into()), &demo),
            FileComparison::Unreadable {
                problem: "No such file".into()
            }
        );
        let FileComparison::Unreadable { problem } =
            FileComparison::of(Ok("{\"global\": 1}"), &demo)
        else {
            panic!("should be unreadable");
        };
        assert!(problem.starts_with("it is not a tool-bindings document"));
    }

    #[test]
    fn start_up_says_the_database_is_used_and_warns_only_when_the_file_differs() {
        let (warn, line) = status(FileComparison::Same).startup_report();
        assert!(!warn);
        assert!(line.contains("using the database's (version 4)"), "{line}");
        assert!(line.ends_with("the file has the same bindings"));

        let mut file = ToolBindings::demo();
        file.set("idv", "check_balance", true);
        let diff = BindingsDiff::between(&ToolBindings::demo(), &file);
        let (warn, line) = status(FileComparison::Differs { diff }).startup_report();
        assert!(warn);
        assert!(
            line.contains("the file differs (+1 / −0: added check_balance in idv)"),
            "{line}"
        );

        let (warn, line) = status(FileComparison::Unreadable {
            problem: "gone".into(),
        })
        .startup_report();
        assert!(warn && line.ends_with("the file cannot be used: gone"));
    }
}
