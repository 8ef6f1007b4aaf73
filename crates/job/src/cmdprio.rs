//! Per-command I/O priorities of the io_uring and libaio engines (fio 3.33's `cmdprio_percentage`,
//! `cmdprio_class`, `cmdprio` and `cmdprio_bssplit`, engines/cmdprio.c): which I/Os of a job get
//! which ioprio value, resolved once per job into a [`CmdPrio`] plan that the runner draws from
//! per I/O.
//!
//! As in fio: values are per direction (`read,write`; trim is never prioritised); a class left
//! unset defaults to real-time (1) and a level to 0; `cmdprio_percentage` and `cmdprio_bssplit`
//! are mutually exclusive; a bssplit entry is `bs/perc` (the job's class/level) or
//! `bs/perc/class/level` (class capped at 3, level at 7, class 0 meaning best-effort), entries of
//! 0% are dropped, and the percentages of one block size must not add up to more than 100.
//! Every plan lists the distinct priorities of a direction with the job's default priority
//! (`prio`/`prioclass`, fio's `td->ioprio`) first: fio's per-priority statistics keep that order.

/// ioprio class shift of the kernel's ioprio value (`class << 13 | level`).
pub const IOPRIO_CLASS_SHIFT: u32 = 13;
/// Real-time class, fio's default for `cmdprio_class`.
pub const IOPRIO_CLASS_RT: u32 = 1;
/// Best-effort class, what class 0 means in fio's `ioprio_value`.
pub const IOPRIO_CLASS_BE: u32 = 2;

/// fio's `ioprio_value`: class 0 (none) is taken as best-effort.
pub fn ioprio_value(class: u32, level: u32) -> u16 {
    let class = if class == 0 { IOPRIO_CLASS_BE } else { class };
    ((class << IOPRIO_CLASS_SHIFT) | level) as u16
}

/// The options as written (per direction: read, write), before [`plan`] resolves them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CmdPrioOptions {
    pub percentage: [u32; 2],
    /// 0: not set (real-time is used).
    pub class: [u32; 2],
    pub level: [u32; 2],
    /// `cmdprio_bssplit` as written (empty: not set).
    pub bssplit: String,
}

/// One share of I/Os: `perc` percent of them get priority number `index` of the direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrioShare {
    pub perc: u32,
    pub index: u8,
}

/// The shares of one block size (`cmdprio_bssplit`), their percentages summing to `total`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BsPrio {
    pub bs: u64,
    pub total: u32,
    pub shares: Vec<PrioShare>,
}

/// How one direction picks an I/O's priority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrioRule {
    /// `cmdprio_percentage`: one share for every I/O.
    Percentage(PrioShare),
    /// `cmdprio_bssplit`: shares by the I/O's size; sizes not listed keep the default.
    Bssplit(Vec<BsPrio>),
}

/// One direction's plan: the distinct priorities (index 0 is the job's default) and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirPrio {
    pub prios: Vec<u16>,
    pub rule: PrioRule,
}

impl DirPrio {
    /// The priority index for an I/O of `len` bytes, given a draw `rand` in 0..100 (fio's
    /// `fio_cmdprio_set_ioprio`): index 0 (the default) when the draw falls outside the shares.
    #[inline]
    pub fn pick(&self, len: u64, rand: u32) -> u8 {
        match &self.rule {
            PrioRule::Percentage(s) => {
                if rand < s.perc {
                    s.index
                } else {
                    0
                }
            }
            PrioRule::Bssplit(list) => {
                let Some(b) = list.iter().find(|b| b.bs == len) else {
                    return 0;
                };
                let mut acc = 0;
                for s in &b.shares {
                    acc += s.perc;
                    if rand < acc {
                        return s.index;
                    }
                }
                0
            }
        }
    }
}

/// A job's per-command priorities: read and write plans (None: the direction keeps the default
/// priority on every I/O, and has no per-priority statistics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmdPrio {
    pub dirs: [Option<DirPrio>; 2],
}

