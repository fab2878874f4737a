//! Every number that decides what the analysis and the report claim, in one place, by stage: the
//! claim level and its permutation null ([`claims`]), modes and the slow thresholds ([`modes`]),
//! the periodic search ([`periodic`]), irregular (memoryless or drifting) paths ([`irregular`]),
//! phases, levels and stretches ([`phases`]), tails and whose outliers they are ([`tails`]), dated
//! levels and sentinels ([`dated`]), the harness's footprint ([`footprint`]), a path at the
//! expected period cheaper than the fast path's spread ([`folded`]), the report's
//! findings and the calibration battery's targets ([`findings`]), and the comparison of two
//! tracers' costs ([`comparison`], whose α bounds a false decision, not a false discovery).
//!
//! Each constant says why it has its value and what calibrates it (a unit test, `make calibrate`'s
//! seeded battery, a survey measurement, or an argument no run moves). The table of
//! docs/code-paths.md ("Constants that decide a classification") is rendered from [`ALL`] by
//! [`markdown_table`]; the unit test `constants_table` fails when the two differ, and
//! `TRACEBENCH_BLESS=1` rewrites the block.
//!
//! stats/ depends on nothing else in the crate, so the few of its own defaults that decide
//! something (the histogram's resolution and valley, the period's candidate GCDs and evidence, the
//! change points' penalty and clipping, the comparison's α and margin) stay declared beside the
//! code that uses them and are re-exported here: this module depends on stats/, never the other
//! way. Moving them here would make stats/ import upward, or take a parameter in every one of its
//! callers for a value none of them varies. Their value in the table is read from the constant
//! itself, as for all others.
//!
//! A constant is declared once, with its entry, by the `decisions!` macro below: the table can
//! neither lose a constant nor show a stale value.

use std::fmt::Debug;

/// One constant of the table: its name in its stage, its value (the constant itself, shown with
/// `{:?}`), the reason for that value and what calibrates it.
pub struct Constant {
    pub name: &'static str,
    /// The module that declares it: this stage's, or stats/'s for a re-exported one.
    pub defined_in: &'static str,
    pub value: &'static dyn Debug,
    pub reason: &'static str,
    pub calibrated_by: &'static str,
}

/// One stage: its module's name and its constants, in declaration order.
pub struct Stage {
    pub module: &'static str,
    pub entries: &'static [Constant],
}

/// Declares a stage's constants, each with its doc comment (the reason) and `calibrated_by`, and
/// the stage's `ENTRIES` from the same tokens; then the constants of stats/ the stage re-exports
/// (`reexported:`), each as `use NAME from crate::stats::...;`.
macro_rules! decisions {
    (
        $(
            $(#[doc = $doc:literal])+
            calibrated_by: $cal:literal;
            pub const $name:ident: $ty:ty = $val:expr;
        )*
        $(
            reexported:
            $(
                $(#[doc = $rdoc:literal])+
                calibrated_by: $rcal:literal;
                use $rname:ident from $($seg:ident)::+;
            )+
        )?
    ) => {
        $(
            $(#[doc = $doc])+
            #[doc = ""]
            #[doc = concat!("Calibrated by: ", $cal, ".")]
            pub const $name: $ty = $val;
        )*
        $($(
            $(#[doc = $rdoc])+
            #[doc = ""]
            #[doc = concat!("Calibrated by: ", $rcal, ".")]
            pub use $($seg)::+ :: $rname;
        )+)?
        /// This stage's constants, for the table.
        pub(super) const ENTRIES: &[super::Constant] = &[
            $(super::Constant { name: stringify!($name), defined_in: module_path!(), value: &$name, reason: concat!($($doc),+), calibrated_by: $cal },)*
            $($(super::Constant { name: stringify!($rname), defined_in: stringify!($($seg)::+), value: &$rname, reason: concat!($($rdoc),+), calibrated_by: $rcal },)+)?
        ];
    };
}

pub mod claims;
pub mod comparison;
pub mod dated;
pub mod findings;
pub mod folded;
pub mod footprint;
pub mod irregular;
pub mod modes;
pub mod periodic;
pub mod phases;
pub mod tails;

/// Every stage, in the order a run's events meet them.
pub const ALL: &[Stage] = &[
    Stage { module: "claims", entries: claims::ENTRIES },
    Stage { module: "modes", entries: modes::ENTRIES },
    Stage { module: "periodic", entries: periodic::ENTRIES },
    Stage { module: "irregular", entries: irregular::ENTRIES },
    Stage { module: "phases", entries: phases::ENTRIES },
    Stage { module: "tails", entries: tails::ENTRIES },
    Stage { module: "dated", entries: dated::ENTRIES },
    Stage { module: "footprint", entries: footprint::ENTRIES },
    Stage { module: "folded", entries: folded::ENTRIES },
    Stage { module: "findings", entries: findings::ENTRIES },
    Stage { module: "comparison", entries: comparison::ENTRIES },
];

/// One line of text for a table cell: whitespace runs collapsed, `|` escaped.
fn cell(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// The Markdown table of [`ALL`], as docs/code-paths.md holds it.
pub fn markdown_table() -> String {
    let mut out =
        String::from("| constant | value | defined in | why this value | calibrated by |\n|---|---|---|---|---|\n");
    for s in ALL {
        for e in s.entries {
            let module = e.defined_in.replace(' ', "");
            let module = module.trim_start_matches("tracebench::").trim_start_matches("crate::");
            out += &format!(
                "| `{}::{}` | {} | `{module}` | {} | {} |\n",
                s.module,
                e.name,
                cell(&format!("{:?}", e.value)),
                cell(e.reason),
                cell(e.calibrated_by)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests;
