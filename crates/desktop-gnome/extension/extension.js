// computer-control: the window facts the desktop driver needs and GNOME Shell keeps to
// allow-listed callers. Exported on the shell's own bus name (org.gnome.Shell) at
// /org/computercontrol/Shell. It sends no input and reads no pixels.
/* exported init */
'use strict';

const { Gio, Meta } = imports.gi;
const Main = imports.ui.main;

const VERSION = 1;

const IFACE = `<node>
  <interface name="org.computercontrol.Shell">
    <method name="Version"><arg type="u" direction="out" name="version"/></method>
    <method name="Windows"><arg type="s" direction="out" name="json"/></method>
    <method name="OverviewVisible"><arg type="b" direction="out" name="visible"/></method>
    <method name="Activate">
      <arg type="t" direction="in" name="id"/>
      <arg type="b" direction="out" name="found"/>
    </method>
  </interface>
</node>`;

function rect(r) {
    return [r.x, r.y, r.width, r.height];
}

// Every window, topmost first (the reverse of the actors' stacking order). While the
// Overview covers the screen no window is shown: a click there reaches the shell.
function windows() {
    const covered = Main.overview.visible;
    const ws = global.workspace_manager.get_active_workspace();
    const out = [];
    for (const actor of global.get_window_actors().slice().reverse()) {
        const w = actor.get_meta_window();
        if (!w || w.get_window_type() === Meta.WindowType.DESKTOP)
            continue;
        const onWs = w.is_on_all_workspaces() || w.get_workspace() === ws;
        out.push({
            id: w.get_id(),
            title: w.get_title() || '',
            app_id: w.get_gtk_application_id() || w.get_sandboxed_app_id() || w.get_wm_class() || '',
            pid: w.get_pid(),
            frame: rect(w.get_frame_rect()),
            buffer: rect(w.get_buffer_rect()),
            focused: w.has_focus(),
            shown: !covered && !w.minimized && onWs && actor.visible,
            x11: w.get_client_type() === Meta.WindowClientType.X11,
        });
    }
    return JSON.stringify(out);
}

class Service {
    Version() {
        return VERSION;
    }

    Windows() {
        return windows();
    }

    OverviewVisible() {
        return Main.overview.visible;
    }

    Activate(id) {
        for (const actor of global.get_window_actors()) {
            const w = actor.get_meta_window();
            if (w && w.get_id() === id) {
                w.activate(global.get_current_time());
                return true;
            }
        }
        return false;
    }
}

class Extension {
    enable() {
        this._dbus = Gio.DBusExportedObject.wrapJSObject(IFACE, new Service());
        this._dbus.export(Gio.DBus.session, '/org/computercontrol/Shell');
    }

    disable() {
        this._dbus.unexport();
        this._dbus = null;
    }
}

function init() {
    return new Extension();
}
