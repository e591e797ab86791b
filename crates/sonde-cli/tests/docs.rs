//! The docs stay true: the README's Workspace table names exactly the workspace's packages, and
//! every `sonde ...` command line shown in a shell block of the README and `docs/*.md` parses
//! with today's flags (through [`sonde_cli::parse_only`], the parse the binary runs).
//!
//! Both tests read files only: no cargo, no network, no root. A command line that cannot be
//! one parseable command is skipped by a rule named in [`skip_rule`], and printed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The crate names in the first column of the README's Workspace table.
fn workspace_table(readme: &str) -> Vec<String> {
    let mut lines = readme
        .lines()
        .skip_while(|l| l.trim() != "## Workspace")
        .skip(1);
    let table = lines
        .by_ref()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'));
    table
        .filter_map(|row| {
            let cell = row.trim_start_matches('|').split('|').next()?.trim();
            let name = cell.strip_prefix('`')?.strip_suffix('`')?;
            Some(name.to_string())
        })
        .collect()
}

/// The `name` under `[package]` of a Cargo.toml.
fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if let Some(value) = line.strip_prefix("name").map(str::trim_start) {
            if in_package && value.starts_with('=') {
                let value = value.trim_start_matches('=').trim();
                return Some(value.trim_matches('"').to_string());
            }
        }
    }
    None
}

#[test]
fn the_workspace_table_names_every_package_once() {
    let listed = workspace_table(&read(&root().join("README.md")));
    assert!(!listed.is_empty(), "README.md: no `## Workspace` table");
    let mut packages = BTreeSet::new();
    for entry in fs::read_dir(root().join("crates")).unwrap() {
        let manifest = entry.unwrap().path().join("Cargo.toml");
        if manifest.exists() {
            let name = package_name(&read(&manifest))
                .unwrap_or_else(|| panic!("{}: no [package] name", manifest.display()));
            packages.insert(name);
        }
    }
    let table: BTreeSet<String> = listed.iter().cloned().collect();
    let twice: Vec<&String> = table
        .iter()
        .filter(|n| listed.iter().filter(|l| l == n).count() > 1)
        .collect();
    let missing: Vec<&String> = packages.difference(&table).collect();
    let extra: Vec<&String> = table.difference(&packages).collect();
    assert!(
        missing.is_empty() && extra.is_empty() && twice.is_empty(),
        "README.md's Workspace table against crates/*/Cargo.toml:\n  \
         packages without a row: {missing:?}\n  rows without a package: {extra:?}\n  \
         rows given twice: {twice:?}"
    );
}

/// A command line of the docs: where it is, and its words after `sonde`.
struct Shown {
    place: String,
    text: String,
    words: Vec<String>,
    /// Why the line could not be read as shell words (an unclosed quote): a failure.
    unreadable: Option<String>,
}

/// The languages of fenced blocks whose lines are shell: `console` lines are commands only
/// after a `$ ` prompt (the others are output).
fn shell_block(info: &str) -> Option<bool> {
    match info.split_whitespace().next().unwrap_or("") {
        "" | "sh" | "bash" | "shell" => Some(false),
        "console" => Some(true),
        _ => None,
    }
}

/// Every `sonde` command in the shell blocks of one Markdown file, lines ending in `\` joined.
fn shown_commands(file: &str, text: &str) -> Vec<Shown> {
    let mut out = Vec::new();
    // Outside a fence: None; inside: whether it is shell, and then whether it is `console`.
    let mut fence: Option<Option<bool>> = None;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(info) = trimmed.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(shell_block(info)),
            };
            pending = None;
            continue;
        }
        let Some(Some(prompted)) = fence else {
            continue;
        };
        let (start, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
        joined.push_str(trimmed);
        if let Some(head) = joined.strip_suffix('\\') {
            pending = Some((start, format!("{head} ")));
            continue;
        }
        let command = if prompted {
            joined.strip_prefix("$ ").map(str::to_string)
        } else {
            Some(joined.strip_prefix("$ ").unwrap_or(&joined).to_string())
        };
        let Some(command) = command else { continue };
        let place = format!("{file}:{start}");
        out.extend(sonde_pieces(&place, &command));
    }
    out
}

