//! Policy rules (PROTOCOL §5.2), compiled once per configuration.

use globset::{GlobBuilder, GlobMatcher};
use regex::Regex;
use serde_json::Value;

use cc_protocol::{Key, keys::ModifierFamily};

use crate::config::{Effect, Matcher, Rule, RuleMatch, RuleWindow, SafetyConfig};
use crate::spec::Issue;
use crate::tools::{index, tools};

/// Where an action lands: its canvas points and the window it reaches.
#[derive(Debug, Clone, Default)]
pub struct Landing {
    /// Canvas points the action touches (clamped).
    pub points: Vec<(i32, i32)>,
    /// `(app_id, title)` of the windows the action lands in: under each of its points
    /// (pointer tools), the target (`window.focus`, accessibility tools), or the focused
    /// one (keyboard tools). A window matcher matches when any of them does.
    pub windows: Vec<(String, String)>,
}

/// A compiled argument matcher.
struct ArgMatch {
    path: Vec<String>,
    matcher: Matcher,
    value: Value,
    /// `regex`: the compiled regex.
    re: Option<Regex>,
    /// `glob`: the compiled case-insensitive glob.
    glob: Option<GlobMatcher>,
    /// `contains`: the lowercased needle and, for a generic modifier name, every
    /// name of its family.
    needle: Option<(String, Option<&'static [&'static str]>)>,
}

/// A window glob; `None` = no constraint.
type WinGlob = Option<GlobMatcher>;

fn win_match(g: &WinGlob, text: &str) -> bool {
    g.as_ref().is_none_or(|g| g.is_match(text))
}

struct Compiled {
    tool: GlobMatcher,
    /// Which tools of the registry the glob matches (bit `i` = `tools()[i]`), so
    /// evaluation does not run a glob per rule for a known tool.
    known: u64,
    argument: Option<ArgMatch>,
    /// `(app, title)`.
    window: Option<(WinGlob, WinGlob)>,
    effect: Effect,
}

/// The rules of one configuration, ready to evaluate.
pub struct Policy {
    rules: Vec<Compiled>,
    /// [`builtin_rules`], evaluated apart so configured rules keep their indices.
    builtin: Vec<Compiled>,
    rule_json: Vec<Value>,
}

/// Which rules matched, by effect (the index of the first match of each).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// A built-in rule denies it: the action lands on the operator console.
    pub console: bool,
    /// The first deny rule that matched.
    pub deny: Option<usize>,
    /// The first confirm rule that matched.
    pub confirm: Option<usize>,
    /// The first allow rule that matched (what allowlist mode asks for).
    pub allow: Option<usize>,
}

/// The operator console's page title, which a browser shows in its window title: the
/// console's HTML carries it, and the built-in rules recognise the console by it.
pub const CONSOLE_TITLE: &str = "computer-control · operator console";

/// The tools that act on what they land on. Observations stay allowed: seeing the
/// console shows the agent nothing it could not ask the server for.
const CONSOLE_ACTIONS: &[&str] = &[
    "pointer.{move,click,drag,scroll}",
    "keyboard.*",
    "a11y.activate",
    "a11y.input",
    "window.focus",
];

/// Rules that come before the configured ones: with `safety.protect_console` (on
/// unless the operator's configuration turns it off) every action that lands on an
/// operator console's window is denied, so an agent cannot approve its own actions or
/// release a stop by driving the console open on the desktop it controls.
fn builtin_rules(safety: &SafetyConfig) -> Vec<Rule> {
    if !safety.protect_console {
        return Vec::new();
    }
    CONSOLE_ACTIONS
        .iter()
        .map(|tool| Rule {
            matches: RuleMatch {
                tool: (*tool).to_string(),
                argument: None,
                window: Some(RuleWindow {
                    app: None,
                    title: Some(format!("*{CONSOLE_TITLE}*")),
                }),
            },
            effect: Effect::Deny,
        })
        .collect()
}

/// Collects the problems of compiling one configuration's rules.
struct Problems(Vec<Issue>);

