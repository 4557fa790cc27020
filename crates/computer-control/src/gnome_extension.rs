//! `computer-control setup --gnome-extension`: installs the GNOME Shell extension the
//! GNOME driver reads window rectangles from, for the current user, and enables it.
//! GNOME on Wayland loads an extension installed while it runs only at the next login,
//! which is said.

/// Installs and enables the extension, saying what was done and what is left.
#[cfg(all(feature = "gnome", target_os = "linux"))]
pub fn install() -> anyhow::Result<()> {
    use anyhow::Context as _;
    use cc_desktop_gnome::shell::{FILES, UUID};

    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".local/share"))
        })
        .context("neither XDG_DATA_HOME nor HOME is set: no place for the extension")?;
    let dir = data.join("gnome-shell/extensions").join(UUID);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, text) in FILES {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "installed the GNOME Shell extension {UUID} in {}",
        dir.display()
    );
    match enable(UUID) {
        Ok(()) => println!("enabled it (org.gnome.shell enabled-extensions)"),
        Err(e) => println!(
            "could not enable it ({e}): run `gnome-extensions enable {UUID}` after logging in"
        ),
    }
    println!(
        "log out and in (GNOME on Wayland loads new extensions at login); then \
         `computer-control check` reports windows from the extension"
    );
    Ok(())
}

/// Adds the extension to `org.gnome.shell enabled-extensions` (what `gnome-extensions
/// enable` does, which refuses an extension the running shell has not loaded yet).
#[cfg(all(feature = "gnome", target_os = "linux"))]
fn enable(uuid: &str) -> Result<(), String> {
    let gsettings = |args: &[&str]| -> Result<String, String> {
        let out = std::process::Command::new("gsettings")
            .args(args)
            .output()
            .map_err(|e| format!("gsettings: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let now = gsettings(&["get", "org.gnome.shell", "enabled-extensions"])?;
    let list = enabled_with(&now, uuid);
    gsettings(&["set", "org.gnome.shell", "enabled-extensions", &list]).map(|_| ())
}

/// The GVariant text of `current` (a string array as gsettings prints it) with `uuid`
/// added once.
#[cfg(any(test, all(feature = "gnome", target_os = "linux")))]
fn enabled_with(current: &str, uuid: &str) -> String {
    let body = current
        .trim()
        .trim_start_matches("@as")
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let mut items: Vec<String> = body
        .split(',')
        .map(|s| s.trim().trim_matches('\'').to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if !items.iter().any(|s| s == uuid) {
        items.push(uuid.to_string());
    }
    let quoted: Vec<String> = items.iter().map(|s| format!("'{s}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// A build without the GNOME driver has no extension to install.
#[cfg(not(all(feature = "gnome", target_os = "linux")))]
pub fn install() -> anyhow::Result<()> {
    anyhow::bail!(
        "this build has no GNOME driver (cargo feature gnome): there is no extension to install"
    )
}

#[cfg(test)]
mod tests {
    use super::enabled_with;

    #[test]
    fn the_uuid_is_added_once() {
        assert_eq!(enabled_with("@as []", "a@b"), "['a@b']");
        assert_eq!(enabled_with("['x@y']", "a@b"), "['x@y', 'a@b']");
        assert_eq!(enabled_with("['x@y', 'a@b']", "a@b"), "['x@y', 'a@b']");
    }
}