/// Resolve the options into a plan (None when neither `cmdprio_percentage` nor
/// `cmdprio_bssplit` is set). `default` is the job's own ioprio value; `active` says which of
/// read and write the job does (fio builds no plan for a direction the job never issues).
pub fn plan(
    o: &CmdPrioOptions,
    default: u16,
    active: [bool; 2],
    kb_base: u32,
) -> Result<Option<CmdPrio>, String> {
    let has_bssplit = !o.bssplit.trim().is_empty();
    let has_pct = o.percentage.iter().any(|&p| p > 0);
    if has_pct && has_bssplit {
        return Err(
            "cmdprio_percentage and cmdprio_bssplit options are mutually exclusive (as in fio); \
             remove one of them"
                .into(),
        );
    }
    if !has_pct && !has_bssplit {
        return Ok(None);
    }
    let class = o.class.map(|c| if c == 0 { IOPRIO_CLASS_RT } else { c });
    let implicit = [0, 1].map(|d| ioprio_value(class[d], o.level[d]));
    let mut dirs = [None, None];
    if has_pct {
        for d in 0..2 {
            if o.percentage[d] == 0 || !active[d] {
                continue;
            }
            let mut prios = vec![default];
            let index = index_of(&mut prios, implicit[d]);
            let share = PrioShare {
                perc: o.percentage[d],
                index,
            };
            dirs[d] = Some(DirPrio {
                prios,
                rule: PrioRule::Percentage(share),
            });
        }
    } else {
        let parts = crate::value::split_triplet(&o.bssplit)?;
        for d in 0..2 {
            let Some(text) = parts[d] else { continue };
            let entries = parse_entries(text, kb_base)?;
            if entries.is_empty() || !active[d] {
                continue;
            }
            dirs[d] = Some(bssplit_dir(&entries, default, implicit[d])?);
        }
    }
    Ok(Some(CmdPrio { dirs }))
}

/// Does a `cmdprio_bssplit` value give some entry a non-zero priority hint (its fifth
/// field, fio 3.38+)? fiox cannot issue hinted priorities yet.
pub fn bssplit_has_hint(text: &str) -> bool {
    text.split([',', ':'])
        .filter_map(|item| item.split('/').nth(4))
        .any(|h| h.trim().parse::<u32>() != Ok(0))
}

/// Index of `prio` in `prios`, appended when new.
fn index_of(prios: &mut Vec<u16>, prio: u16) -> u8 {
    match prios.iter().position(|&p| p == prio) {
        Some(i) => i as u8,
        None => {
            prios.push(prio);
            (prios.len() - 1) as u8
        }
    }
}

/// One parsed bssplit entry: size, percent and explicit priority (None: the implicit one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    bs: u64,
    perc: u32,
    prio: Option<u16>,
}

/// fio allows at most this many entries per direction (`BSSPLIT_MAX`).
const BSSPLIT_MAX: usize = 64;

