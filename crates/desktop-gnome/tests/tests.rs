mod gnome_driver;
mod portal_session;