impl Problems {
    fn glob(&mut self, path: String, pattern: &str, case_insensitive: bool) -> Option<GlobMatcher> {
        match GlobBuilder::new(pattern)
            .case_insensitive(case_insensitive)
            .build()
        {
            Ok(g) => Some(g.compile_matcher()),
            Err(e) => {
                self.0.push(Issue {
                    path,
                    message: format!("bad glob: {e}"),
                });
                None
            }
        }
    }

    fn string<'v>(&mut self, path: &str, v: &'v Value, what: &str) -> Option<&'v str> {
        let s = v.as_str();
        if s.is_none() {
            self.0.push(Issue {
                path: path.to_string(),
                message: format!("{what} needs a string"),
            });
        }
        s
    }
}

impl Policy {
    /// Compiles rules, once, when their configuration is validated: a pattern that
    /// does not compile is a problem of the configuration (`invalid_config`), never a
    /// rule that silently matches nothing.
    pub(crate) fn compile(rules: &[Rule]) -> Result<Policy, Vec<Issue>> {
        let mut problems = Problems(Vec::new());
        let mut compiled = Vec::with_capacity(rules.len());
        for (i, r) in rules.iter().enumerate() {
            let at = |rest: &str| format!("safety.rules[{i}].match.{rest}");
            let tool = problems.glob(at("tool"), &r.matches.tool, false);
            let argument = r.matches.argument.as_ref().map(|a| {
                let path = at("argument.value");
                let mut m = ArgMatch {
                    path: a.name.split('.').map(str::to_string).collect(),
                    matcher: a.matcher,
                    value: a.value.clone(),
                    re: None,
                    glob: None,
                    needle: None,
                };
                match a.matcher {
                    Matcher::Regex => {
                        if let Some(s) = problems.string(&path, &a.value, "regex") {
                            match regex::RegexBuilder::new(s).size_limit(1 << 20).build() {
                                Ok(re) => m.re = Some(re),
                                Err(e) => problems.0.push(Issue {
                                    path,
                                    message: format!("bad regex: {e}"),
                                }),
                            }
                        }
                    }
                    Matcher::Glob => {
                        if let Some(s) = problems.string(&path, &a.value, "glob") {
                            m.glob = problems.glob(path, s, true);
                        }
                    }
                    Matcher::Contains => {
                        m.needle = a.value.as_str().map(|n| {
                            let n = n.to_lowercase();
                            let family = modifier_family(&n);
                            (n, family)
                        });
                    }
                    Matcher::Equals | Matcher::InRegion => {}
                }
                m
            });
            let window = r.matches.window.as_ref().map(|w| {
                let mut glob = |key: &str, p: &Option<String>| {
                    p.as_deref()
                        .and_then(|p| problems.glob(at(&format!("window.{key}")), p, true))
                };
                (glob("app", &w.app), glob("title", &w.title))
            });
            let Some(tool) = tool else { continue };
            let known = tools()
                .iter()
                .take(64)
                .enumerate()
                .filter(|(_, t)| tool.is_match(t.name))
                .fold(0u64, |m, (i, _)| m | (1 << i));
            compiled.push(Compiled {
                tool,
                known,
                argument,
                window,
                effect: r.effect,
            });
        }
        if !problems.0.is_empty() {
            return Err(problems.0);
        }
        Ok(Policy {
            rules: compiled,
            builtin: Vec::new(),
            rule_json: rules
                .iter()
                .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
                .collect(),
        })
    }

    /// The policy a configuration runs under: the built-in rules, then its own.
    pub(crate) fn for_safety(safety: &SafetyConfig) -> Result<Policy, Vec<Issue>> {
        let mut policy = Policy::compile(&safety.rules)?;
        policy.builtin = Policy::compile(&builtin_rules(safety))?.rules;
        Ok(policy)
    }

    /// True when some rule needs the window an action lands in (worth a window query).
    pub fn needs_window(&self) -> bool {
        self.rules
            .iter()
            .chain(&self.builtin)
            .any(|r| r.window.is_some())
    }

