// chrome.debugger, presented to the bridge as a browser's DevTools connection with flat sessions.
//
// Each shared tab is attached with chrome.debugger and announced as a page target with its own
// sessionId; the tab's out-of-process iframes keep the sessionIds Chrome gives them. The few
// browser-wide commands the bridge sends (Target.*, Browser.*) are answered here with the
// extension APIs (chrome.tabs, chrome.windows), because chrome.debugger only reaches tabs.

const SHAREABLE = /^(https?|file):/;
const PROBE_MS = 1000; // a page held by a JavaScript dialog answers no evaluate until it closes

/** True for a page chrome.debugger may attach to (not chrome://, other extensions, the Web Store). */
export function shareable(url) {
  return !url || url === "about:blank" || SHAREABLE.test(url);
}

class CdpError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export class DebuggerRelay {
  /** @param {(message: object) => void} emit sends one CDP message to the bridge. */
  constructor(emit) {
    this.emit = emit;
    this.attached = new Map(); // tabId -> {sessionId, targetId}
    this.children = new Map(); // child sessionId -> tabId
    this.attaching = new Map(); // tabId -> promise of the attach in progress
    this.announced = new Set(); // tabIds whose Target.targetCreated was sent
    this.openers = new Map(); // tabId -> the shared tab that opened it
    this.shared = new Set(); // tabIds the person shares (and tabs the agent opened)
    this.autoAttach = false;
    this.discover = false;
    this.seq = 0;
    this.onShared = () => {}; // the agent opened a tab: the service worker keeps it shared
    this.onUnshared = () => {}; // the person dismissed the debugging bar on a tab
  }

  /**
   * Whether the shared tab's page has `document.modelContext` (WebMCP switched on, and allowed
   * on this page): true or false, or null when it cannot be told now (not attached, or the page
   * is busy, e.g. a JavaScript dialog holds it). Read-only: one Runtime.evaluate, bounded.
   */
  async modelContextIn(tabId) {
    if (!this.attached.has(tabId)) return null;
    const probe = chrome.debugger
      .sendCommand({ tabId }, "Runtime.evaluate", { expression: "'modelContext' in document", returnByValue: true })
      .then((answer) => (answer && answer.result && typeof answer.result.value === "boolean" ? answer.result.value : null))
      .catch(() => null);
    const giveUp = new Promise((resolve) => setTimeout(() => resolve(null), PROBE_MS));
    return Promise.race([probe, giveUp]);
  }

  // --- sharing ------------------------------------------------------------------

  /** The person changed what is shared: attach what is new, detach what is no longer shared. */
  async setShared(tabIds) {
    this.shared = new Set(tabIds);
    for (const tabId of [...this.attached.keys()]) {
      if (!this.shared.has(tabId)) {
        await chrome.debugger.detach({ tabId }).catch(() => {});
        this.dropTab(tabId);
      }
    }
    if (this.autoAttach) {
      await Promise.all([...this.shared].map((tabId) => this.attachTab(tabId)));
    }
  }

  async attachTab(tabId) {
    if (this.attached.has(tabId)) return this.attached.get(tabId);
    if (this.attaching.has(tabId)) return this.attaching.get(tabId);
    const job = this.doAttach(tabId).finally(() => this.attaching.delete(tabId));
    this.attaching.set(tabId, job);
    return job;
  }

  async doAttach(tabId) {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (!tab || !shareable(tab.url || tab.pendingUrl)) return null;
    try {
      await chrome.debugger.attach({ tabId }, "1.3");
    } catch (error) {
      // Still ours from before the service worker was restarted: start that session afresh.
      const reattached = /already attached/i.test(error.message)
        && (await chrome.debugger.detach({ tabId }).then(() => chrome.debugger.attach({ tabId }, "1.3")).then(() => true, () => false));
      if (!reattached) {
        console.warn(`cannot attach to tab ${tabId}:`, error.message);
        return null;
      }
    }
    if (!this.shared.has(tabId)) {
      // Unshared while we attached.
      await chrome.debugger.detach({ tabId }).catch(() => {});
      return null;
    }
    const targetId = await targetIdOf(tabId);
    const entry = { sessionId: `tab-${tabId}-${++this.seq}`, targetId };
    this.attached.set(tabId, entry);
    const targetInfo = await this.targetInfo(tabId);
    if (this.discover && !this.announced.has(tabId)) {
      this.announced.add(tabId);
      this.emit({ method: "Target.targetCreated", params: { targetInfo } });
    }
    this.emit({
      method: "Target.attachedToTarget",
      params: { sessionId: entry.sessionId, targetInfo, waitingForDebugger: false },
    });
    return entry;
  }

