/* The result shape of the `use-webmcp-tool` React hook, without React (issue 18, item 2).
 *
 * That hook wraps a tool's handler: what the handler returns becomes MCP's CallToolResult
 * ({content: [{type: "text", text}], structuredContent?}) and anything it throws becomes
 * {content: [{type: "text", text: message}], isError: true}: the page's execute never
 * throws, so WebMCP reports every failure as a Completed call. Pages built on it look
 * like this one.
 */
"use strict";

window.McpShape = (() => {
  function text(value) {
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  /** Register `tool`, whose `handler` returns a value or throws, as the hook would. */
  function registerShapedTool({ name, description, inputSchema, handler, structured = false }) {
    const mc = document.modelContext;
    if (!mc || typeof mc.registerTool !== "function") return null;
    const controller = new AbortController();
    mc.registerTool({
      name,
      description,
      inputSchema,
      async execute(input, options) {
        try {
          const value = await handler(input || {}, options || {});
          const result = { content: [{ type: "text", text: text(value) }] };
          if (structured && value && typeof value === "object") result.structuredContent = value;
          return result;
        } catch (err) {
          window.Harbor.log(`${name} failed: ${err.message}`);
          return { content: [{ type: "text", text: `Error: ${err.message}` }], isError: true };
        }
      },
    }, { signal: controller.signal }).catch(() => {});
    return controller;
  }

  return { registerShapedTool };
})();
