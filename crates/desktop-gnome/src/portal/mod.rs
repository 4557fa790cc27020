//! The desktop portal driver: remote desktop and screen cast through
//! `xdg-desktop-portal`, for sandboxed applications and for desktops whose compositor
//! has no interface of its own for them (KDE Plasma). It uses only the portal's public
//! interfaces (never gnome-shell's), shares the PipeWire frame reader and the keysyms
//! with the GNOME driver, and asks the user once per session, or once for good where the
//! portal remembers consent.

pub mod session;
