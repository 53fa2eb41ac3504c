"""The UI-context extension (UI context 0.2.0, docs/protocols.md#uic): `ui://current`, `ui://locate/{id}`, `ui://descriptor`."""

from webmcp.uicontext.provider import UIContext, declare

__all__ = ["UIContext", "declare"]
