//! The virtual desktop's clipboard: what ctrl+c copied from the form's name field or
//! `clipboard_write` put there, and who did. It never changes a pixel, so it lives
//! beside the scene, not in it.

use super::scene::Scene;
use super::widgets::WidgetId;

/// The owner reported for text the driver itself put on the clipboard.
pub(super) const SELF_OWNER: &str = "computer-control";

/// A shortcut the desktop handles itself rather than the focused widget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shortcut {
    /// ctrl+c.
    Copy,
    /// ctrl+v.
    Paste,
    /// alt+F4: close the active window.
    Close,
}

/// The clipboard's text and its owner (an application id).
#[derive(Clone, Default, PartialEq, Eq)]
pub(super) struct Clipboard {
    text: Option<String>,
    owner: Option<&'static str>,
}

impl std::fmt::Debug for Clipboard {
    /// Never prints the text itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clipboard")
            .field("chars", &self.text.as_ref().map(|t| t.chars().count()))
            .field("owner", &self.owner)
            .finish()
    }
}

impl Clipboard {
    /// The text and its owner.
    pub(super) fn read(&self) -> (Option<&str>, Option<&'static str>) {
        (self.text.as_deref(), self.owner)
    }

    /// Text put there by the driver's caller.
    pub(super) fn write(&mut self, text: &str) {
        self.text = Some(text.to_string());
        self.owner = Some(SELF_OWNER);
    }

    /// ctrl+c: the name field's text (its selection after ctrl+a is all of it, and
    /// without one the whole text is copied, as a one-line field's copy does). The
    /// password field copies nothing, as GTK's does not; an empty field neither.
    pub(super) fn copy(&mut self, scene: &Scene) {
        let Some((window, WidgetId::Name)) = scene.focused() else {
            return;
        };
        let Some(owner) = scene.window(window).map(|w| w.app_id()) else {
            return;
        };
        if !scene.form.name.is_empty() {
            self.text = Some(scene.form.name.clone());
            self.owner = Some(owner);
        }
    }

    /// ctrl+v: inserts the text into the focused editable field (replacing a
    /// select-all), as typing it would.
    pub(super) fn paste(&self, scene: &mut Scene) {
        let (Some((_, focus)), Some(text)) = (scene.focused(), self.text.as_deref()) else {
            return;
        };
        if focus.is_edit() {
            scene.insert(focus, text);
        }
    }
}