/// `bs/perc[/class/level]:...` of one direction, 0% entries dropped, sorted by size.
fn parse_entries(text: &str, kb_base: u32) -> Result<Vec<Entry>, String> {
    let items: Vec<&str> = text.split(':').take_while(|s| !s.is_empty()).collect();
    if items.len() > BSSPLIT_MAX {
        return Err(format!(
            "cmdprio_bssplit: {} entries, at most {BSSPLIT_MAX}",
            items.len()
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let e = parse_entry(item, kb_base)?;
        if e.perc > 0 {
            out.push(e);
        }
    }
    // Stable, like the order fio's qsort happens to keep for equal sizes in practice.
    out.sort_by_key(|e| e.bs);
    Ok(out)
}

fn parse_entry(item: &str, kb_base: u32) -> Result<Entry, String> {
    let fields: Vec<&str> = item.split('/').collect();
    let bad = || {
        format!(
            "cmdprio_bssplit entry '{item}': expected blocksize/percentage, \
             blocksize/percentage/class/level or blocksize/percentage/class/level/hint"
        )
    };
    let num = |s: &str| s.trim().parse::<u32>().map_err(|_| bad());
    let bs = crate::value::parse_size(fields[0], kb_base)
        .map_err(|e| format!("cmdprio_bssplit entry '{item}': {e}"))?;
    let perc = match fields.get(1).map(|s| s.trim()) {
        None | Some("") => 0,
        Some(p) => num(p)?.min(100),
    };
    let prio = match fields.len() {
        1 | 2 => None,
        // A non-zero hint (fio 3.38+) is refused when the job is defined (see
        // `bssplit_has_hint`), so only 0, which changes nothing, reaches a run.
        4 | 5 => {
            if let Some(h) = fields.get(4) {
                num(h)?;
            }
            Some(ioprio_value(num(fields[2])?.min(3), num(fields[3])?.min(7)))
        }
        _ => return Err(bad()),
    };
    Ok(Entry { bs, perc, prio })
}

/// A direction's plan from its sorted entries: one [`BsPrio`] per distinct size.
fn bssplit_dir(entries: &[Entry], default: u16, implicit: u16) -> Result<DirPrio, String> {
    let mut prios = vec![default];
    let mut list: Vec<BsPrio> = Vec::new();
    for e in entries {
        let index = index_of(&mut prios, e.prio.unwrap_or(implicit));
        let share = PrioShare {
            perc: e.perc,
            index,
        };
        match list.last_mut() {
            Some(b) if b.bs == e.bs => {
                b.total += e.perc;
                b.shares.push(share);
            }
            _ => list.push(BsPrio {
                bs: e.bs,
                total: e.perc,
                shares: vec![share],
            }),
        }
        let b = list.last().map_or(0, |b| b.total);
        if b > 100 {
            return Err(format!(
                "cmdprio_bssplit total percentage for bs: {} exceeds 100",
                e.bs
            ));
        }
    }
    Ok(DirPrio {
        prios,
        rule: PrioRule::Bssplit(list),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pct: [u32; 2], bssplit: &str) -> CmdPrioOptions {
        CmdPrioOptions {
            percentage: pct,
            bssplit: bssplit.into(),
            ..Default::default()
        }
    }

    #[test]
    fn percentage_defaults_to_real_time_level_0() {
        let p = plan(&opts([30, 0], ""), 0, [true, true], 1024)
            .unwrap()
            .unwrap();
        let r = p.dirs[0].as_ref().unwrap();
        assert_eq!(r.prios, vec![0, 1 << 13]);
        assert_eq!((r.pick(4096, 29), r.pick(4096, 30)), (1, 0));
        assert!(p.dirs[1].is_none(), "0% for writes: no plan");
        // A direction the job does not issue gets no plan either.
        let p = plan(&opts([30, 30], ""), 0, [false, true], 1024)
            .unwrap()
            .unwrap();
        assert!(p.dirs[0].is_none() && p.dirs[1].is_some());
        assert_eq!(plan(&opts([0, 0], ""), 0, [true; 2], 1024), Ok(None));
    }

    #[test]
    fn explicit_class_level_and_default_priority() {
        let o = CmdPrioOptions {
            percentage: [50, 50],
            class: [3, 0],
            level: [0, 5],
            ..Default::default()
        };
        // The job runs at best-effort 4 (prioclass=2, prio=4): that is index 0.
        let be4 = ioprio_value(2, 4);
        let p = plan(&o, be4, [true; 2], 1024).unwrap().unwrap();
        assert_eq!(p.dirs[0].as_ref().unwrap().prios, vec![be4, 3 << 13]);
        assert_eq!(p.dirs[1].as_ref().unwrap().prios, vec![be4, (1 << 13) | 5]);
        // A cmdprio equal to the default shares its index (fio's find_clat_prio_index).
        let same = CmdPrioOptions {
            percentage: [50, 0],
            class: [2, 0],
            level: [4, 0],
            ..Default::default()
        };
        let p = plan(&same, be4, [true; 2], 1024).unwrap().unwrap();
        assert_eq!(p.dirs[0].as_ref().unwrap().prios, vec![be4]);
    }

    #[test]
    fn bssplit_entries_as_fio() {
        let o = opts([0, 0], "4k/10/3/0:64k/20:4k/30/1/7:8k/0,16k/100/2/8");
        let p = plan(&o, 0, [true; 2], 1024).unwrap().unwrap();
        let r = p.dirs[0].as_ref().unwrap();
        // Sorted by size; 8k/0 dropped; 64k uses the implicit real-time 0.
        assert_eq!(r.prios, vec![0, 3 << 13, (1 << 13) | 7, 1 << 13]);
        let PrioRule::Bssplit(list) = &r.rule else {
            panic!("{r:?}")
        };
        assert_eq!(list.iter().map(|b| b.bs).collect::<Vec<_>>(), [4096, 65536]);
        assert_eq!(list[0].total, 40);
        assert_eq!([0, 9, 10, 39, 40].map(|x| r.pick(4096, x)), [1, 1, 2, 2, 0]);
        assert_eq!(r.pick(8192, 0), 0, "size not listed: default");
        // Writes: class 2 level capped at 7.
        let w = p.dirs[1].as_ref().unwrap();
        assert_eq!(w.prios, vec![0, (2 << 13) | 7]);
    }

    #[test]
    fn bad_inputs_are_refused_as_fio() {
        let both = plan(&opts([10, 0], "4k/10"), 0, [true; 2], 1024).unwrap_err();
        assert!(both.contains("mutually exclusive"), "{both}");
        let over = plan(&opts([0, 0], "4k/60:4k/50"), 0, [true; 2], 1024).unwrap_err();
        assert_eq!(
            over,
            "cmdprio_bssplit total percentage for bs: 4096 exceeds 100"
        );
        // fio 3.38+ reads a fifth field (the priority hint, refused when non-zero by the
        // option's definition); a sixth is still an error here.
        assert!(plan(&opts([0, 0], "4k/1/2/3/0"), 0, [true; 2], 1024).is_ok());
        assert!(bssplit_has_hint("4k/1/2/3/0,8k/5/2/3/4"));
        assert!(!bssplit_has_hint("4k/1/2/3/0:8k/5/2/3"));
        for bad in ["4k/10/1", "x/10", "4k/a", "4k/1/2/3/x", "4k/1/2/3/4/5"] {
            assert!(
                plan(&opts([0, 0], bad), 0, [true; 2], 1024).is_err(),
                "{bad}"
            );
        }
    }
}
