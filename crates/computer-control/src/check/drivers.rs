//! The `drivers` member of `check`: each desktop driver built into this binary, in
//! `--platform auto` order, and whether what it loads at run time is there. GNOME and
//! the portal read the screen cast's frames through PipeWire's client library, which
//! is loaded when needed rather than linked, so the binary starts without it; this is
//! where a machine without it learns which package provides it, whatever desktop it has.

use serde_json::{Value, json};

use super::Finding;
#[cfg(all(feature = "gnome", target_os = "linux"))]
use super::Status;

/// One finding per built-in driver, named.
pub fn findings() -> Vec<(&'static str, Finding)> {
    crate::platform::DRIVERS
        .iter()
        .map(|p| (p.name, finding(p.name)))
        .collect()
}

#[cfg(all(feature = "gnome", target_os = "linux"))]
fn finding(name: &str) -> Finding {
    if name != "gnome" && name != "portal" {
        return Finding::ok("built in");
    }
    match cc_desktop_gnome::pipewire_library() {
        Ok(version) => Finding::ok(format!("built in; frames through {version}"))
            .with("library", json!(version)),
        Err(why) => Finding::problem(
            Status::Missing,
            why,
            cc_desktop_gnome::INSTALL_PIPEWIRE_LIBRARY,
        ),
    }
}

#[cfg(not(all(feature = "gnome", target_os = "linux")))]
fn finding(_name: &str) -> Finding {
    Finding::ok("built in")
}

/// The member as the report carries it.
pub fn to_json(found: &[(&str, Finding)]) -> Value {
    Value::Array(
        found
            .iter()
            .map(|(name, f)| {
                let mut v = f.to_json();
                if let Value::Object(m) = &mut v {
                    m.insert("name".into(), json!(name));
                }
                v
            })
            .collect(),
    )
}

/// The drivers for a terminal: one line naming those that can run, then each one that
/// cannot with its reason and next step (drivers sharing both are named together).
pub fn text(doc: &Value) -> String {
    let Some(all) = doc["drivers"].as_array() else {
        return String::new();
    };
    let name = |d: &Value| d["name"].as_str().unwrap_or_default().to_string();
    let ok: Vec<String> = all
        .iter()
        .filter(|d| d["status"] == "ok")
        .map(name)
        .collect();
    let mut out = format!(
        "drivers: {}\n",
        if ok.is_empty() {
            "none usable".to_string()
        } else {
            ok.join(", ")
        }
    );
    let mut groups: Vec<(Vec<String>, &str, &str)> = Vec::new();
    for d in all.iter().filter(|d| d["status"] != "ok") {
        let reason = d["reason"].as_str().unwrap_or_default();
        let step = d["next_step"].as_str().unwrap_or_default();
        match groups.iter_mut().find(|g| g.1 == reason && g.2 == step) {
            Some(g) => g.0.push(name(d)),
            None => groups.push((vec![name(d)], reason, step)),
        }
    }
    for (names, reason, step) in groups {
        out.push_str(&format!(
            "  {} cannot run: {reason}\n{:<24}next: {step}\n",
            names.join(", "),
            ""
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Status;

    #[test]
    fn drivers_that_cannot_run_are_named_together_with_their_fix() {
        let found = vec![
            ("wlroots", Finding::ok("built in")),
            (
                "gnome",
                Finding::problem(Status::Missing, "no libpipewire", "install it"),
            ),
            (
                "portal",
                Finding::problem(Status::Missing, "no libpipewire", "install it"),
            ),
            ("x11", Finding::ok("built in")),
        ];
        let doc = json!({ "drivers": to_json(&found) });
        assert_eq!(doc["drivers"][1]["name"], "gnome");
        assert_eq!(doc["drivers"][1]["next_step"], "install it");
        let t = text(&doc);
        assert!(t.starts_with("drivers: wlroots, x11\n"), "{t}");
        assert!(
            t.contains("gnome, portal cannot run: no libpipewire"),
            "{t}"
        );
        assert_eq!(t.matches("next: install it").count(), 1, "{t}");
    }
}
