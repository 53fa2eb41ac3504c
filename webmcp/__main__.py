"""`python -m webmcp` runs the same command as `webmcp-bridge`."""

import sys

from webmcp.cli import main

if __name__ == "__main__":
    sys.exit(main())
