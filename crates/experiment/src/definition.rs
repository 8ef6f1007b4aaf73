//! What a variant is, for telling whether a resumed experiment still runs the same thing: the
//! job text, the option overrides, the testbed or target, the environment variables and the
//! runtime override, each as readable text, with a hash over all of them. The manifest keeps
//! every variant's definition; a resume whose definition differs is refused, naming the parts
//! that changed, because its new runs would be pooled with the old ones. Also each run's own
//! random seed (so repetitions are independent samples of offsets and pacing).

use crate::config::{Experiment, Planned, Variant};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The environment variable that carries a run's seed into the job file's `randseed=`.
pub const SEED_VAR: &str = "FIOX_RUN_SEED";

/// A variant's definition: part name -> its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition(pub BTreeMap<String, String>);

/// FNV-1a, 64 bits: change detection and seeds, not security.
pub fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn pairs<'a>(m: impl Iterator<Item = (&'a String, &'a String)>) -> String {
    m.map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the job text or the overrides set `randseed` themselves.
pub fn pins_randseed(exp: &Experiment, jobs: &str, v: &Variant) -> bool {
    let in_text = jobs.lines().any(|l| {
        let l = l.trim_start();
        l.strip_prefix("randseed")
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    });
    in_text || exp.options.contains_key("randseed") || v.options.contains_key("randseed")
}

impl Definition {
    /// The definition of `v` in `exp` with the job text `jobs` and a `--runtime` override.
    pub fn of(exp: &Experiment, jobs: &str, v: &Variant, runtime: Option<&str>) -> Definition {
        let mut options = exp.options.clone();
        options.extend(v.options.clone());
        let mut env = exp.env.clone();
        env.extend(v.env.clone());
        let testbed = v.testbed.as_ref().map_or(String::new(), |t| {
            let kv: Vec<String> = t.iter().map(|(k, v)| format!("{k}={v}")).collect();
            kv.join(" ")
        });
        let parts = [
            ("job text", jobs.to_string()),
            ("options", pairs(options.iter())),
            ("testbed", testbed),
            (
                "target",
                v.target
                    .as_ref()
                    .map_or(String::new(), |t| t.display().to_string()),
            ),
            ("env", pairs(env.iter())),
            ("runtime override", runtime.unwrap_or_default().to_string()),
        ];
        let mut def: BTreeMap<String, String> =
            parts.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        // Only when set: a definition without limits keeps the hash it had before limits
        // existed, so older results directories still resume.
        let machine = exp.machine_of(v).text();
        if !machine.is_empty() {
            def.insert("machine".into(), machine);
        }
        if let Some(vm) = exp.vm_of(v) {
            def.insert("vm".into(), vm);
        }
        Definition(def)
    }

    /// The hash of every part.
    pub fn hash(&self) -> String {
        let all: String = self.0.iter().map(|(k, v)| format!("{k}\0{v}\0")).collect();
        format!("{:016x}", fnv(all.as_bytes()))
    }

    /// As the manifest keeps it.
    pub fn to_json(&self) -> Value {
        json!({"hash": self.hash(), "parts": self.0})
    }

    /// What changed from the manifest's record `old` to `self`, one phrase per part.
    pub fn changes_from(&self, old: &Value) -> Vec<String> {
        let empty = Map::new();
        let parts = old["parts"].as_object().unwrap_or(&empty);
        self.0
            .iter()
            .filter_map(|(k, now)| {
                let was = parts.get(k).and_then(Value::as_str).unwrap_or_default();
                (was != now).then(|| describe(k, was, now))
            })
            .collect()
    }
}

/// "options: bs=4k -> bs=1m", or for the job text its first differing line.
fn describe(part: &str, was: &str, now: &str) -> String {
    let quote = |s: &str| {
        if s.is_empty() {
            "(none)".to_string()
        } else {
            format!("'{s}'")
        }
    };
    if part != "job text" {
        return format!("{part}: {} -> {}", quote(was), quote(now));
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (was.lines().collect(), now.lines().collect());
    let i = (0..a.len().max(b.len()))
        .find(|&i| a.get(i) != b.get(i))
        .unwrap_or(0);
    let line = |v: &[&str]| v.get(i).map_or("(no line)".to_string(), |l| quote(l));
    format!("job text line {}: {} -> {}", i + 1, line(&a), line(&b))
}

/// The seed of one planned run: from the experiment's name, the variant and the run's index,
/// so every repetition draws its own offsets and pacing and a resume reproduces them.
pub fn run_seed(experiment: &str, p: &Planned) -> u64 {
    let key = format!("{experiment}\0{}\0{}", p.variant, p.index);
    // fio's randseed is a 64-bit number; keep it positive for any parser of the JSON.
    fnv(key.as_bytes()) >> 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(text: &str) -> Experiment {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_changed_definition_names_what_changed() {
        let e = exp("jobs = \"\"\n[[variant]]\nname = \"a\"\noptions = { bs = \"4k\" }\n");
        let old = Definition::of(&e, "[j]\nrw=read\nbs=4k\n", &e.variants[0], None);
        let rec = old.to_json();
        assert!(old.changes_from(&rec).is_empty());
        let e2 = exp("jobs = \"\"\n[[variant]]\nname = \"a\"\noptions = { bs = \"1m\" }\n");
        let new = Definition::of(&e2, "[j]\nrw=write\nbs=4k\n", &e2.variants[0], Some("5"));
        assert_ne!(new.hash(), old.hash());
        let ch = new.changes_from(&rec).join("; ");
        assert!(ch.contains("options: 'bs=4k' -> 'bs=1m'"), "{ch}");
        assert!(
            ch.contains("job text line 2: 'rw=read' -> 'rw=write'"),
            "{ch}"
        );
        assert!(ch.contains("runtime override: (none) -> '5'"), "{ch}");
    }

    #[test]
    fn seeds_differ_per_run_and_pinned_seeds_are_seen() {
        let p = |i| Planned {
            variant: "a".into(),
            index: i,
            warmup: false,
            position: 0,
        };
        assert_ne!(run_seed("x", &p(0)), run_seed("x", &p(1)));
        assert_eq!(run_seed("x", &p(1)), run_seed("x", &p(1)));
        let e = exp("jobs = \"\"\n[[variant]]\nname = \"a\"\n");
        assert!(pins_randseed(&e, "[j]\nrandseed = 7\n", &e.variants[0]));
        assert!(!pins_randseed(
            &e,
            "[j]\nrandseeds=7\nrw=read\n",
            &e.variants[0]
        ));
    }
}
