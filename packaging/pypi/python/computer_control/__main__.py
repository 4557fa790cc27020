"""`python -m computer_control ARGS`: the binary with ARGS, in place of this process.

The original plugin's entry (`python -m computer_control serve`) starts the server
this way: standard streams, signals and the exit status are the binary's own.
"""

import os
import sys

from computer_control import binary


def main():
    path = binary()
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    main()
