// The relay's service worker: the paired WebSocket to the bridge, the person's sharing choice,
// the badge, and reconnection with backoff. The CDP translation lives in cdp.js.

import { DebuggerRelay, shareable } from "./cdp.js";

const DEFAULT_PORT = 8766;
const KEEPALIVE_MS = 20_000; // an MV3 worker stays alive while its WebSocket carries traffic
const MAX_BACKOFF_MS = 30_000;

const settings = {
  port: DEFAULT_PORT,
  code: "", // the pairing code the person typed; empty until paired
  mode: "current", // "current" | "picked" | "all"
  current: null, // the tab shared in "current" mode
  picked: [], // the tabs shared in "picked" mode
};
const agentTabs = new Set(); // tabs the agent opened (and pages opened from shared tabs)

let socket = null;
let status = "unpaired"; // unpaired | connecting | connected | waiting | refused
let lastError = "";
let attempt = 0;
let retryTimer = null;
let keepalive = null;

const relay = new DebuggerRelay((message) => {
  if (socket && socket.readyState === WebSocket.OPEN && status === "connected") socket.send(JSON.stringify(message));
});
relay.onShared = (tabId) => agentTabs.add(tabId);
relay.onUnshared = (tabId) => unshare(tabId);

const loaded = chrome.storage.local.get(["settings"]).then(({ settings: saved }) => {
  Object.assign(settings, saved || {});
});

// --- what is shared -----------------------------------------------------------------

async function sharedTabIds() {
  const tabs = await chrome.tabs.query({});
  const open = new Set(tabs.map((t) => t.id));
  const chosen =
    settings.mode === "all"
      ? tabs.filter((t) => shareable(t.url || t.pendingUrl)).map((t) => t.id)
      : settings.mode === "picked"
        ? settings.picked
        : [settings.current];
  return [...new Set([...chosen, ...agentTabs])].filter((id) => open.has(id));
}

async function applySharing() {
  await relay.setShared(await sharedTabIds());
  updateBadge();
}

async function unshare(tabId) {
  if (settings.mode === "all") {
    // Keep the others shared, drop this one: "all tabs" becomes the tabs shared now.
    settings.picked = await sharedTabIds();
    settings.mode = "picked";
  }
  agentTabs.delete(tabId);
  settings.picked = settings.picked.filter((id) => id !== tabId);
  if (settings.current === tabId) settings.current = null;
  await save();
  await applySharing();
}

async function save() {
  await chrome.storage.local.set({ settings });
}

function updateBadge() {
  const text = status === "connected" ? String(relay.attached.size || "ON") : status === "refused" ? "!" : "";
  chrome.action.setBadgeText({ text });
  chrome.action.setBadgeBackgroundColor({ color: status === "refused" ? "#b3261e" : "#1e7d32" });
  chrome.action.setTitle({ title: `WebMCP Bridge: ${describe()}` });
}

function describe() {
  switch (status) {
    case "connected":
      return `connected to the bridge on port ${settings.port}, ${relay.attached.size} tab(s) shared`;
    case "connecting":
      return `connecting to the bridge on port ${settings.port}…`;
    case "waiting":
      return `bridge not reachable on port ${settings.port}; retrying${lastError ? ` (${lastError})` : ""}`;
    case "refused":
      return `the bridge on port ${settings.port} refused the pairing: enter its current code`;
    default:
      return "not paired: enter the code webmcp-bridge --extension printed";
  }
}

// --- the WebSocket to the bridge ---------------------------------------------------------

