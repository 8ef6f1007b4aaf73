//! Recorded runs as `fiox compare` sides: `fiox history compare A B` judges two selections
//! with the same statistics and verdicts as `fiox compare`, and `regressions` names what
//! differs between the runs either side of a change (the environment and job-option check
//! `fiox compare` warns with).

use crate::query::{Filter, Point};
use crate::record::result_doc;
use crate::regress::{self, Found};
use crate::store::Store;
use crate::{HistoryError, Result};
use fiox_experiment::compare::context_differences;
use fiox_experiment::load::{run_from_value, Run, Side};
use std::path::Path;

/// The runs `f` selects, as compare reads them.
fn runs(store: &Store, f: &Filter) -> Result<Vec<Run>> {
    Ok(store
        .results(f)?
        .into_iter()
        .filter_map(|(id, text)| {
            let doc = result_doc(&text)?;
            Some(run_from_value(Path::new(&format!("run {id}")), &doc))
        })
        .collect())
}

/// The side named `name` of the runs `f` selects; an error when it selects none.
pub fn side(store: &Store, f: &Filter, name: &str) -> Result<Side> {
    let runs = runs(store, f)?;
    if runs.is_empty() {
        return Err(HistoryError::Input {
            what: format!("selection '{name}'"),
            why: "names no recorded run (see fiox history list)".into(),
        });
    }
    Ok(Side {
        name: name.to_string(),
        runs,
        baseline: None,
    })
}

/// What differs between the environments and job options of the runs either side of `c`.
pub fn differences(store: &Store, c: &Found) -> Result<Vec<String>> {
    let side = |name: &str, pts: &[Point]| -> Result<Side> {
        let mut all = Vec::new();
        for p in pts {
            let f = Filter {
                ids: Some((p.id, p.id)),
                ..Filter::default()
            };
            all.extend(runs(store, &f)?);
        }
        Ok(Side {
            name: name.into(),
            runs: all,
            baseline: None,
        })
    };
    let sides = [side("before", &c.before)?, side("after", &c.after)?];
    Ok(context_differences(&sides))
}

/// The change points of every series of `metrics` among the runs `f` selects, each with what
/// differs either side; only those for the worse unless `all`.
pub fn regressions(
    store: &Store,
    f: &Filter,
    metrics: &[String],
    o: &regress::Options,
    all: bool,
) -> Result<Vec<(Found, Vec<String>)>> {
    let mut found = Vec::new();
    for m in metrics {
        for c in regress::detect(store.points(m, f)?, o) {
            if all || c.worse != Some(false) {
                let diffs = differences(store, &c)?;
                found.push((c, diffs));
            }
        }
    }
    Ok(found)
}
