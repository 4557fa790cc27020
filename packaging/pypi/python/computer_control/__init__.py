"""computer-control: governed desktop automation for AI agents.

This package carries the computer-control binary (installed as the `computer-control`
script) and the plugin manifest (`manifest.json`, beside this file) whose entry is the
original plugin's: `python -m computer_control serve`. The directory of this package is
a plugin directory a harness loads.
"""

import os
import shutil
import sys
import sysconfig

MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "manifest.json")


def binary():
    """The computer-control binary this package installed.

    Found where the installer put scripts for this interpreter (a virtual environment,
    the user scheme, the system), else on PATH; COMPUTER_CONTROL_BINARY overrides.
    """
    override = os.environ.get("COMPUTER_CONTROL_BINARY")
    if override:
        return override
    places = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    user_scheme = "posix_user" if os.name == "posix" else "nt_user"
    try:
        places.append(sysconfig.get_path("scripts", user_scheme))
    except KeyError:
        pass
    for place in places:
        candidate = os.path.join(place or "", "computer-control")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("computer-control")
    if found:
        return found
    sys.stderr.write(
        "computer-control: the binary this package installs is missing; reinstall the "
        "package, or set COMPUTER_CONTROL_BINARY to a binary you built.\n"
    )
    sys.exit(1)
