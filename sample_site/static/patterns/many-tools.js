/* A script on the shop page that registers 300 tools of its own (issue 18, item 7): think of a
 * third-party widget or a generated API surface. `?bulk=before` (the default) runs it before
 * the shop's own tools, `?bulk=after` after them, `?bulk=0` not at all. */
"use strict";

window.registerBulkTools = (count) => {
  const mc = document.modelContext;
  if (!mc || typeof mc.registerTool !== "function") return;
  for (let n = 0; n < count; n += 1) {
    mc.registerTool({
      name: `bulk_${n}`,
      description: `Generated operation number ${n}.`,
      inputSchema: { type: "object", properties: { value: { type: "integer" } } },
      execute: ({ value }) => ({ bulk: n, value: value ?? null }),
    }).catch(() => {});
  }
};