async function hmacHex(code, text) {
  const normalized = code.toUpperCase().replace(/[^A-Z0-9]/g, "");
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(normalized),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function randomHex(bytes) {
  return [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function connect() {
  clearTimeout(retryTimer);
  retryTimer = null;
  if (!settings.code || socket) return;
  status = "connecting";
  updateBadge();
  const ws = new WebSocket(`ws://127.0.0.1:${settings.port}/`);
  socket = ws;
  const ourNonce = randomHex(16);
  let stage = "challenge";
  ws.onmessage = async (event) => {
    const message = JSON.parse(event.data);
    if (stage === "connected") {
      if (message.relay === undefined) relay.handleCommand(message);
      return;
    }
    if (stage === "challenge" && message.relay === "challenge") {
      stage = "welcome";
      const proof = await hmacHex(settings.code, `extension:${message.nonce}`);
      ws.send(JSON.stringify({ relay: "hello", proof, nonce: ourNonce, version: chrome.runtime.getManifest().version }));
    } else if (stage === "welcome" && message.relay === "welcome") {
      // The bridge proves it knows the code too: a program that only took the port gets nothing.
      if (message.proof !== (await hmacHex(settings.code, `bridge:${ourNonce}`))) {
        lastError = "the program on this port is not the paired bridge";
        ws.close(4003, "bridge proof refused");
        return;
      }
      stage = "connected";
      status = "connected";
      attempt = 0;
      lastError = "";
      keepalive = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send('{"relay":"ping"}'), KEEPALIVE_MS);
      updateBadge();
    }
  };
  ws.onclose = async (event) => {
    if (socket !== ws) return;
    socket = null;
    clearInterval(keepalive);
    await relay.reset();
    if (event.code === 4003) {
      status = "refused";
      lastError = lastError || event.reason;
    } else {
      status = "waiting";
      lastError = event.reason || lastError;
      scheduleReconnect();
    }
    updateBadge();
  };
  ws.onerror = () => {
    lastError = "connection failed";
  };
}

function scheduleReconnect() {
  if (!settings.code || retryTimer) return;
  const delay = Math.min(MAX_BACKOFF_MS, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);
  attempt += 1;
  retryTimer = setTimeout(connect, delay);
}

function disconnect() {
  clearTimeout(retryTimer);
  retryTimer = null;
  if (socket) {
    const ws = socket;
    socket = null;
    clearInterval(keepalive);
    ws.close(1000, "unpaired");
  }
  relay.reset();
}

// --- browser events ------------------------------------------------------------------

chrome.debugger.onEvent.addListener((source, method, params) => relay.onEvent(source, method, params || {}));
chrome.debugger.onDetach.addListener((source, reason) => {
  relay.onDetach(source, reason);
  updateBadge();
});
chrome.tabs.onUpdated.addListener(async (tabId, change) => {
  await relay.onTabUpdated(tabId, change);
  if (settings.mode === "all" && change.url !== undefined) await applySharing();
});
chrome.webNavigation.onCreatedNavigationTarget.addListener(async (details) => {
  // A page opened from a shared tab (window.open, a target=_blank link) is the agent's to see.
  if (await relay.onNavigationTarget(details)) agentTabs.add(details.tabId);
  updateBadge();
});
chrome.tabs.onCreated.addListener(async () => {
  if (settings.mode === "all") await applySharing();
});
chrome.tabs.onRemoved.addListener((tabId) => {
  agentTabs.delete(tabId);
  relay.onTabRemoved(tabId);
  updateBadge();
});

// A worker that was stopped while the bridge was away comes back here and retries.
chrome.alarms.create("reconnect", { periodInMinutes: 0.5 });
chrome.alarms.onAlarm.addListener(async () => {
  await loaded;
  if (settings.code && !socket && !retryTimer) connect();
});

// --- the popup -----------------------------------------------------------------------

chrome.runtime.onMessage.addListener((message, sender, reply) => {
  handlePopup(message).then(reply, (error) => reply({ error: String(error.message || error) }));
  return true; // answered asynchronously
});

async function handlePopup(message) {
  await loaded;
  if (message.type === "pair") {
    settings.port = Number(message.port) || DEFAULT_PORT;
    settings.code = String(message.code || "").trim();
    await save();
    disconnect();
    attempt = 0;
    status = settings.code ? "connecting" : "unpaired";
    connect();
  } else if (message.type === "unpair") {
    settings.code = "";
    await save();
    disconnect();
    status = "unpaired";
    updateBadge();
  } else if (message.type === "share") {
    settings.mode = message.mode;
    if (message.picked) settings.picked = message.picked.map(Number);
    if (message.mode === "current" && message.current !== undefined) settings.current = Number(message.current);
    await save();
    await applySharing();
  }
  return snapshot();
}

// tabId -> {url, value}: whether the page at url has document.modelContext (see modelContextIn).
const webmcpSeen = new Map();

/** true / false for a shared, attached tab's page; null when not known (yet). Cached per URL. */
async function webmcpOf(tab) {
  if (!relay.attached.has(tab.id)) return null;
  const url = tab.url || tab.pendingUrl || "";
  const seen = webmcpSeen.get(tab.id);
  if (seen && seen.url === url && seen.value !== null) return seen.value;
  const value = await relay.modelContextIn(tab.id);
  webmcpSeen.set(tab.id, { url, value });
  return value;
}

async function snapshot() {
  const shared = new Set(await sharedTabIds());
  const open = await chrome.tabs.query({});
  for (const tabId of [...webmcpSeen.keys()]) if (!relay.attached.has(tabId)) webmcpSeen.delete(tabId);
  const webmcp = await Promise.all(open.map(webmcpOf));
  const tabs = open.map((t, i) => ({
    id: t.id,
    title: t.title || "",
    url: t.url || t.pendingUrl || "",
    shareable: shareable(t.url || t.pendingUrl),
    shared: shared.has(t.id),
    attached: relay.attached.has(t.id),
    webmcp: webmcp[i],
  }));
  return {
    status,
    description: describe(),
    port: settings.port,
    paired: Boolean(settings.code),
    mode: settings.mode,
    picked: settings.picked,
    current: settings.current,
    tabs,
  };
}

loaded.then(async () => {
  await applySharing(); // the shared set is known before the bridge asks for it
  connect();
});
