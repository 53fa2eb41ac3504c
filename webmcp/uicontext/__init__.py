"""The UI-context extension (docs/protocols.md §2): `ui://current`, `ui://locate/{id}`, `ui://descriptor`."""

from webmcp.uicontext.provider import UIContext, declare

__all__ = ["UIContext", "declare"]
