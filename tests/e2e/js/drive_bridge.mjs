// Drive the bridge with the official TypeScript MCP SDK, as a new user's host would.
//
//   node drive_bridge.mjs stdio <command> [args...]
//   node drive_bridge.mjs http <url> <token>
//
// Lists tools, reads and subscribes to app://windows, calls a page tool that changes the
// page (and waits for resources/updated), calls one that reads, and one with bad input.
// Prints one JSON report on stdout; exits non-zero with a message on stderr on failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const WAIT_MS = 20_000;
const [mode, ...rest] = process.argv.slice(2);

function transportFor() {
  if (mode === "stdio") {
    const [command, ...args] = rest;
    return new StdioClientTransport({ command, args, stderr: "inherit" });
  }
  if (mode === "http") {
    const [url, token] = rest;
    return new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
  }
  throw new Error(`unknown mode ${mode}: use stdio or http`);
}

/** A promise for the next notification a handler signals, rejected after WAIT_MS. */
function nextSignal(holder, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${WAIT_MS} ms`)), WAIT_MS);
    // A signal armed and never awaited (the last round of the tool-list loop) must not keep node
    // running until it fires: the report is written, and the test waited 20 s for the exit.
    timer.unref();
    holder.wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

const client = new Client({ name: "webmcp-bridge-e2e", version: "1.0.0" });
const toolsChanged = { wake: () => {} };
const updated = { wake: () => {}, uris: [] };
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => toolsChanged.wake());
client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
  updated.uris.push(n.params.uri);
  updated.wake();
});

const report = {};

/** The result of a call, or `{thrown}` when the client itself rejected it (e.g. schema checks). */
async function attempt(call) {
  try {
    return await call();
  } catch (err) {
    return { thrown: String(err.message || err) };
  }
}

try {
  await client.connect(transportFor());
  report.server = client.getServerVersion();
  report.capabilities = client.getServerCapabilities();

  // The page's tools arrive once the bridge has attached to the tab: re-list on each change.
  const deadline = Date.now() + WAIT_MS;
  let tools = [];
  for (;;) {
    const changed = nextSignal(toolsChanged, "tools/list_changed");
    changed.catch(() => {});
    tools = (await client.listTools()).tools;
    if (tools.some((t) => t.name.endsWith("__get_ticket")) || Date.now() > deadline) break;
    await changed;
  }
  report.toolNames = tools.map((t) => t.name);
  const tab = tools.find((t) => t.name.endsWith("__get_ticket")).name.split("__")[0];
  report.tab = tab;

  const windows = await client.readResource({ uri: "app://windows" });
  report.windows = JSON.parse(windows.contents[0].text);

  await client.subscribeResource({ uri: "app://windows" });
  const update = nextSignal(updated, "resources/updated");
  const closed = await client.callTool({ name: `${tab}__close_ticket`, arguments: { id: 102, resolution: "Fixed VAT" } });
  report.closed = closed;
  await update;
  report.updatedUris = updated.uris;

  report.ticket = await client.callTool({ name: `${tab}__get_ticket`, arguments: { id: 101 } });
  // The SDK checks structuredContent against the tool's outputSchema, error results too.
  report.badInput = await attempt(() =>
    client.callTool({ name: `${tab}__get_ticket`, arguments: { id: "one hundred" } }));
  report.noWindow = await attempt(() => client.callTool({ name: "tab-999__navigate", arguments: {} }));
} catch (err) {
  console.error(`drive_bridge: ${err.stack || err}`);
  process.exitCode = 1;
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(`${JSON.stringify(report)}\n`);
