"""Page data → the GUI-bridge view of a tab: blocks, budgets, masking, summary. Pure, no I/O.

`build_view` walks a tab's accessibility trees (gathered by `cdp_bridge.ax`) in reading
order into the seven block types of the GUI bridge protocol (GUI bridge §4.4 (docs/protocols.md#gui-4.4)),
cuts large tables and lists to a window budget, and masks secrets; `summarize_tab` makes
the one-sentence summary.
"""

from webmcp.view.build import BlockIds, Limits, Modal, View, build_view
from webmcp.view.masking import MASK, SECRET_SELECTOR, mask_secrets
from webmcp.view.summary import dialog_blocks, dialog_summary, modal_summary, summarize_tab

__all__ = [
    "MASK",
    "SECRET_SELECTOR",
    "BlockIds",
    "Limits",
    "Modal",
    "View",
    "build_view",
    "dialog_blocks",
    "dialog_summary",
    "mask_secrets",
    "modal_summary",
    "summarize_tab",
]
