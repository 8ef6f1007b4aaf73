//! Which external programs the tests run, read from their source text: the names given to
//! `Command::new`, to the harness's `sh`/`sh_in`/`require_tool`, and to any helper function that
//! passes one of its parameters on to those (`fn image(.., cmd: &str, ..) { Command::new(cmd) }`
//! called as `image(.., "mkfs.xfs", ..)`), either as a string literal or through a variable bound
//! to literals in the same file (`let tool = "mkfs.xfs";`, `for tool in ["a", "b"]`,
//! `const TOOLS: &[&str] = &[..]`), or built by `format!` from those or from the literal
//! patterns of the match arm it sits in (`"ext2" | "ext4" => run(&format!("mkfs.{kind}"))`: a
//! placeholder it cannot expand stays in the name, which the check then reports). A lexical
//! scan, not a parser: it over-approximates where a name is bound twice, which at worst asks for
//! a package the tests do not need.

use std::collections::BTreeMap;

/// A runner: a function name and the index of the argument that names the program.
pub type Runners = BTreeMap<String, usize>;

/// The runners every test file sees (the harness's and std's).
pub fn base_runners() -> Runners {
    [
        ("Command::new", 0),
        ("sh", 0),
        ("sh_in", 1),
        ("require_tool", 0),
    ]
    .into_iter()
    .map(|(n, k)| (n.to_string(), k))
    .collect()
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The text of the bracketed group opening at byte `open` (one of `([{`), without the brackets,
/// string literals skipped over; None when it never closes.
fn group(text: &str, open: usize) -> Option<&str> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in text[open..].char_indices() {
        if in_str {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => escaped = false,
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[open + 1..open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The top-level comma-separated pieces of `args` (the inside of a call's parentheses).
fn split_args(args: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut angle, mut in_str, mut escaped, mut start) = (0i32, 0i32, false, false, 0);
    let b = args.as_bytes();
    for (i, c) in args.char_indices() {
        if in_str {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => escaped = false,
            }
            continue;
        }
        let prev = if i > 0 { b[i - 1] } else { b' ' };
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            // A generic's angle brackets (`Vec<u8>`), not a shift or a comparison.
            '<' if prev.is_ascii_alphanumeric() => angle += 1,
            '>' if angle > 0 && prev != b'-' && prev != b'=' => angle -= 1,
            ',' if depth == 0 && angle == 0 => {
                out.push(args[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !args[start..].trim().is_empty() {
        out.push(args[start..].trim());
    }
    out
}

/// Every string literal in `s`, in order.
fn literals_in(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(a) = rest.find('"') {
        let after = &rest[a + 1..];
        let Some(b) = after.find('"') else { break };
        out.push(after[..b].to_string());
        rest = &after[b + 1..];
    }
    out
}

/// Where `name(` is called in `text` (not defined, not a method or a longer name's tail):
/// the byte index of each call's opening parenthesis.
fn calls(text: &str, name: &str) -> Vec<usize> {
    let pat = format!("{name}(");
    text.match_indices(&pat)
        .map(|(i, _)| i)
        .filter(|&i| {
            let before = text[..i].chars().next_back().unwrap_or(' ');
            let defined = text[..i].trim_end().ends_with("fn");
            !is_ident(before) && before != '.' && !defined
        })
        .map(|i| i + name.len())
        .collect()
}

/// The literals `ident` is bound to in `text`: `let`/`const`/`static` bindings whose value is
/// made of literals only (a literal, an array, an if/else of literals), and `for ident in`
/// over an array of literals or over another such binding.
fn bound_literals(text: &str, ident: &str, depth: u32) -> Vec<String> {
    let mut out = Vec::new();
    for kw in ["let ", "let mut ", "const ", "static "] {
        let pat = format!("{kw}{ident}");
        for (i, _) in text.match_indices(&pat) {
            let rest = &text[i + pat.len()..];
            if !rest.starts_with([' ', ':', '=']) || text[..i].ends_with(|c: char| is_ident(c)) {
                continue;
            }
            let Some(eq) = rest.find('=') else { continue };
            let rhs = &rest[eq + 1..rest.find(';').unwrap_or(rest.len())];
            let mut bare = rhs.to_string();
            for l in literals_in(rhs) {
                bare = bare.replacen(&format!("\"{l}\""), "", 1);
            }
            if let Some(inner) = format_args_of(rhs) {
                out.extend(format_programs(text, i, inner));
            } else if !bare.contains(['(', '!', '.']) && !bare.contains("=>") {
                out.extend(literals_in(rhs));
            }
        }
    }
    let pat = format!("for {ident} in ");
    for (i, _) in text.match_indices(&pat) {
        let rest = &text[i + pat.len()..];
        let iter = rest[..rest.find('{').unwrap_or(rest.len())].trim();
        let iter = iter.trim_start_matches('&');
        if iter.starts_with('[') {
            out.extend(literals_in(iter));
        } else if depth < 2 && iter.chars().all(is_ident) && !iter.is_empty() {
            out.extend(bound_literals(text, iter, depth + 1));
        }
    }
    out
}

/// The programs an argument at byte `at` of `text` names: a literal, a variable bound to
/// literals in `text`, or a `format!` of those (see [`format_programs`]).
fn arg_programs(text: &str, at: usize, arg: &str) -> Vec<String> {
    let arg = arg.trim().trim_start_matches('&');
    if let Some(lit) = arg.strip_prefix('"').and_then(|a| a.strip_suffix('"')) {
        return vec![lit.to_string()];
    }
    if let Some(inner) = format_args_of(arg) {
        return format_programs(text, at, inner);
    }
    if !arg.is_empty() && arg.chars().all(is_ident) {
        return bound_literals(text, arg, 0);
    }
    Vec::new()
}

/// The inside of `format!(..)` when `expr` is one (`&` and a trailing `.as_str()` aside).
fn format_args_of(expr: &str) -> Option<&str> {
    let expr = expr.trim().trim_start_matches('&');
    let rest = expr.strip_prefix("format!")?.trim_start();
    let inner = group(rest, rest.find('(')?)?;
    let tail = rest[inner.len() + 2..].trim();
    (tail.is_empty() || tail == ".as_str()").then_some(inner)
}

/// The names a `format!` (its arguments `inner`, at byte `at` of `text`) can make: the template
/// with each placeholder (`{kind}`, `{}`, `{0}`, `{kind:?}` aside) replaced by every literal its
/// value can be: a literal argument, or a variable bound to literals in `text` or matched
/// against literal patterns by the arm the call sits in (`match kind { "ext2" | "ext4" =>
/// run(&format!("mkfs.{kind}"), ..) }`). A placeholder with no known value stays as written
/// (`mkfs.{kind}`), so that the package-list check reports the name instead of missing it.
fn format_programs(text: &str, at: usize, inner: &str) -> Vec<String> {
    let args = split_args(inner);
    let Some(template) = args
        .first()
        .and_then(|t| t.strip_prefix('"'))
        .and_then(|t| t.strip_suffix('"'))
    else {
        return Vec::new();
    };
    let mut names = vec![String::new()];
    let (mut rest, mut next_positional) = (template, 1usize);
    while !rest.is_empty() {
        let Some(open) = rest.find(['{', '}']) else {
            names.iter_mut().for_each(|n| n.push_str(rest));
            break;
        };
        names.iter_mut().for_each(|n| n.push_str(&rest[..open]));
        rest = &rest[open..];
        // `{{` and `}}` are a brace of the text.
        let escaped = rest.starts_with("{{") || rest.starts_with("}}");
        if escaped || rest.starts_with('}') {
            names.iter_mut().for_each(|n| n.push_str(&rest[..1]));
            rest = &rest[if escaped { 2 } else { 1 }..];
            continue;
        }
        let Some(close) = rest.find('}') else { break };
        let key = rest[1..close].split(':').next().unwrap_or("").trim();
        let value = if key.is_empty() {
            next_positional += 1;
            args.get(next_positional - 1).map(|a| a.to_string())
        } else if let Ok(k) = key.parse::<usize>() {
            args.get(k + 1).map(|a| a.to_string())
        } else {
            // A named argument (`kind = expr`), else the variable of that name.
            let named = args[1..].iter().find_map(|a| {
                let (n, v) = a.split_once('=')?;
                (n.trim() == key && !v.starts_with('=')).then(|| v.trim().to_string())
            });
            Some(named.unwrap_or_else(|| key.to_string()))
        };
        let value = value.unwrap_or_default();
        let value = value.trim().trim_start_matches('&');
        let values = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            Some(lit) => vec![lit.to_string()],
            None => placeholder_values(text, at, value),
        };
        let values = if values.is_empty() {
            vec![rest[..=close].to_string()]
        } else {
            values
        };
        names = names
            .iter()
            .flat_map(|n| values.iter().map(move |v| format!("{n}{v}")))
            .collect();
        rest = &rest[close + 1..];
    }
    names
}

/// The literals variable `ident` can hold at byte `at` of `text`: the literal patterns of the
/// match arm `at` is in when the nearest `match` before it is on `ident`, else its bindings.
fn placeholder_values(text: &str, at: usize, ident: &str) -> Vec<String> {
    if ident.is_empty() || !ident.chars().all(is_ident) {
        return Vec::new();
    }
    let before = &text[..at];
    if let Some(m) = before.rfind("match ") {
        let scrutinee = before[m + 6..].split('{').next().unwrap_or("").trim();
        let scrutinee = scrutinee
            .trim_start_matches('&')
            .trim_end_matches(".as_str()");
        let line = &before[before.rfind('\n').map_or(0, |l| l + 1)..];
        if scrutinee == ident {
            if let Some((pattern, _)) = line.split_once("=>") {
                let mut bare = pattern.to_string();
                let lits = literals_in(pattern);
                for l in &lits {
                    bare = bare.replacen(&format!("\"{l}\""), "", 1);
                }
                if !lits.is_empty() && bare.chars().all(|c| c == '|' || c.is_whitespace()) {
                    return lits;
                }
            }
        }
    }
    bound_literals(text, ident, 0)
}

/// `text` without `//` comments and with the char literal `'"'` made harmless, so that quotes
/// pair up as string literals.
pub fn sanitize(text: &str) -> String {
    // Raw strings (job files, scripts) may hold unpaired quotes: their contents are dropped.
    let mut text = text.to_string();
    while let Some(a) = text.find("r#\"") {
        let Some(b) = text[a + 3..].find("\"#").map(|b| a + 3 + b) else {
            break;
        };
        text.replace_range(a..b + 2, "\"\"");
    }
    let mut out = String::with_capacity(text.len());
    for line in text.replace("'\"'", "'q'").replace("'\\\"'", "'q'").lines() {
        let (mut in_str, mut escaped, mut cut) = (false, false, line.len());
        let b = line.as_bytes();
        for (i, &c) in b.iter().enumerate() {
            if in_str {
                match (escaped, c) {
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_str = false,
                    _ => escaped = false,
                }
            } else if c == b'"' {
                in_str = true;
            } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
                cut = i;
                break;
            }
        }
        out.push_str(&line[..cut]);
        out.push('\n');
    }
    out
}

/// The functions of `text` that hand one of their parameters to a runner, added to `runners`;
/// repeated until nothing changes (a helper calling a helper).
pub fn add_runners(text: &str, runners: &mut Runners) {
    let text = &sanitize(text);
    loop {
        let mut added = false;
        for (i, _) in text.match_indices("fn ") {
            if text[..i].ends_with(|c: char| is_ident(c)) {
                continue;
            }
            let rest = &text[i + 3..];
            let name_len = rest.find(|c: char| !is_ident(c)).unwrap_or(0);
            let name = &rest[..name_len];
            if name.is_empty() || runners.contains_key(name) {
                continue;
            }
            let Some(p) = rest.find('(') else { continue };
            let Some(params) = group(rest, p) else {
                continue;
            };
            let after = p + params.len() + 2;
            let Some(b) = rest[after..].find('{').map(|b| after + b) else {
                continue;
            };
            let body = group(rest, b).unwrap_or("");
            let names: Vec<&str> = split_args(params)
                .iter()
                .map(|a| a.split(':').next().unwrap_or("").trim())
                .map(|a| a.trim_start_matches("mut ").trim())
                .collect();
            for (k, param) in names.iter().enumerate() {
                if param.is_empty() || !param.chars().all(is_ident) {
                    continue;
                }
                let hands_on = runners.iter().any(|(r, &rk)| {
                    calls(body, r).into_iter().any(|open| {
                        let args = group(body, open).map(split_args).unwrap_or_default();
                        args.get(rk)
                            .is_some_and(|a| a.trim_start_matches('&').trim() == *param)
                    })
                });
                if hands_on {
                    runners.insert(name.to_string(), k);
                    added = true;
                    break;
                }
            }
        }
        if !added {
            return;
        }
    }
}

/// The programs `text` runs through `runners` (its own helpers added first).
pub fn programs_in(text: &str, runners: &Runners) -> Vec<String> {
    let text = &sanitize(text);
    let mut runners = runners.clone();
    add_runners(text, &mut runners);
    let mut found = Vec::new();
    for (r, &k) in &runners {
        for open in calls(text, r) {
            let Some(args) = group(text, open) else {
                continue;
            };
            if let Some(arg) = split_args(args).get(k) {
                found.extend(arg_programs(text, open, arg));
            }
        }
    }
    found
}
