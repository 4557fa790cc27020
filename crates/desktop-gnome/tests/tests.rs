mod gnome_driver;
