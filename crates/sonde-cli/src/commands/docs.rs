//! `sonde completions SHELL` and `sonde man`: shell completions and the man pages, generated
//! from the same flag definitions the parser uses, so they cannot drift from the CLI.
//!
//! A man page comes in two forms. Printed (`sonde man`, `sonde man client`), a page stands
//! alone: the subcommands below it are sections of its own, each with its synopsis and every
//! option, and it names no other page, since none may be installed beside it. Written as a set
//! (`sonde man --dir DIR`), there is `sonde.1` and a page per subcommand at every level
//! (`sonde-lab.1`, `sonde-lab-run.1`): each lists its subcommands' pages and names its parent's
//! under SEE ALSO, and every page it names is in the set.

use super::exit;
use crate::flags::parse::command;
use crate::flags::ManArgs;
use clap::Command;
use clap_mangen::Man;
use std::io::{self, Write};
use std::path::Path;

/// Prints the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> i32 {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut command(), "sonde", &mut buf);
    write_out(&buf)
}

/// Prints one page (the whole of sonde, or the subcommand `a.command` names), or writes the
/// set of pages into `a.dir`.
pub fn man(a: &ManArgs) -> i32 {
    let top = man_command();
    if let Some(dir) = &a.dir {
        return match std::fs::create_dir_all(dir).and_then(|()| write_pages(&top, dir, None)) {
            Ok(()) => exit::OK,
            Err(e) => {
                eprintln!(
                    "sonde: error - cannot write the man pages into {}: {e}",
                    dir.display()
                );
                exit::FAILED
            }
        };
    }
    let cmd = match find(&top, &a.command) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
    };
    let mut buf = Vec::new();
    if let Err(e) = page_alone(cmd, &mut buf) {
        eprintln!("sonde: error - cannot render the man page: {e}");
        return exit::FAILED;
    }
    write_out(&preamble_once(&buf))
}

/// The command the pages describe: built, so that every subcommand knows its full name
/// (`sonde lab run`, page `sonde-lab-run`), and without `help`, which has no page.
fn man_command() -> Command {
    let mut cmd = command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The subcommand at `path` (`["lab", "run"]`) below `top`.
fn find<'a>(top: &'a Command, path: &[String]) -> Result<&'a Command, String> {
    let mut cmd = top;
    for name in path {
        cmd = cmd.find_subcommand(name).ok_or_else(|| {
            let known: Vec<&str> = visible(cmd).map(Command::get_name).collect();
            format!(
                "{} has no subcommand {name:?}; it has: {}",
                cmd.get_bin_name().unwrap_or(cmd.get_name()),
                known.join(", ")
            )
        })?;
    }
    Ok(cmd)
}

fn visible(cmd: &Command) -> impl Iterator<Item = &Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set())
}

/// A page of `cmd` for the man pages of sonde's version.
fn man_page(cmd: &Command) -> Man {
    Man::new(cmd.clone()).source(format!("sonde {}", env!("CARGO_PKG_VERSION")))
}

/// `cmd`'s page with the subcommands below it as sections of its own (see the module docs).
fn page_alone(cmd: &Command, w: &mut Vec<u8>) -> io::Result<()> {
    let man = man_page(cmd);
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(w)?;
    }
    if cmd.get_after_help().is_some() {
        man.render_extra_section(w)?;
    }
    for sub in visible(cmd) {
        inline_section(sub, w)?;
    }
    if cmd.get_version().is_some() {
        man.render_version_section(w)?;
    }
    Ok(())
}

/// `sub` as a section of the page being written: its description, synopsis and options
/// (clap_mangen's sections, one level down), then its own subcommands the same way.
fn inline_section(sub: &Command, w: &mut Vec<u8>) -> io::Result<()> {
    let man = man_page(sub);
    let name = sub.get_bin_name().unwrap_or(sub.get_name());
    writeln!(w, ".SH \"{}\"", name.to_uppercase())?;
    let mut part = Vec::new();
    man.render_description_section(&mut part)?;
    // Its text, without the heading: the section's own heading says whose it is.
    let lines = part.split_inclusive(|&b| b == b'\n');
    w.extend(lines.filter(|l| !l.starts_with(b".SH ")).flatten());
    let mut part = Vec::new();
    man.render_synopsis_section(&mut part)?;
    if sub.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut part)?;
    }
    if sub.get_after_help().is_some() {
        man.render_extra_section(&mut part)?;
    }
    w.extend(demoted(&part));
    for s in visible(sub) {
        inline_section(s, w)?;
    }
    Ok(())
}

/// `roff` with the lines that clap_mangen opens each rendered part with (the definition of
/// `\*(Aq`) kept only where they first appear.
fn preamble_once(roff: &[u8]) -> Vec<u8> {
    let mut seen: Vec<&[u8]> = Vec::new();
    let mut out = Vec::with_capacity(roff.len());
    for line in roff.split_inclusive(|&b| b == b'\n') {
        let preamble = line.starts_with(b".ie \\n(.g .ds Aq") || line.starts_with(b".el .ds Aq");
        if preamble && seen.contains(&line) {
            continue;
        }
        if preamble {
            seen.push(line);
        }
        out.extend_from_slice(line);
    }
    out
}

/// Roff with every section heading (`.SH`) made a subsection heading (`.SS`).
fn demoted(roff: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(roff.len());
    for line in roff.split_inclusive(|&b| b == b'\n') {
        match line.strip_prefix(b".SH ") {
            Some(rest) => {
                out.extend_from_slice(b".SS ");
                out.extend_from_slice(rest);
            }
            None => out.extend_from_slice(line),
        }
    }
    out
}

/// Writes `cmd`'s page into `dir` (clap_mangen's page, which lists its subcommands' pages,
/// and SEE ALSO `parent`'s), then its subcommands' pages.
fn write_pages(cmd: &Command, dir: &Path, parent: Option<&str>) -> io::Result<()> {
    let man = man_page(cmd);
    let mut page = Vec::new();
    man.render(&mut page)?;
    if let Some(p) = parent {
        writeln!(
            page,
            ".SH \"SEE ALSO\"\n\\fB{}\\fR(1)",
            p.replace('-', "\\-")
        )?;
    }
    std::fs::write(dir.join(man.get_filename()), page)?;
    let name = cmd.get_display_name().unwrap_or(cmd.get_name());
    for sub in visible(cmd) {
        write_pages(sub, dir, Some(name))?;
    }
    Ok(())
}

fn write_out(bytes: &[u8]) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => exit::OK,
        Err(e) => {
            crate::output::write_failed(&e);
            exit::FAILED
        }
    }
}
