//! The man page (`docs/fiox.1`) and the bash, zsh and fish completions (`completions/`),
//! generated from the tables the parsers use: fiox's switches and subcommands
//! (`fiox_job::help`), each subcommand's switches (read from its clap command), and the job
//! option table (one man section per option group), the way ripgrep generates both from its
//! flag table. `fiox man [page|bash|zsh|fish]` prints them (a `cargo install` has no checkout
//! to install them from). A test below keeps the checked-in files equal to what these
//! functions make (`FIOX_BLESS=1` rewrites them).

use fiox_job::defs::{self, Kind, OptDef};
use fiox_job::help::{Subcommand, SUBCOMMANDS, SWITCHES};

/// `fiox man [WHAT]`: the generated text on stdout (the same text as the repository's files).
pub fn man_main(a: crate::cli::ManArgs) -> anyhow::Result<i32> {
    use crate::cli::Generated;
    use std::io::Write;
    let text = match a.what {
        Generated::Page => man_page(),
        Generated::Bash => bash(),
        Generated::Zsh => zsh(),
        Generated::Fish => fish(),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(0)
}

/// One switch of a subcommand, as its clap command defines it.
#[derive(Debug, PartialEq)]
pub struct Flag {
    pub long: String,
    pub short: Option<char>,
    /// `None` for a switch without a value.
    pub value: Option<String>,
    /// Completion words for the value (empty: a file name or free text).
    pub choices: Vec<String>,
    pub help: String,
}

impl Flag {
    /// `-o, --output=PATH` as help texts show it.
    pub fn spelling(&self) -> String {
        let mut name = format!("--{}", self.long);
        if let Some(v) = &self.value {
            name = format!("{name}={v}");
        }
        if let Some(c) = self.short {
            name = format!("-{c}, {name}");
        }
        name
    }

    fn of(a: &clap::Arg) -> Option<Flag> {
        let long = a.get_long()?;
        let takes = a.get_num_args().is_some_and(|n| n.takes_values());
        Some(Flag {
            long: long.to_string(),
            short: a.get_short(),
            value: takes.then(|| {
                a.get_value_names()
                    .and_then(|v| v.first())
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "VALUE".into())
            }),
            choices: a
                .get_possible_values()
                .iter()
                .filter(|p| !p.is_hide_set())
                .map(|p| p.get_name().to_string())
                .collect(),
            help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
        })
    }
}

/// The switches of a subcommand listed in `SUBCOMMANDS` (with those of its own visible
/// subcommands, as `testbed up`'s), `--help` last.
pub fn flags_of(sub: &str) -> Option<Vec<Flag>> {
    let cmd = crate::cli::command();
    let c = cmd.find_subcommand(sub)?;
    let mut out: Vec<Flag> = Vec::new();
    let mut add = |f: Flag| {
        if !out.iter().any(|o| o.long == f.long) {
            out.push(f);
        }
    };
    for n in c.get_subcommands().filter(|n| !n.is_hide_set()) {
        for mut f in n
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter_map(Flag::of)
        {
            // Say which nested command takes it (`--hold (up)`), but --help is everyone's.
            if f.long != "help" {
                f.help = format!("{} ({})", f.help, n.get_name());
            }
            add(f);
        }
    }
    for f in c
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(Flag::of)
    {
        add(f);
    }
    // Each nested command has its own --help; one is listed, last.
    if let Some(i) = out.iter().position(|f| f.long == "help") {
        let h = out.remove(i);
        out.push(h);
    }
    Some(out)
}

/// A subcommand's own visible subcommands (`testbed up|list|down|cleanup`), with their help.
fn nested_of(sub: &str) -> Vec<(String, String)> {
    let cmd = crate::cli::command();
    cmd.find_subcommand(sub)
        .into_iter()
        .flat_map(|c| c.get_subcommands())
        .filter(|n| !n.is_hide_set())
        .map(|n| {
            let about = n.get_about().map(|a| a.to_string()).unwrap_or_default();
            (n.get_name().to_string(), about)
        })
        .collect()
}