    /// True when some rule that applies to `tool` needs the window it lands in. A
    /// window query costs the desktop round trips (three on X11), so an action no such
    /// rule can match (a pause, a capture under the built-in console rules) is judged
    /// without one: its verdict cannot depend on the windows.
    pub fn needs_window_for(&self, tool: &str) -> bool {
        let index = index(tool).filter(|&i| i < 64);
        self.rules
            .iter()
            .chain(&self.builtin)
            .any(|r| r.window.is_some() && r.applies_to(index, tool))
    }

    /// True when some rule needs the points an action lands on (`in_region`).
    pub fn needs_points(&self) -> bool {
        self.rules.iter().any(|r| {
            r.argument
                .as_ref()
                .is_some_and(|a| a.matcher == Matcher::InRegion)
        })
    }

    /// The rule at `i`, as configured (for `data.rule`).
    pub fn rule_json(&self, i: usize) -> Value {
        self.rule_json.get(i).cloned().unwrap_or(Value::Null)
    }

    /// Evaluates every rule.
    pub fn evaluate(&self, tool: &str, args: &Value, landing: &Landing) -> Verdict {
        let mut v = Verdict::default();
        let index = index(tool).filter(|&i| i < 64);
        v.console = self
            .builtin
            .iter()
            .any(|r| r.hits(index, tool, args, landing));
        for (i, r) in self.rules.iter().enumerate() {
            if !r.hits(index, tool, args, landing) {
                continue;
            }
            let slot = match r.effect {
                Effect::Deny => &mut v.deny,
                Effect::Confirm => &mut v.confirm,
                Effect::Allow => &mut v.allow,
            };
            slot.get_or_insert(i);
        }
        v
    }
}

impl Compiled {
    /// True when the rule's tool pattern names `tool` (`index`: its place in the
    /// registry, when it is a known tool).
    fn applies_to(&self, index: Option<usize>, tool: &str) -> bool {
        match index {
            Some(t) => self.known & (1 << t) != 0,
            None => self.tool.is_match(tool),
        }
    }

    /// True when this rule applies to the action (`index`: the tool's place in the
    /// registry, when it is a known tool).
    fn hits(&self, index: Option<usize>, tool: &str, args: &Value, landing: &Landing) -> bool {
        if !self.applies_to(index, tool) {
            return false;
        }
        if let Some(a) = &self.argument
            && !argument_matches(args, a, landing)
        {
            return false;
        }
        match &self.window {
            Some((app, title)) => landing
                .windows
                .iter()
                .any(|(wa, wt)| win_match(app, wa) && win_match(title, wt)),
            None => true,
        }
    }
}

fn lookup<'v>(args: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(args, |cur, p| cur.get(p.as_str()))
}

/// True when `f` holds for a string form of `v` (a string, a number or a boolean, or
/// any element of a list of them).
fn any_string(v: &Value, f: &dyn Fn(&str) -> bool) -> bool {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter().any(|e| any_string(e, f)),
        Value::Number(n) => f(&n.to_string()),
        Value::Bool(b) => f(if *b { "true" } else { "false" }),
        _ => false,
    }
}

/// Every name of a generic modifier's family (`win` → `lwin rwin super meta cmd …`).
fn modifier_family(needle: &str) -> Option<&'static [&'static str]> {
    if !["win", "ctrl", "alt", "shift", "super", "meta", "cmd"].contains(&needle) {
        return None;
    }
    Key::parse(needle)
        .ok()
        .and_then(|k| k.modifier_family())
        .map(ModifierFamily::names)
}

fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equals(p, q))
        }
        _ => a == b,
    }
}

/// `contains`: case-insensitive substring on strings; on lists, any element equal.
/// Modifier aware: `win` matches `lwin rwin super meta cmd`, `ctrl` `lctrl rctrl`, …
/// `needle` is lowercased already.
fn contains(arg: &Value, needle: &str, family: Option<&[&str]>) -> bool {
    match arg {
        Value::Array(items) => items.iter().filter_map(Value::as_str).any(|s| {
            let s = s.to_lowercase();
            s == needle || family.is_some_and(|f| f.contains(&s.as_str()))
        }),
        Value::String(s) => {
            let s = s.to_lowercase();
            if s.contains(needle) {
                return true;
            }
            // A combo written as a string: "ctrl+lwin+r".
            family.is_some_and(|f| Key::split_combo(&s).iter().any(|k| f.contains(&k.as_str())))
        }
        other => any_string(other, &|s| s.to_lowercase().contains(needle)),
    }
}

