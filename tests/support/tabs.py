"""A tab of its own for a test or a recorder: a new target, attached, on the connection."""

from __future__ import annotations

from cdp_bridge.connection import CDPSession, Connection


async def new_tab(connection: Connection, *domains: str) -> CDPSession:
    """A new about:blank tab's session (flat), with `domains` enabled in order."""
    target = await connection.browser.send("Target.createTarget", {"url": "about:blank"})
    attached = await connection.browser.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
    session = connection.session(attached["sessionId"], target["targetId"])
    for domain in domains:
        await session.send(f"{domain}.enable")
    return session
