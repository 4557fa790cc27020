//! Desktop entries (the freedesktop.org Desktop Entry Specification): finding one by its
//! id in the XDG data directories and turning its `Exec` key into a program and
//! arguments, without a shell.

use std::path::{Path, PathBuf};

use super::Resolved;
use super::path;

/// The `[Desktop Entry]` keys a launch needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Entry {
    pub file: PathBuf,
    pub kind: String,
    pub exec: Option<String>,
    pub hidden: bool,
    pub terminal: bool,
}

/// `$XDG_DATA_HOME` then `$XDG_DATA_DIRS`, each with `applications/`.
fn dirs() -> Vec<PathBuf> {
    let home = std::env::var_os("XDG_DATA_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".local/share")));
    let data = std::env::var("XDG_DATA_DIRS")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    home.into_iter()
        .chain(data.split(':').filter(|d| !d.is_empty()).map(PathBuf::from))
        .map(|d| d.join("applications"))
        .collect()
}

/// Where entries are looked for, for messages.
pub(super) fn dirs_text() -> String {
    dirs()
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The entry with this id, from the first directory that has it.
pub(super) fn find(id: &str) -> Option<Entry> {
    dirs().into_iter().find_map(|d| {
        let file = d.join(format!("{id}.desktop"));
        let text = std::fs::read_to_string(&file).ok()?;
        Some(parse(file, &text))
    })
}

/// Reads the `[Desktop Entry]` group.
fn parse(file: PathBuf, text: &str) -> Entry {
    let mut e = Entry {
        file,
        ..Entry::default()
    };
    let mut in_group = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_group = line == "[Desktop Entry]";
            continue;
        }
        if !in_group || line.starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim();
        match k.trim() {
            "Type" => e.kind = v.into(),
            "Exec" => e.exec = Some(unescape_value(v)),
            "Hidden" => e.hidden = v == "true",
            "Terminal" => e.terminal = v == "true",
            _ => {}
        }
    }
    e
}

/// The value escapes every string key has (`\s`, `\n`, `\t`, `\r`, `\\`).
fn unescape_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut it = v.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('s') => out.push(' '),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some(o) => {
                // Left for the Exec quoting rules (`\"`, `\$`…) to read.
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Splits an `Exec` value into words: spaces separate them, double quotes group, and
/// inside quotes a backslash escapes `"`, `` ` ``, `$` and `\`.
fn split_exec(exec: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut started = false;
    let mut it = exec.chars();
    while let Some(c) = it.next() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            '\\' if quoted => match it.next() {
                Some(e @ ('"' | '`' | '$' | '\\')) => cur.push(e),
                Some(o) => {
                    cur.push('\\');
                    cur.push(o);
                }
                None => return Err("Exec ends inside an escape".into()),
            },
            ' ' | '\t' if !quoted => {
                if started || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                started = false;
            }
            c => cur.push(c),
        }
    }
    if quoted {
        return Err("Exec has an unterminated quote".into());
    }
    if started || !cur.is_empty() {
        words.push(cur);
    }
    Ok(words)
}

/// The program and arguments an entry starts, with `args` where its field code for
/// files or URLs stands (`%f`, `%F`, `%u`, `%U`); the other field codes are dropped.
pub(super) fn command(e: &Entry, args: &[String]) -> Result<Resolved, String> {
    let name = e.file.display();
    if e.hidden {
        return Err(format!("{name} is hidden (Hidden=true)"));
    }
    if e.kind != "Application" {
        return Err(format!("{name} is not an application (Type={})", e.kind));
    }
    if e.terminal {
        return Err(format!(
            "{name} runs in a terminal (Terminal=true): launch a terminal with it instead"
        ));
    }
    let exec = e
        .exec
        .as_deref()
        .ok_or_else(|| format!("{name} has no Exec key"))?;
    let words = split_exec(exec).map_err(|m| format!("{name}: {m}"))?;
    let mut out = Vec::new();
    let mut placed = false;
    for w in words {
        if matches!(w.as_str(), "%f" | "%F" | "%u" | "%U") {
            if !placed {
                out.extend(args.iter().cloned());
                placed = true;
            }
            continue;
        }
        let w = strip_codes(&w);
        if !w.is_empty() {
            out.push(w);
        }
    }
    if !placed && !args.is_empty() {
        return Err(format!(
            "{name} takes no files or URLs (its Exec has no %f, %F, %u or %U): launch it without args"
        ));
    }
    if out.is_empty() {
        return Err(format!("{name}: Exec names no program"));
    }
    let program = out.remove(0);
    let program = if program.contains('/') {
        PathBuf::from(&program)
    } else {
        path::find(&program)
            .ok_or_else(|| format!("{name} runs {program:?}, which is not on PATH"))?
    };
    if !path::is_executable(&program) {
        return Err(format!(
            "{name} runs {}, which is not an executable file",
            program.display()
        ));
    }
    Ok(Resolved { program, args: out })
}

/// Removes field codes inside a word (`%%` is a literal percent sign).
fn strip_codes(w: &str) -> String {
    let mut out = String::with_capacity(w.len());
    let mut it = w.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if let Some('%') = it.next() {
            out.push('%');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> Entry {
        parse(PathBuf::from("/x/t.desktop"), text)
    }

    #[test]
    fn exec_words_quotes_escapes_and_field_codes() {
        assert_eq!(
            split_exec(r#"sh -c "echo \"hi\" \$HOME" %U"#).unwrap(),
            vec!["sh", "-c", "echo \"hi\" $HOME", "%U"]
        );
        assert!(split_exec("a \"b").is_err());
        let e = entry(
            "# c\n[Desktop Entry]\nType=Application\nName=Sh\nExec=sh -e %U --name=%c 100%%\n[Desktop Action x]\nExec=other\n",
        );
        let r = command(&e, &["a b".into(), "c".into()]).unwrap();
        assert!(r.program.ends_with("sh"));
        assert_eq!(r.args, vec!["-e", "a b", "c", "--name=", "100%"]);
        // Without a file code, arguments are refused rather than guessed.
        let e = entry("[Desktop Entry]\nType=Application\nExec=sh -e\n");
        assert_eq!(command(&e, &[]).unwrap().args, vec!["-e"]);
        assert!(
            command(&e, &["x".into()])
                .unwrap_err()
                .contains("takes no files")
        );
    }

    #[test]
    fn entries_that_cannot_be_launched_say_why() {
        let cases = [
            (
                "[Desktop Entry]\nType=Link\nExec=sh\n",
                "not an application",
            ),
            (
                "[Desktop Entry]\nType=Application\nHidden=true\nExec=sh\n",
                "hidden",
            ),
            (
                "[Desktop Entry]\nType=Application\nTerminal=true\nExec=sh\n",
                "terminal",
            ),
            ("[Desktop Entry]\nType=Application\n", "no Exec"),
            (
                "[Desktop Entry]\nType=Application\nExec=no-such-prog-123\n",
                "not on PATH",
            ),
            (
                "[Desktop Entry]\nType=Application\nExec=/etc\n",
                "not an executable",
            ),
            (
                "[Desktop Entry]\nType=Application\nExec=%U\n",
                "names no program",
            ),
        ];
        for (text, why) in cases {
            let e = command(&entry(text), &[]).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
        assert_eq!(unescape_value(r"a\sb\\c\$"), r"a b\c\$");
    }
}
