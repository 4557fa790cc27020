//! Naming applications and finding them, without a desktop.

/// The application id of a process: its executable's file name, lowercased
/// (`C:\Windows\System32\notepad.exe` → `notepad.exe`), as window rules match it.
pub fn from_image_path(path: &str) -> String {
    path.rsplit(['\\', '/'])
        .next()
        .unwrap_or(path)
        .to_lowercase()
}

/// The executable `app` names, looked up in the directories of `path` (`PATH`, split on
/// `;`), `.exe` added when missing; `exists` says whether a candidate file exists.
/// `app` is one name, never a path or a command line; batch files are refused since
/// Windows runs them through `cmd.exe`, a shell.
pub fn resolve(app: &str, path: &str, exists: impl Fn(&str) -> bool) -> Result<String, String> {
    if app.is_empty() {
        return Err("the application name is empty".into());
    }
    if app.contains(['\\', '/', ':']) {
        return Err(format!(
            "{app:?} is a path: name an executable on PATH (notepad, calc.exe)"
        ));
    }
    if app
        .chars()
        .any(|c| c.is_whitespace() || "\"&|<>^%".contains(c))
    {
        return Err(format!(
            "{app:?} looks like a command line: name one executable, arguments go in args"
        ));
    }
    let lower = app.to_ascii_lowercase();
    if lower.ends_with(".bat") || lower.ends_with(".cmd") {
        return Err(format!(
            "{app:?} is a batch file, which runs through a shell: name an executable"
        ));
    }
    let file = if lower.ends_with(".exe") {
        app.to_string()
    } else {
        format!("{app}.exe")
    };
    path.split(';')
        .map(|d| d.trim().trim_end_matches(['\\', '/']))
        .filter(|d| !d.is_empty())
        .map(|d| format!("{d}\\{file}"))
        .find(|p| exists(p))
        .ok_or_else(|| format!("no executable {file:?} on PATH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_app_id_is_the_executable_name() {
        assert_eq!(
            from_image_path(r"C:\Windows\System32\NOTEPAD.EXE"),
            "notepad.exe"
        );
        assert_eq!(from_image_path("calc.exe"), "calc.exe");
        assert_eq!(from_image_path("/usr/lib/wine/x.exe"), "x.exe");
    }

    #[test]
    fn names_resolve_on_path_with_exe_added() {
        let path = r"C:\nothing;C:\windows\system32\;;";
        let exists = |p: &str| p == r"C:\windows\system32\notepad.exe";
        assert_eq!(
            resolve("notepad", path, exists),
            Ok(r"C:\windows\system32\notepad.exe".into())
        );
        assert_eq!(
            resolve("notepad.exe", path, exists),
            Ok(r"C:\windows\system32\notepad.exe".into())
        );
        assert!(
            resolve("calc", path, exists)
                .unwrap_err()
                .contains("no executable")
        );
    }

    #[test]
    fn paths_command_lines_and_batch_files_are_refused() {
        let never = |_: &str| true;
        assert!(resolve("", "C:\\", never).unwrap_err().contains("empty"));
        assert!(
            resolve(r"C:\x.exe", "C:\\", never)
                .unwrap_err()
                .contains("path")
        );
        assert!(
            resolve("a b", "C:\\", never)
                .unwrap_err()
                .contains("command line")
        );
        assert!(
            resolve("x&y", "C:\\", never)
                .unwrap_err()
                .contains("command line")
        );
        assert!(
            resolve("run.BAT", "C:\\", never)
                .unwrap_err()
                .contains("batch")
        );
    }
}