fn in_region(points: &[(i32, i32)], region: &Value) -> bool {
    let g = |k: &str| region.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let (x, y, w, h) = (g("x"), g("y"), g("width"), g("height"));
    points.iter().any(|&(px, py)| {
        (px as f64) >= x && (py as f64) >= y && (px as f64) < x + w && (py as f64) < y + h
    })
}

fn argument_matches(args: &Value, a: &ArgMatch, landing: &Landing) -> bool {
    if a.matcher == Matcher::InRegion {
        // The named argument if it is a canvas point, else every point the action lands
        // on (a point relative to a window is placed by the landing, not here).
        if args.get("window").is_none()
            && let Some(p) = lookup(args, &a.path)
            && let (Some(x), Some(y)) = (
                p.get("x").and_then(Value::as_f64),
                p.get("y").and_then(Value::as_f64),
            )
        {
            return in_region(&[(x.round() as i32, y.round() as i32)], &a.value);
        }
        return in_region(&landing.points, &a.value);
    }
    let Some(arg) = lookup(args, &a.path) else {
        return false;
    };
    match a.matcher {
        Matcher::Equals => equals(arg, &a.value),
        Matcher::Contains => a
            .needle
            .as_ref()
            .is_some_and(|(n, family)| contains(arg, n, *family)),
        Matcher::Regex => {
            a.re.as_ref()
                .is_some_and(|re| any_string(arg, &|s| re.is_match(s)))
        }
        Matcher::Glob => a
            .glob
            .as_ref()
            .is_some_and(|g| any_string(arg, &|s| g.is_match(s))),
        Matcher::InRegion => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use globset::Glob;
    use serde_json::json;

    fn policy(rules: Value) -> Policy {
        let rules: Vec<Rule> = serde_json::from_value(rules).unwrap();
        Policy::compile(&rules).unwrap()
    }

    #[test]
    fn a_pattern_that_does_not_compile_is_refused_not_a_rule_matching_nothing() {
        let rules: Vec<Rule> = serde_json::from_value(json!([
            {"match": {"tool": "*"}, "effect": "allow"},
            {"match": {"tool": "pointer.[", "argument": {"name": "text", "matcher": "regex", "value": "("}}, "effect": "deny"},
            {"match": {"tool": "*", "window": {"title": "a{b"}}, "effect": "deny"},
            {"match": {"tool": "*", "argument": {"name": "text", "matcher": "glob", "value": 3}}, "effect": "deny"}
        ]))
        .unwrap();
        let issues = Policy::compile(&rules).err().expect("refused");
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "safety.rules[1].match.tool",
                "safety.rules[1].match.argument.value",
                "safety.rules[2].match.window.title",
                "safety.rules[3].match.argument.value",
            ]
        );
        assert!(issues[1].message.starts_with("bad regex"), "{issues:?}");
        assert_eq!(issues[3].message, "glob needs a string");
    }

    #[test]
    fn tool_glob_is_case_sensitive() {
        let p = policy(json!([{"match": {"tool": "keyboard.*"}, "effect": "deny"}]));
        assert_eq!(
            p.evaluate("keyboard.type", &json!({}), &Landing::default())
                .deny,
            Some(0)
        );
        assert_eq!(
            p.evaluate("Keyboard.type", &json!({}), &Landing::default())
                .deny,
            None
        );
        assert_eq!(
            p.evaluate("pointer.click", &json!({}), &Landing::default())
                .deny,
            None
        );
    }

    #[test]
    fn the_precomputed_tool_match_agrees_with_the_glob() {
        for pattern in [
            "*",
            "keyboard.*",
            "pointer.?lick",
            "*.list",
            "batch.execute",
            "x*",
        ] {
            let p = policy(json!([{"match": {"tool": pattern}, "effect": "deny"}]));
            let g = Glob::new(pattern).unwrap().compile_matcher();
            for t in tools() {
                let hit = p
                    .evaluate(t.name, &json!({}), &Landing::default())
                    .deny
                    .is_some();
                assert_eq!(hit, g.is_match(t.name), "{pattern} vs {}", t.name);
            }
            // A name outside the registry still goes through the glob.
            let hit = p
                .evaluate("keyboard.x", &json!({}), &Landing::default())
                .deny;
            assert_eq!(hit.is_some(), g.is_match("keyboard.x"), "{pattern}");
        }
    }

    #[test]
    fn contains_is_modifier_aware_and_case_insensitive() {
        let p = policy(
            json!([{"match": {"tool": "keyboard.combo", "argument": {"name": "keys", "matcher": "contains", "value": "WIN"}}, "effect": "deny"}]),
        );
        for keys in [
            json!(["lwin", "r"]),
            json!(["super", "e"]),
            json!(["meta"]),
            json!(["rwin"]),
        ] {
            assert_eq!(
                p.evaluate(
                    "keyboard.combo",
                    &json!({"keys": keys}),
                    &Landing::default()
                )
                .deny,
                Some(0),
                "{keys}"
            );
        }
        assert_eq!(
            p.evaluate(
                "keyboard.combo",
                &json!({"keys": ["ctrl", "w"]}),
                &Landing::default()
            )
            .deny,
            None
        );
        let t = policy(
            json!([{"match": {"tool": "keyboard.type", "argument": {"name": "text", "matcher": "contains", "value": "RM -RF"}}, "effect": "confirm"}]),
        );
        assert_eq!(
            t.evaluate(
                "keyboard.type",
                &json!({"text": "sudo rm -rf /"}),
                &Landing::default()
            )
            .confirm,
            Some(0)
        );
    }

    #[test]
    fn dotted_paths_equals_regex_glob() {
        let p = policy(json!([
            {"match": {"tool": "pointer.drag", "argument": {"name": "from.x", "matcher": "equals", "value": 10}}, "effect": "deny"},
            {"match": {"tool": "keyboard.type", "argument": {"name": "text", "matcher": "regex", "value": "^\\d{4}$"}}, "effect": "confirm"},
            {"match": {"tool": "keyboard.type", "argument": {"name": "text", "matcher": "glob", "value": "*.EXE"}}, "effect": "allow"}
        ]));
        assert_eq!(
            p.evaluate(
                "pointer.drag",
                &json!({"from": {"x": 10.0, "y": 3}}),
                &Landing::default()
            )
            .deny,
            Some(0)
        );
        assert_eq!(
            p.evaluate(
                "keyboard.type",
                &json!({"text": "1234"}),
                &Landing::default()
            )
            .confirm,
            Some(1)
        );
        assert_eq!(
            p.evaluate(
                "keyboard.type",
                &json!({"text": "setup.exe"}),
                &Landing::default()
            )
            .allow,
            Some(2)
        );
    }

    #[test]
    fn in_region_uses_landing_points() {
        let p = policy(
            json!([{"match": {"tool": "pointer.*", "argument": {"name": "x", "matcher": "in_region", "value": {"x": 0, "y": 0, "width": 100, "height": 50}}}, "effect": "deny"}]),
        );
        let inside = Landing {
            points: vec![(10, 10)],
            windows: vec![],
        };
        let outside = Landing {
            points: vec![(10, 60)],
            windows: vec![],
        };
        assert_eq!(
            p.evaluate("pointer.click", &json!({}), &inside).deny,
            Some(0)
        );
        assert_eq!(p.evaluate("pointer.click", &json!({}), &outside).deny, None);
        let drag = policy(
            json!([{"match": {"tool": "pointer.drag", "argument": {"name": "to", "matcher": "in_region", "value": {"x": 0, "y": 0, "width": 10, "height": 10}}}, "effect": "deny"}]),
        );
        assert_eq!(
            drag.evaluate(
                "pointer.drag",
                &json!({"from": {"x": 50, "y": 50}, "to": {"x": 5, "y": 5}}),
                &outside
            )
            .deny,
            Some(0)
        );
    }

    #[test]
    fn window_matcher() {
        let p = policy(
            json!([{"match": {"tool": "*", "window": {"app": "cc-form", "title": "Sign*"}}, "effect": "confirm"}]),
        );
        let l = Landing {
            points: vec![],
            windows: vec![("cc-form".into(), "Sign in".into())],
        };
        assert_eq!(p.evaluate("keyboard.type", &json!({}), &l).confirm, Some(0));
        let other = Landing {
            points: vec![],
            windows: vec![("cc-list".into(), "Items".into())],
        };
        assert_eq!(
            p.evaluate("keyboard.type", &json!({}), &other).confirm,
            None
        );
        assert_eq!(
            p.evaluate("keyboard.type", &json!({}), &Landing::default())
                .confirm,
            None
        );
    }

    #[test]
    fn the_console_is_protected_unless_the_operator_lifts_it() {
        let mut safety = crate::config::ConfigStack::new().config().safety.clone();
        assert!(safety.protect_console, "on by default");
        safety.rules =
            serde_json::from_value(json!([{"match": {"tool": "*"}, "effect": "allow"}])).unwrap();
        let on_console = Landing {
            points: vec![(10, 10)],
            windows: vec![("chromium".into(), format!("{CONSOLE_TITLE} - Chromium"))],
        };
        let p = Policy::for_safety(&safety).unwrap();
        for tool in [
            "pointer.move",
            "pointer.click",
            "pointer.drag",
            "pointer.scroll",
            "keyboard.press",
            "keyboard.combo",
            "keyboard.type",
            "a11y.activate",
            "a11y.input",
            "window.focus",
        ] {
            let v = p.evaluate(tool, &json!({}), &on_console);
            assert!(v.console, "{tool}");
            // Configured rules keep their own indices.
            assert_eq!(v.allow, Some(0), "{tool}");
        }
        // Looking is not acting.
        assert!(!p.evaluate("a11y.snapshot", &json!({}), &on_console).console);
        assert!(
            !p.evaluate("pointer.position", &json!({}), &on_console)
                .console
        );
        assert!(
            !p.evaluate("screen.capture", &json!({}), &on_console)
                .console
        );
        let elsewhere = Landing {
            points: vec![(10, 10)],
            windows: vec![("chromium".into(), "News - Chromium".into())],
        };
        assert!(!p.evaluate("pointer.click", &json!({}), &elsewhere).console);
        safety.protect_console = false;
        let lifted = Policy::for_safety(&safety).unwrap();
        assert!(
            !lifted
                .evaluate("pointer.click", &json!({}), &on_console)
                .console
        );
        assert!(!lifted.needs_window());
    }

    /// The windows are read for an action only when a rule that could match it asks
    /// about them; a rule that names every tool makes every action read them.
    #[test]
    fn a_window_is_needed_only_by_the_tools_a_window_rule_names() {
        let safety = crate::config::ConfigStack::new().config().safety.clone();
        let p = Policy::for_safety(&safety).unwrap();
        for acts in [
            "pointer.click",
            "keyboard.type",
            "a11y.activate",
            "window.focus",
        ] {
            assert!(
                p.needs_window_for(acts),
                "{acts}: the console rules name it"
            );
        }
        for looks in [
            "wait.pause",
            "screen.capture",
            "a11y.snapshot",
            "window.list",
        ] {
            assert!(
                !p.needs_window_for(looks),
                "{looks}: no window rule names it"
            );
        }
        let mut every = safety.clone();
        every.rules = serde_json::from_value(
            json!([{"match": {"tool": "*", "window": {"title": "*Vault*"}}, "effect": "deny"}]),
        )
        .unwrap();
        let p = Policy::for_safety(&every).unwrap();
        assert!(p.needs_window_for("wait.pause"));
        assert!(
            p.needs_window_for("some.unknown_tool"),
            "matched by its glob"
        );
        let mut none = safety;
        none.protect_console = false;
        let p = Policy::for_safety(&none).unwrap();
        assert!(!p.needs_window_for("pointer.click"));
    }
}