/// Words a job option's value completes to (its fixed choices).
fn choices(d: &OptDef) -> Vec<&'static str> {
    match d.kind {
        Kind::Choice(c) => c.to_vec(),
        Kind::Bool => vec!["0", "1"],
        _ if d.name == "ioengine" => defs::engines().map(|e| e.0).collect(),
        _ => Vec::new(),
    }
}

fn categories() -> Vec<defs::Category> {
    let mut c: Vec<defs::Category> = defs::all().map(|d| d.category).collect();
    c.sort();
    c.dedup();
    c
}

/// roff text: backslashes and dashes escaped, no line starting with a control character.
fn roff(s: &str) -> String {
    let s = s.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// `docs/fiox.1`.
pub fn man_page() -> String {
    let mut m = format!(
        ".TH FIOX 1 \"\" \"fiox {}\" \"User Commands\"\n.SH NAME\nfiox \\- a storage I/O \
         benchmark that speaks fio's job language\n.SH SYNOPSIS\n.B fiox\n[\\fIswitches\\fR] \
         [\\fB\\-\\-option\\fR=\\fIvalue\\fR ...] [\\fIjobfile\\fR ...]\n",
        env!("CARGO_PKG_VERSION")
    );
    for s in SUBCOMMANDS {
        m.push_str(&format!(".br\n.B fiox {}\n[\\fIargs\\fR ...]\n", s.name));
    }
    m.push_str(
        ".SH DESCRIPTION\nfiox runs fio's job files and command lines and prints fio's \
         reports (normal, json, json+, terse). Options before the first \\fB\\-\\-name\\fR= are \
         global; each \\fB\\-\\-name\\fR= starts a job. A job file of \\fB\\-\\fR is read from \
         standard input.\n.SH SWITCHES\n",
    );
    for s in SWITCHES {
        m.push_str(&format!(".TP\n.B {}\n{}\n", roff(s.spelling), roff(s.help)));
    }
    m.push_str(".SH SUBCOMMANDS\n");
    for s in SUBCOMMANDS {
        man_subcommand(&mut m, s);
    }
    for cat in categories() {
        m.push_str(&format!(
            ".SH JOB OPTIONS: {}\n",
            roff(&cat.title().to_uppercase())
        ));
        for d in defs::all().filter(|d| d.category == cat) {
            man_option(&mut m, d);
        }
    }
    m.push_str(".SH ENGINES\n");
    for (name, what) in defs::engines() {
        m.push_str(&format!(".TP\n.B {}\n{}\n", roff(name), roff(what)));
    }
    m.push_str(
        ".SH ENVIRONMENT\n.TP\n.B FIOX_AS_FIO\n1: present fiox as fio, as it does when run under \
         the name fio (a link named fio): \\-\\-version and the reports say \
         fio\\-3.33 (fiox\\-VERSION), which programs that check fio's version accept. 0: as \
         fiox, whatever the name.\n\
         .SH EXIT STATUS\n0 when every job ran, 1 on errors, 130 when interrupted.\n\
         .SH SEE ALSO\n.BR fio (1)\n",
    );
    m
}

/// A subcommand's section: what it does, its usage lines (a nested command's each), what
/// its help says after the switches, then the switches.
fn man_subcommand(m: &mut String, s: &Subcommand) {
    m.push_str(&format!(".SS fiox {}\n{}\n", s.name, roff(s.about)));
    let cmd = crate::cli::command();
    if let Some(c) = cmd.find_subcommand(s.name) {
        let nested: Vec<&clap::Command> =
            c.get_subcommands().filter(|n| !n.is_hide_set()).collect();
        let uses: Vec<&clap::Command> = if nested.is_empty() { vec![c] } else { nested };
        for u in uses {
            let mut u = u.clone();
            let usage = u.render_usage().to_string();
            let usage = usage.trim_start_matches("Usage: ").trim();
            let about = u.get_about().map(|a| format!(": {a}")).unwrap_or_default();
            let about = if u.get_name() == s.name {
                String::new()
            } else {
                about
            };
            m.push_str(&format!(".br\n\\fB{}\\fR{}\n", roff(usage), roff(&about)));
        }
        if let Some(after) = c.get_after_help() {
            m.push_str(&format!(".PP\n{}\n", roff(&after.to_string())));
        }
    }
    for f in flags_of(s.name).unwrap_or_default() {
        m.push_str(&format!(
            ".TP\n.B {}\n{}\n",
            roff(&f.spelling()),
            roff(&f.help)
        ));
    }
}

fn man_option(m: &mut String, d: &OptDef) {
    let mut head = format!("\\-\\-{}", roff(d.name));
    head.push_str(&format!("=\\fI{}\\fR", roff(&d.kind.type_name())));
    m.push_str(&format!(".TP\n.B {head}\n"));
    let mut facts = Vec::new();
    if !d.aliases.is_empty() {
        facts.push(format!("alias {}", d.aliases.join(", ")));
    }
    if !d.default.is_empty() {
        facts.push(format!("default {}", d.default));
    }
    if let Some((lo, hi)) = d.range {
        facts.push(format!("range {lo} to {hi}"));
    }
    if !d.engines.is_empty() {
        facts.push(format!("engine {}", d.engines.join(", ")));
    }
    let mut text = d.help.to_string();
    if !d.long_help.is_empty() {
        text = format!("{text}. {}", d.long_help);
    }
    if !facts.is_empty() {
        text = format!("{text} ({})", facts.join("; "));
    }
    m.push_str(&roff(&text.replace('\n', " ")));
    m.push('\n');
}

/// Every `--word` fiox itself completes: switches and job options with their aliases.
fn main_words() -> Vec<(String, bool, Vec<&'static str>, String)> {
    let mut w: Vec<(String, bool, Vec<&'static str>, String)> = SWITCHES
        .iter()
        .map(|s| {
            (
                s.name().to_string(),
                s.takes_value() && !s.spelling.contains('['),
                s.choices.to_vec(),
                s.help.to_string(),
            )
        })
        .collect();
    for d in defs::all() {
        for n in std::iter::once(&d.name).chain(d.aliases) {
            let takes = !matches!(d.kind, Kind::Bool | Kind::OptStr);
            w.push((n.to_string(), takes, choices(d), d.help.to_string()));
        }
    }
    w
}

/// `completions/fiox.bash`.
pub fn bash() -> String {
    let mut s = String::from(
        "# bash completion for fiox (generated from fiox's option table; do not edit)\n\
         _fiox() {\n    local cur prev opt words i\n    COMPREPLY=()\n    \
         cur=\"${COMP_WORDS[COMP_CWORD]}\"\n    prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n",
    );
    // `--rw=ra<TAB>`: bash splits at '=', so the option is two words back.
    s.push_str(
        "    opt=\"\"\n    if [[ $cur == \"=\" ]]; then opt=\"$prev\"; cur=\"\";\n    \
         elif [[ $prev == \"=\" ]]; then opt=\"${COMP_WORDS[COMP_CWORD-2]}\"; fi\n",
    );
    s.push_str("    case \"${COMP_WORDS[1]}\" in\n");
    for sub in SUBCOMMANDS {
        let flags = flags_of(sub.name).unwrap_or_default();
        s.push_str(&format!(
            "    {})\n        if [[ $COMP_CWORD -gt 1 ]]; then\n",
            sub.name
        ));
        s.push_str("            case \"$opt\" in\n");
        for f in flags.iter().filter(|f| !f.choices.is_empty()) {
            s.push_str(&format!(
                "            --{}) COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return;;\n",
                f.long,
                f.choices.join(" ")
            ));
        }
        s.push_str("            esac\n");
        let nested: Vec<String> = nested_of(sub.name).into_iter().map(|n| n.0).collect();
        if !nested.is_empty() {
            s.push_str(&format!(
                "            if [[ $COMP_CWORD -eq 2 && $cur != -* ]]; then COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return; fi\n",
                nested.join(" ")
            ));
        }
        let words: Vec<String> = flags
            .iter()
            .map(|f| format!("--{}{}", f.long, if f.value.is_some() { "=" } else { "" }))
            .collect();
        s.push_str(&format!(
            "            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); \
             [[ ${{COMPREPLY[0]}} == *= ]] && compopt -o nospace; else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n            return\n        fi;;\n",
            words.join(" ")
        ));
    }
    s.push_str("    esac\n    case \"$opt\" in\n");
    for (name, _, ch, _) in main_words().iter().filter(|w| !w.2.is_empty()) {
        s.push_str(&format!(
            "    --{name}) COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return;;\n",
            ch.join(" ")
        ));
    }
    s.push_str(
        "    esac\n    if [[ -n $opt ]]; then COMPREPLY=($(compgen -f -- \"$cur\")); return; fi\n",
    );
    let words: Vec<String> = main_words()
        .iter()
        .map(|(n, v, _, _)| format!("--{n}{}", if *v { "=" } else { "" }))
        .collect();
    let subs: Vec<&str> = SUBCOMMANDS.iter().map(|s| s.name).collect();
    s.push_str(&format!(
        "    if [[ $cur == -* ]]; then\n        words=\"{}\"\n        \
         COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n        \
         [[ ${{COMPREPLY[0]}} == *= ]] && compopt -o nospace\n    elif [[ $COMP_CWORD -eq 1 ]]; then\n        \
         COMPREPLY=($(compgen -W \"{}\" -- \"$cur\") $(compgen -f -- \"$cur\"))\n    else\n        \
         COMPREPLY=($(compgen -f -- \"$cur\"))\n    fi\n}}\ncomplete -F _fiox fiox\n",
        words.join(" "),
        subs.join(" ")
    ));
    s
}

/// Text safe inside a zsh `_arguments` description (`[...]`) in single quotes.
fn zsh_text(s: &str) -> String {
    s.replace('\\', "")
        .replace('\'', "'\\''")
        .replace('[', "(")
        .replace(']', ")")
        .replace(':', ";")
}

/// `completions/_fiox`.
pub fn zsh() -> String {
    let mut s = String::from(
        "#compdef fiox\n# zsh completion for fiox (generated from fiox's option table; do not edit)\n\n",
    );
    for sub in SUBCOMMANDS {
        s.push_str(&format!("_fiox_{}() {{\n  _arguments -s \\\n", sub.name));
        for f in flags_of(sub.name).unwrap_or_default() {
            let value = match (&f.value, f.choices.as_slice()) {
                (None, _) => String::new(),
                (Some(v), []) => format!(":{}:_files", zsh_text(&v.to_lowercase())),
                (Some(v), c) => format!(":{}:({})", zsh_text(&v.to_lowercase()), c.join(" ")),
            };
            let eq = if f.value.is_some() { "=" } else { "" };
            s.push_str(&format!(
                "    '--{}{eq}[{}]{value}' \\\n",
                f.long,
                zsh_text(&f.help)
            ));
            if let Some(c) = f.short {
                s.push_str(&format!("    '-{c}[{}]{value}' \\\n", zsh_text(&f.help)));
            }
        }
        let nested: Vec<String> = nested_of(sub.name).into_iter().map(|n| n.0).collect();
        if !nested.is_empty() {
            s.push_str(&format!("    '1:command:({})' \\\n", nested.join(" ")));
        }
        s.push_str("    '*:file:_files'\n}\n\n");
    }
    s.push_str("_fiox() {\n  if (( CURRENT > 2 )); then\n    case $words[2] in\n");
    for sub in SUBCOMMANDS {
        s.push_str(&format!(
            "      {0}) shift words; (( CURRENT-- )); _fiox_{0}; return;;\n",
            sub.name
        ));
    }
    s.push_str("    esac\n  fi\n  _arguments -s \\\n");
    for (name, takes, ch, help) in main_words() {
        let value = match (takes, ch.is_empty()) {
            (false, _) => String::new(),
            (true, true) => ":value:_files".to_string(),
            (true, false) => format!(":value:({})", ch.join(" ")),
        };
        let eq = if takes { "=" } else { "" };
        s.push_str(&format!(
            "    '--{name}{eq}[{}]{value}' \\\n",
            zsh_text(&help)
        ));
    }
    let subs: Vec<String> = SUBCOMMANDS
        .iter()
        .map(|c| format!("{}\\:\"{}\"", c.name, zsh_text(c.about).replace('"', "")))
        .collect();
    s.push_str(&format!(
        "    '1:subcommand or job file:(({}))' \\\n    '*:job file:_files'\n}}\n\n_fiox \"$@\"\n",
        subs.join(" ")
    ));
    s
}

/// Text safe inside single quotes for fish.
fn fish_text(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\'', "\\'")
}

/// `completions/fiox.fish`.
pub fn fish() -> String {
    let subs: Vec<&str> = SUBCOMMANDS.iter().map(|s| s.name).collect();
    let not_sub = format!("not __fish_seen_subcommand_from {}", subs.join(" "));
    let mut s = String::from(
        "# fish completion for fiox (generated from fiox's option table; do not edit)\n",
    );
    for sub in SUBCOMMANDS {
        s.push_str(&format!(
            "complete -c fiox -n '__fish_use_subcommand' -a {} -d '{}'\n",
            sub.name,
            fish_text(sub.about)
        ));
        let nested = nested_of(sub.name);
        let names: Vec<&str> = nested.iter().map(|n| n.0.as_str()).collect();
        for (name, about) in &nested {
            s.push_str(&format!(
                "complete -c fiox -n '__fish_seen_subcommand_from {}; and not __fish_seen_subcommand_from {}' -f -a {name} -d '{}'\n",
                sub.name,
                names.join(" "),
                fish_text(about)
            ));
        }
        for f in flags_of(sub.name).unwrap_or_default() {
            let mut line = format!(
                "complete -c fiox -n '__fish_seen_subcommand_from {}' -l {}",
                sub.name, f.long
            );
            if let Some(c) = f.short {
                line.push_str(&format!(" -s {c}"));
            }
            if f.value.is_some() {
                line.push_str(" -r");
            }
            if !f.choices.is_empty() {
                line.push_str(&format!(" -f -a '{}'", f.choices.join(" ")));
            }
            line.push_str(&format!(" -d '{}'\n", fish_text(&f.help)));
            s.push_str(&line);
        }
    }
    for (name, takes, ch, help) in main_words() {
        let mut line = format!("complete -c fiox -n '{not_sub}' -l {name}");
        if takes {
            line.push_str(" -r");
        }
        if !ch.is_empty() {
            line.push_str(&format!(" -f -a '{}'", fish_text(&ch.join(" "))));
        }
        line.push_str(&format!(" -d '{}'\n", fish_text(&help)));
        s.push_str(&line);
    }
    s
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    /// The generated files, by path under the repository root.
    fn files() -> [(&'static str, String); 4] {
        [
            ("docs/fiox.1", man_page()),
            ("completions/fiox.bash", bash()),
            ("completions/_fiox", zsh()),
            ("completions/fiox.fish", fish()),
        ]
    }

    #[test]
    fn man_page_and_completions_are_in_sync() {
        for (rel, want) in files() {
            let path = root().join(rel);
            if std::env::var_os("FIOX_BLESS").is_some() {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &want).unwrap();
            }
            let have = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                have == want,
                "{rel} is out of date; regenerate with FIOX_BLESS=1 cargo test -p fiox --bin fiox man_page_and_completions_are_in_sync"
            );
        }
    }

    #[test]
    fn every_subcommand_has_its_switch_table() {
        for s in SUBCOMMANDS {
            let flags = flags_of(s.name).unwrap_or_default();
            assert!(
                flags.iter().any(|f| f.long == "help"),
                "{}: no switches read from its clap command",
                s.name
            );
        }
        let tb = flags_of("testbed").unwrap();
        let dio = tb.iter().find(|f| f.long == "direct_io").unwrap();
        assert_eq!(dio.help, "loop, fs: the loop device's direct I/O (up)");
        let m = man_page();
        assert!(
            m.contains("\\fBfiox testbed down [OPTIONS] [NAME]...\\fR: Remove the named"),
            "{m}"
        );
        assert!(m.contains("\\fBfiox quick [OPTIONS] [DIR]\\fR\n"));
    }

    #[test]
    fn the_man_page_has_a_section_per_option_group_and_every_option() {
        let m = man_page();
        for cat in categories() {
            assert!(m.contains(&format!(
                ".SH JOB OPTIONS: {}",
                roff(&cat.title().to_uppercase())
            )));
        }
        for d in defs::all() {
            assert!(
                m.contains(&format!(".B \\-\\-{}=", roff(d.name))),
                "{}",
                d.name
            );
        }
        assert!(m.contains(".SS fiox plot") && m.contains(".B \\-\\-html=FILE"));
    }

    fn run(shell: &str, args: &[&str]) -> (bool, String) {
        let o = Command::new(shell)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{shell} ({e}); .ci/run installs bash, zsh and fish"));
        (
            o.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
        )
    }

    /// Complete `line` (words; the last is the one being completed) with the bash script.
    fn bash_complete(words: &[&str]) -> String {
        let script = format!(
            "{}\ncompopt() {{ :; }}\nCOMP_WORDS=({}); COMP_CWORD={}; _fiox; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            bash(),
            words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" "),
            words.len() - 1
        );
        let (ok, out) = run("bash", &["-c", &script]);
        assert!(ok, "{out}");
        out
    }

    #[test]
    fn bash_completes_switches_options_values_and_subcommands() {
        assert!(bash_complete(&["fiox", "--iod"])
            .lines()
            .any(|l| l == "--iodepth="));
        assert!(bash_complete(&["fiox", "--ht"])
            .lines()
            .any(|l| l == "--html="));
        let rw = bash_complete(&["fiox", "--rw", "=", "randr"]);
        assert_eq!(rw.lines().collect::<Vec<_>>(), ["randread", "randrw"]);
        let eng = bash_complete(&["fiox", "--ioengine", "=", "io_"]);
        assert_eq!(eng.trim(), "io_uring");
        assert!(bash_complete(&["fiox", "pl"]).lines().any(|l| l == "plot"));
        assert_eq!(bash_complete(&["fiox", "plot", "--fo"]).trim(), "--format=");
        let fmt = bash_complete(&["fiox", "plot", "--format", "=", ""]);
        assert_eq!(fmt.lines().collect::<Vec<_>>(), ["html", "svg", "png"]);
        assert_eq!(bash_complete(&["fiox", "testbed", "d"]).trim(), "down");
        let fs = bash_complete(&["fiox", "testbed", "up", "fs", "--fs", "=", "x"]);
        assert_eq!(fs.trim(), "xfs");
    }

    #[test]
    fn zsh_and_fish_scripts_parse_and_fish_completes() {
        let dir = std::env::temp_dir().join(format!("fiox-completions-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let z = dir.join("_fiox");
        let f = dir.join("fiox.fish");
        std::fs::write(&z, zsh()).unwrap();
        std::fs::write(&f, fish()).unwrap();
        let (zok, zout) = run("zsh", &["-n", z.to_str().unwrap()]);
        let (fok, fout) = run("fish", &["--no-execute", f.to_str().unwrap()]);
        let probe = format!("source {}; complete -C 'fiox plot --format='", f.display());
        let (cok, cout) = run("fish", &["--no-config", "-c", &probe]);
        let probe = format!("source {}; complete -C 'fiox --rw=randr'", f.display());
        let (rok, rout) = run("fish", &["--no-config", "-c", &probe]);
        let probe = format!("source {}; complete -C 'fiox testbed cl'", f.display());
        let (tok, tout) = run("fish", &["--no-config", "-c", &probe]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(zok, "zsh -n: {zout}");
        assert!(fok, "fish -n: {fout}");
        assert!(cok && cout.contains("--format=svg"), "{cout}");
        assert!(rok && rout.contains("--rw=randread"), "{rout}");
        assert!(tok && tout.starts_with("cleanup\t"), "{tout}");
    }
}