  /** The tab is no longer the bridge's: its session detaches and its target is gone for the bridge. */
  dropTab(tabId) {
    const entry = this.attached.get(tabId);
    if (!entry) return;
    this.attached.delete(tabId);
    this.announced.delete(tabId);
    for (const [sessionId, owner] of this.children) if (owner === tabId) this.children.delete(sessionId);
    this.emit({
      method: "Target.detachedFromTarget",
      params: { sessionId: entry.sessionId, targetId: entry.targetId },
    });
    this.emit({ method: "Target.targetDestroyed", params: { targetId: entry.targetId } });
  }

  /** The bridge went away: let go of every tab (the "is being debugged" bar goes with it). */
  async reset() {
    this.autoAttach = false;
    this.discover = false;
    for (const tabId of [...this.attached.keys()]) {
      await chrome.debugger.detach({ tabId }).catch(() => {});
    }
    this.attached.clear();
    this.children.clear();
    this.announced.clear();
  }

  async targetInfo(tabId) {
    const tab = await chrome.tabs.get(tabId);
    const entry = this.attached.get(tabId);
    const info = {
      targetId: entry ? entry.targetId : await targetIdOf(tabId),
      type: "page",
      title: tab.title || "",
      url: tab.url || tab.pendingUrl || "",
      attached: Boolean(entry),
      canAccessOpener: false,
    };
    const opener = this.attached.get(this.openers.get(tabId));
    if (opener) info.openerId = opener.targetId;
    return info;
  }

  tabOfTarget(targetId) {
    for (const [tabId, entry] of this.attached) if (entry.targetId === targetId) return tabId;
    throw new CdpError(-32602, `No shared tab has target id ${targetId}.`);
  }

  // --- commands from the bridge -------------------------------------------------

  async handleCommand(message) {
    const { id, method, params = {}, sessionId } = message;
    const answer = sessionId === undefined ? { id } : { id, sessionId };
    try {
      answer.result = (await this.dispatch(method, params, sessionId)) || {};
    } catch (error) {
      answer.error = asCdpError(error);
    }
    this.emit(answer);
  }

  async dispatch(method, params, sessionId) {
    if (sessionId !== undefined) {
      const debuggee = this.debuggee(sessionId);
      if (!debuggee) throw new CdpError(-32001, `Session with given id not found: ${sessionId}`);
      return chrome.debugger.sendCommand(debuggee, method, params);
    }
    const handler = BROWSER_COMMANDS[method];
    if (!handler) {
      throw new CdpError(-32601, `${method} is not available through the extension relay (chrome.debugger).`);
    }
    return handler.call(this, params);
  }

  debuggee(sessionId) {
    for (const [tabId, entry] of this.attached) if (entry.sessionId === sessionId) return { tabId };
    const owner = this.children.get(sessionId);
    return owner === undefined ? null : { tabId: owner, sessionId };
  }

  // --- events from Chrome ---------------------------------------------------------

  onEvent(source, method, params) {
    let sessionId = source.sessionId;
    if (sessionId === undefined) {
      const entry = this.attached.get(source.tabId);
      if (!entry) return;
      sessionId = entry.sessionId;
      if (method === "Inspector.targetCrashed") {
        this.emit({ method: "Target.targetCrashed", params: { targetId: entry.targetId, status: "crashed", errorCode: 0 } });
      }
    }
    if (method === "Target.attachedToTarget") this.children.set(params.sessionId, source.tabId);
    if (method === "Target.detachedFromTarget") this.children.delete(params.sessionId);
    this.emit({ method, params, sessionId });
  }

  onDetach(source, reason) {
    if (source.tabId === undefined || !this.attached.has(source.tabId)) return;
    this.dropTab(source.tabId);
    if (reason === "canceled_by_user") {
      // The person dismissed the "is debugging this browser" bar: that tab is no longer shared.
      this.shared.delete(source.tabId);
      this.onUnshared(source.tabId);
    }
  }

  async onTabUpdated(tabId, change) {
    if (this.attached.has(tabId) && (change.title !== undefined || change.url !== undefined)) {
      this.emit({ method: "Target.targetInfoChanged", params: { targetInfo: await this.targetInfo(tabId) } });
    } else if (this.autoAttach && this.shared.has(tabId) && change.url !== undefined) {
      await this.attachTab(tabId); // it left a page chrome.debugger may not touch
    }
  }

