"""``python3 -m hxfuse.config``: the config check of :mod:`hxfuse.config.cli`."""

import sys

from hxfuse.config.cli import main

if __name__ == "__main__":
    sys.exit(main())
