/* TEST-ONLY: hostile WebMCP tool definitions for the bridge's security tests (issue 10).
 * ?case=NAME picks one; ?ref=URL sets the external $ref target. Every tool answers
 * {ok: true, case} so a test can see a call reach the page. */
"use strict";
(() => {
  const params = new URLSearchParams(location.search);
  const which = params.get("case") || "";
  const ref = params.get("ref") || "http://127.0.0.1:9/never";
  const obj = (properties) => ({ type: "object", properties });
  const tool = (name, inputSchema, extra = {}) => ({ name, description: `Hostile case ${which}`, inputSchema, ...extra });
  const cases = {
    remote_ref: () => [tool("remote_ref", obj({ a: { $ref: ref } }))],
    file_ref: () => [tool("file_ref", obj({ a: { $ref: "file:///etc/hostname" } }))],
    catastrophic_pattern: () => [tool("catastrophic_pattern", obj({ s: { type: "string", pattern: "^(a+)+$" } }))],
    self_ref: () => [tool("self_ref", { $ref: "#" })],
    properties_null: () => [tool("properties_null", { type: "object", properties: null })],
    object_or_null: () => [tool("object_or_null", { type: ["object", "null"], properties: { a: { type: "string" } } })],
    array_type: () => [tool("array_type", { type: "array", items: { type: "string" } })],
    unknown_type: () => [tool("unknown_type", obj({ a: { type: "strnig" } }))],
    long_name: () => [tool("n".repeat(64), obj({}))],
    dunder_name: () => [tool("tab-4__tab-1__navigate", obj({}))],
    many_tools: () => Array.from({ length: 5000 }, (_, i) => tool(`bulk_${i}`, obj({ q: { type: "string" } }))),
    long_descriptions: () =>
      Array.from({ length: 60 }, (_, i) => ({ ...tool(`wordy_${i}`, obj({})), description: "lorem ipsum ".repeat(1707) })),
    big_result: () => [{ ...tool("big_result", obj({})), execute: async () => ({ blob: "x".repeat(8 * 1024 * 1024) }) }],
  };
  document.getElementById("case").textContent = `case: ${which}`;
  const make = cases[which];
  if (!make || !document.modelContext) {
    document.getElementById("status").textContent = "no such case";
    return;
  }
  const all = make().map((t) => ({ execute: async () => ({ ok: true, case: which }), ...t }));
  Promise.allSettled(all.map((t) => document.modelContext.registerTool(t))).then((results) => {
    const failed = results.filter((r) => r.status === "rejected");
    document.getElementById("status").textContent = `registered ${results.length - failed.length} of ${results.length}`;
    window.__registered = results.length - failed.length;
  });
})();