  /**
   * A tab a shared tab opened (window.open, target=_blank) is shared too, and announced at once,
   * with its opener: the bridge counts what a page opened during a call. (chrome.tabs'
   * openerTabId is the tab strip's notion, often the active tab: webNavigation names the source.)
   */
  async onNavigationTarget({ sourceTabId, tabId }) {
    if (!this.attached.has(sourceTabId)) return false;
    this.openers.set(tabId, sourceTabId);
    this.shared.add(tabId);
    if (this.discover && !this.announced.has(tabId)) {
      const targetInfo = await this.targetInfo(tabId);
      if (!targetInfo.targetId.startsWith("tab-") && !this.announced.has(tabId)) {
        this.announced.add(tabId);
        this.emit({ method: "Target.targetCreated", params: { targetInfo } });
      }
    }
    if (this.autoAttach) await this.attachTab(tabId);
    return true;
  }

  onTabRemoved(tabId) {
    this.shared.delete(tabId);
    this.openers.delete(tabId);
    this.dropTab(tabId);
  }
}

// Browser-wide commands, answered with the extension APIs. `this` is the DebuggerRelay.
const BROWSER_COMMANDS = {
  async "Target.setDiscoverTargets"({ discover }) {
    this.discover = Boolean(discover);
    if (!this.discover) return {};
    for (const tabId of this.attached.keys()) {
      if (this.announced.has(tabId)) continue;
      this.announced.add(tabId);
      this.emit({ method: "Target.targetCreated", params: { targetInfo: await this.targetInfo(tabId) } });
    }
    return {};
  },

  async "Target.setAutoAttach"({ autoAttach }) {
    this.autoAttach = Boolean(autoAttach);
    if (this.autoAttach) await Promise.all([...this.shared].map((tabId) => this.attachTab(tabId)));
    return {};
  },

  async "Target.getTargets"() {
    const targetInfos = [];
    for (const tabId of this.attached.keys()) targetInfos.push(await this.targetInfo(tabId));
    return { targetInfos };
  },

  async "Target.createTarget"({ url, background }) {
    // A tab the agent opens is shared with it, whatever the person's choice for their own tabs.
    const tab = await chrome.tabs.create({ url: url || "about:blank", active: !background });
    this.shared.add(tab.id);
    this.onShared(tab.id);
    const entry = await this.attachTab(tab.id);
    if (!entry) throw new CdpError(-32000, `The new tab (${url}) cannot be debugged by an extension.`);
    return { targetId: entry.targetId };
  },

  async "Target.closeTarget"({ targetId }) {
    await chrome.tabs.remove(this.tabOfTarget(targetId));
    return { success: true };
  },

  async "Target.activateTarget"({ targetId }) {
    const tab = await chrome.tabs.update(this.tabOfTarget(targetId), { active: true });
    await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
    return {};
  },

  async "Target.attachToTarget"({ targetId }) {
    const entry = await this.attachTab(this.tabOfTarget(targetId));
    if (!entry) throw new CdpError(-32000, `Cannot attach to target ${targetId}.`);
    return { sessionId: entry.sessionId };
  },

  async "Browser.getVersion"() {
    const userAgent = navigator.userAgent;
    const version = (userAgent.match(/Chrome\/[\d.]+/) || ["Chrome/0"])[0];
    return { protocolVersion: "1.3", product: version, revision: "", userAgent, jsVersion: "" };
  },

  async "Browser.getWindowForTarget"({ targetId }) {
    const tab = await chrome.tabs.get(this.tabOfTarget(targetId));
    const window = await chrome.windows.get(tab.windowId);
    return { windowId: window.id, bounds: boundsOf(window) };
  },

  async "Browser.getWindowBounds"({ windowId }) {
    return { bounds: boundsOf(await chrome.windows.get(windowId)) };
  },

  async "Browser.close"() {
    throw new CdpError(-32000, "Through the extension the bridge does not close the person's browser.");
  },
};

function boundsOf(window) {
  return {
    left: window.left ?? 0,
    top: window.top ?? 0,
    width: window.width ?? 0,
    height: window.height ?? 0,
    windowState: window.state === "minimized" || window.state === "maximized" || window.state === "fullscreen" ? window.state : "normal",
  };
}

async function targetIdOf(tabId) {
  const target = (await chrome.debugger.getTargets()).find((t) => t.tabId === tabId);
  return target ? target.id : `tab-${tabId}`;
}

/** chrome.debugger rejects with the CDP error as JSON text in the message: keep its code. */
function asCdpError(error) {
  if (error instanceof CdpError) return { code: error.code, message: error.message };
  const text = String((error && error.message) || error);
  try {
    const parsed = JSON.parse(text);
    if (typeof parsed.code === "number") return { code: parsed.code, message: String(parsed.message || "") };
  } catch {
    // not JSON: an extension API error such as "No tab with id: 5."
  }
  return { code: -32000, message: text };
}
