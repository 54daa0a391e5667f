//! Server-side lesson work that is more than a store call: what a teacher
//! sees of a lesson's runs (the page and the CSV file).

pub mod runs;
