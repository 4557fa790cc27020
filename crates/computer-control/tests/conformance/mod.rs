//! The driver conformance suite: one list of end-to-end scenarios, written once
//! (`scenarios/`), run through the real server (stdio JSON-RPC) against every desktop.
//! A desk ([`desk::Desk`]) starts a private desktop, says how to run the server there
//! and what it can do, and reads the desktop back without the server; `conformance!`
//! below makes each scenario a test of its own per desk
//! (`conformance::<desk>::<scenario>`), so cargo runs desks and scenarios in parallel.
//! Where a desk cannot do something, its capabilities say so and the scenario checks
//! the refusal instead of the effect.
//!
//! Adding a desktop: implement `Desk` in a file beside these (`<name>_desk.rs`) and add
//! one line to `conformance!` (docs/TESTING.md).

pub mod desk;
pub mod scenarios;

#[cfg(feature = "gnome")]
mod gnome_desk;
mod virtual_desk;
mod windows_desk;
mod wlroots_desk;
mod x11_desk;

/// One test per scenario per desk: `name: DeskType,` a line, with the line's
/// attributes (a `#[cfg]` for a desk behind a cargo feature) on its module.
macro_rules! conformance {
    ($($(#[$attr:meta])* $name:ident: $desk:ty,)*) => {$(
        $(#[$attr])*
        mod $name {
            use super::scenarios::*;
            type D = $desk;

            #[test]
            fn platform_and_capabilities() {
                session::platform_and_capabilities::<D>();
            }
            #[test]
            fn click_what_the_default_image_shows() {
                pointer::a_point_read_off_the_default_image_clicks_what_it_shows::<D>();
            }
            #[test]
            fn click_at_an_accessibility_rect() {
                pointer::a_click_at_an_accessibility_rect_on_a_narrower_canvas::<D>();
            }
            #[test]
            fn unicode_typing() {
                keyboard::unicode_typing::<D>();
            }
            #[test]
            fn key_combos_leave_nothing_held() {
                keyboard::key_combos_leave_nothing_held::<D>();
            }
            #[test]
            fn panic_during_a_long_type() {
                keyboard::panic_during_a_long_type_leaves_nothing_held::<D>();
            }
            #[test]
            fn password_redaction() {
                secrets::a_password_asks_first_and_leaks_nowhere::<D>();
            }
            #[test]
            fn monitor_change_and_stale_frame() {
                monitors::a_monitor_change_reconfigures_and_stales_older_frames::<D>();
            }
            #[test]
            fn window_list_focus_capture() {
                windows::a_window_is_listed_focused_captured_and_clicked_relative_to_it::<D>();
            }
            #[test]
            fn clipboard() {
                clipboard::the_clipboard_is_shared_and_leaks_nowhere::<D>();
            }
            #[test]
            fn wait_for() {
                waits::waits_follow_the_desktops_changes::<D>();
            }
            #[test]
            fn element_selectors() {
                selectors::selectors_and_refs_name_elements_until_they_are_gone::<D>();
            }
            #[test]
            fn launch() {
                launch::app_launch_asks_first_unless_listed_and_a_deny_rule_holds::<D>();
            }
        }
    )*};
}

conformance! {
    virtual_desktop: super::virtual_desk::VirtualDesk,
    x11: super::x11_desk::X11Desk,
    x11_without_accessibility: super::x11_desk::X11Desk<false>,
    wlroots: super::wlroots_desk::WlrootsDesk,
    #[cfg(feature = "gnome")]
    gnome: super::gnome_desk::GnomeDesk,
    windows: super::windows_desk::WindowsDesk,
}