/// Splits a shell line into the commands of its `;`, `&&`, `||` and `|` pieces, with
/// redirections and `# comments` dropped, and keeps those that run sonde.
fn sonde_pieces(place: &str, line: &str) -> Vec<Shown> {
    let words = match shell_words(line) {
        Ok(w) => w,
        Err(e) => {
            return vec![Shown {
                place: place.to_string(),
                text: line.to_string(),
                words: Vec::new(),
                unreadable: Some(e),
            }]
        }
    };
    let mut out = Vec::new();
    for piece in words.split(|w| matches!(w, Word::Separator)) {
        let mut plain = Vec::new();
        let mut redirect = false;
        for w in piece {
            match w {
                Word::Redirect => redirect = true,
                Word::Text(_) if redirect => redirect = false,
                Word::Text(t) => plain.push(t.clone()),
                Word::Separator => {}
            }
        }
        if let Some(rest) = after_sonde(&plain) {
            out.push(Shown {
                place: place.to_string(),
                text: plain.join(" "),
                words: rest,
                unreadable: None,
            });
        }
    }
    out
}

/// The words after `sonde` (or after `cargo run --release -p sonde --`, which runs it), past
/// `sudo`, `VAR=value` and a loop's `do`.
fn after_sonde(words: &[String]) -> Option<Vec<String>> {
    let lead = words
        .iter()
        .take_while(|w| matches!(w.as_str(), "sudo" | "do" | "then") || is_assignment(w))
        .count();
    let words = &words[lead..];
    let cargo = ["cargo", "run", "--release", "-p", "sonde", "--"];
    if words.first().map(String::as_str) == Some("sonde") {
        Some(words[1..].to_vec())
    } else if words.starts_with(&cargo.map(String::from)) {
        Some(words[cargo.len()..].to_vec())
    } else {
        None
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
    })
}

#[derive(Debug, PartialEq)]
enum Word {
    Text(String),
    /// `;`, `&&`, `||`, `|`, `&`: the next command starts.
    Separator,
    /// `>`, `>>`, `<`, `2>`: the next word is a file, not an argument.
    Redirect,
}

/// Shell words by the simple rules: blanks separate, `'...'` is literal, `"..."` keeps blanks
/// (a backslash escapes the next character), `#` at a word's start begins a comment, and a
/// `<name>` word is a placeholder, not a redirection. A `$` is kept as written, for
/// [`skip_rule`] to see.
fn shell_words(line: &str) -> Result<Vec<Word>, String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            ' ' | '\t' => out.extend(word.take().map(Word::Text)),
            '#' if word.is_none() => break,
            '<' if word.is_none() && placeholder_len(&chars[i..]).is_some() => {
                let n = placeholder_len(&chars[i..]).unwrap_or(0);
                word = Some(chars[i - 1..i + n].iter().collect());
                i += n;
            }
            ';' | '&' | '|' | '>' | '<' => {
                if c == '>' && word.as_deref() == Some("2") {
                    word = None;
                }
                out.extend(word.take().map(Word::Text));
                let next = chars.get(i).copied();
                if next == Some(c) || (c == '>' && next == Some('&')) {
                    i += 1;
                }
                out.push(if matches!(c, '>' | '<') {
                    Word::Redirect
                } else {
                    Word::Separator
                });
            }
            '\'' | '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    let Some(&q) = chars.get(i) else {
                        return Err(format!("unclosed {c}"));
                    };
                    i += 1;
                    if q == c {
                        break;
                    } else if q == '\\' && c == '"' {
                        w.extend(chars.get(i).copied());
                        i += 1;
                    } else {
                        w.push(q);
                    }
                }
            }
            '\\' => {
                word.get_or_insert_with(String::new)
                    .extend(chars.get(i).copied());
                i += 1;
            }
            other => word.get_or_insert_with(String::new).push(other),
        }
    }
    out.extend(word.map(Word::Text));
    Ok(out)
}

/// After a `<`: the length of `name>` when the word is a placeholder such as `<host>`.
fn placeholder_len(rest: &[char]) -> Option<usize> {
    let end = rest.iter().position(|c| *c == '>')?;
    let name = &rest[..end];
    let ends_word = !matches!(rest.get(end + 1), Some(c) if !c.is_whitespace());
    let plain = name
        .iter()
        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '/'));
    (end > 0 && ends_word && plain).then_some(end + 1)
}

