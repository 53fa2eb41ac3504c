"""What a tab's view is read from: the change observer in every frame, and one full read.

Content changes are noticed by a MutationObserver that runs in an isolated world (the
page can neither see nor call it) and reports through a CDP binding; `read_page` gathers
the accessibility trees of every frame of a page (out-of-process iframes through their
own sessions) and builds the view from them.
"""

from __future__ import annotations

from cdp_bridge.ax import FrameNodes, collect_page
from cdp_bridge.connection import CDPSession
from cdp_bridge.errors import CDPError
from cdp_bridge.targets import PageTarget
from webmcp.view.build import BlockIds, View, build_view
from webmcp.view.masking import SECRET_SELECTOR

__all__ = ["BINDING", "install_observer", "read_page"]

WORLD = "webmcp_bridge"
BINDING = "__webmcpBridgeDirty"
# Runs in an isolated world in every frame: the page cannot see it, call the binding, or fake a change.
_OBSERVER_JS = f"""(() => {{
  if (globalThis.__webmcpBridgeObserving) return; globalThis.__webmcpBridgeObserving = true;
  let timer = 0;
  const ping = () => {{ if (timer) return; timer = setTimeout(() => {{ timer = 0; {BINDING}(''); }}, 15); }};
  new MutationObserver(ping).observe(document, {{subtree: true, childList: true, characterData: true,
    attributes: true}});
  for (const type of ['input', 'change', 'toggle', 'close', 'focusin'])
    document.addEventListener(type, ping, true);
  ping();
}})();"""


async def install_observer(session: CDPSession) -> None:
    """Enable the domains a tab needs and the change observer, on a page or OOPIF session."""
    await session.send("Page.enable")
    # Runtime.bindingCalled is only reported while the Runtime domain is enabled.
    await session.send("Runtime.enable")
    await session.send("Runtime.addBinding", {"name": BINDING, "executionContextName": WORLD})
    await session.send(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": _OBSERVER_JS, "worldName": WORLD, "runImmediately": True},
    )
    await session.send("WebMCP.enable")


async def read_page(page: PageTarget, doc_seq: int, ids: BlockIds) -> tuple[View, frozenset[str]]:
    """The view of every frame of `page`, and the current values of its secret inputs.

    The values live only in the caller's memory, to mask echoes; never logged, never published.

    Raises:
        CDPError: the main document could not be read (it is navigating or gone).
    """
    session = page.session
    prefix = str(doc_seq)
    main = await collect_page(session.send, prefix, secret_selector=SECRET_SELECTOR)
    frames: list[FrameNodes] = list(main.frames)
    values = set(main.secret_values)
    for target_id, frame_session in list(page.frame_sessions.items()):
        try:
            sub = await collect_page(frame_session.send, prefix, secret_selector=SECRET_SELECTOR, oopif=True)
            owner = await session.send("DOM.getFrameOwner", {"frameId": target_id})
        except CDPError:
            continue  # Mid-navigation or gone; its next change retries.
        if sub.frames and sub.frames[0].owner_backend_id is None:
            sub.frames[0].owner_backend_id = owner.get("backendNodeId")
        frames.extend(sub.frames)
        values |= sub.secret_values
    return build_view(frames, ids, secret_values=values), frozenset(values)
