"""`python -m cdp_bridge` runs the same command as `webmcp-bridge`.

This entry point is the one place where `cdp_bridge` reaches the agent side; the package
itself never imports `webmcp`.
"""

import importlib
import sys

if __name__ == "__main__":
    sys.exit(importlib.import_module("webmcp.cli").main())
