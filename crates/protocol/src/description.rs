//! An action as a person is told it (PROTOCOL §6): written by its tool from its typed
//! arguments and where the gate placed it, and sent with the events and answers an
//! operator console renders, so no console keeps a table of tools of its own. Text
//! is redacted exactly as the event's arguments are.

use serde::{Deserialize, Serialize};

/// What an action does, in a person's words.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Description {
    /// One line: what it does and where (`Click at (640, 360)`, `Type “hello”`).
    pub title: String,
    /// The keys it presses, in order, by their key names (`win`, `r`), for a console
    /// that draws them as keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    /// The text it enters, whole, redacted as the event's arguments are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// More about where it acts (`in the focused window`, `given as (30, 60) relative
    /// to window 7`, `ends in “Items” (cc-list)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What it does beyond what the title says (a shortcut's usual effect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    /// The element it acts on (`button “OK”`), when the gate placed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<String>,
    /// The window it lands in (`“Sign in” (cc-form)`), when the gate read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// The canvas points to mark on the screen, each named by what happens there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<Mark>,
    /// A batch's items, each described, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<Description>,
}

/// One canvas point an action touches, to be marked on the screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    /// Canvas x.
    pub x: i32,
    /// Canvas y.
    pub y: i32,
    /// What happens there (`click`, `from`, `to`).
    pub label: String,
}