/// Why a shown command cannot be parsed as one command line, if it cannot: the only rules
/// by which a line is skipped.
fn skip_rule(words: &[String]) -> Option<&'static str> {
    if words.iter().any(|w| w.contains("...") || w.contains('…')) {
        return Some("an ellipsis stands for more words");
    }
    if words.iter().any(|w| w.contains('$') || w.contains('`')) {
        return Some("a shell expansion ($VAR, `cmd`) has no value here");
    }
    let flag_placeholder = words.iter().enumerate().any(|(i, w)| {
        let placeholder = w.starts_with('<') && w.ends_with('>') && w.len() > 2;
        let is_value = i > 0 && words[i - 1].starts_with('-') && !words[i - 1].contains('=');
        placeholder && !is_value
    });
    if flag_placeholder {
        return Some("a <placeholder> stands where flags or arguments go");
    }
    None
}

fn doc_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files.insert(0, root().join("README.md"));
    files
}

#[test]
fn every_command_line_in_the_docs_parses() {
    let mut shown = Vec::new();
    for path in doc_files() {
        let name = path
            .strip_prefix(root())
            .unwrap_or(&path)
            .display()
            .to_string();
        shown.extend(shown_commands(&name, &read(&path)));
    }
    let (mut parsed, mut skipped, mut failures) = (0, 0, Vec::new());
    for s in &shown {
        if let Some(e) = &s.unreadable {
            failures.push(format!("{}: {}\n    {e}", s.place, s.text));
            continue;
        }
        if let Some(rule) = skip_rule(&s.words) {
            skipped += 1;
            println!("skipped {}: {} ({rule})", s.place, s.text);
            continue;
        }
        let mut argv = vec!["sonde".to_string()];
        argv.extend(s.words.iter().cloned());
        match sonde_cli::parse_only(&argv) {
            Ok(()) => parsed += 1,
            Err(e) => failures.push(format!("{}: {}\n    {}", s.place, s.text, e.trim())),
        }
    }
    println!("{parsed} command lines parsed, {skipped} skipped");
    assert!(
        failures.is_empty(),
        "{} of the docs' command lines do not parse:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The extraction itself must not rot into finding nothing.
    assert!(
        parsed >= 50,
        "only {parsed} command lines found in the docs"
    );
}

#[test]
fn shell_lines_split_as_the_docs_need() {
    let pieces = sonde_pieces(
        "x:1",
        "sonde lab show mesh > m.toml; sonde lab run m.toml --out 'a b/' # a comment",
    );
    let words: Vec<&Vec<String>> = pieces.iter().map(|s| &s.words).collect();
    assert_eq!(
        words,
        [
            &["lab", "show", "mesh"][..],
            &["lab", "run", "m.toml", "--out", "a b/"]
        ]
    );
    let quoted = sonde_pieces(
        "x:2",
        "sudo sonde agent --store 'postgres://h/db?a=1&b=2' 2>&1 | tee log",
    );
    assert_eq!(
        quoted[0].words,
        ["agent", "--store", "postgres://h/db?a=1&b=2"]
    );
    assert_eq!(quoted.len(), 1);
    let cargo = sonde_pieces("x:3", "cargo run --release -p sonde -- demo -t 1");
    assert_eq!(cargo[0].words, ["demo", "-t", "1"]);
    assert!(sonde_pieces("x:4", "iperf3 -c host").is_empty());
    let joined = shown_commands("x", "```sh\nsonde client HOST \\\n  -t 3\n```\n");
    assert_eq!(
        (joined[0].place.as_str(), &joined[0].words[..]),
        ("x:2", &["client", "HOST", "-t", "3"].map(String::from)[..])
    );
    let console = shown_commands("x", "```console\n$ sonde -v\nsonde 0.1.0 (abc)\n```\n");
    assert_eq!(console.len(), 1);
    let toml = shown_commands(
        "x",
        "```toml\na = 1\n```\nsonde's prose\n```\nsonde -v\n```\n",
    );
    assert_eq!(
        toml.iter().map(|s| s.place.as_str()).collect::<Vec<_>>(),
        ["x:6"]
    );
    assert!(sonde_pieces("x:5", "sonde client 'HOST")[0]
        .unreadable
        .is_some());
    let placeholder = sonde_pieces("x:6", "sonde client <host> -t 3 < in > out");
    assert_eq!(placeholder[0].words, ["client", "<host>", "-t", "3"]);
    let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    assert!(skip_rule(&words("client HOST -t ...")).is_some());
    assert!(skip_rule(&words("client HOST <flags>")).is_some());
    assert!(skip_rule(&words("client <host> -t 3")).is_some());
    assert!(skip_rule(&words("client HOST -B <addr>")).is_none());
    assert!(skip_rule(&words("client [::1] -t 3")).is_none());
}
