/* Harbor Help Desk — helpers shared by every page (vanilla JS, no build step). */
"use strict";

window.Harbor = (() => {
  /** Call the JSON API; throws Error(message) on a non-2xx answer. */
  async function api(path, { method = "GET", body, signal } = {}) {
    const init = { method, signal, headers: {} };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers["Content-Type"] = "application/json";
    }
    const res = await fetch(path, init);
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
    return data;
  }

  /** Put a polite message in the page's role="status" live region. */
  function say(message) {
    const el = document.querySelector('[role="status"]');
    if (el) el.textContent = message;
  }

  /** Show an error in the page's role="alert" element ("" clears it). */
  function showError(message) {
    const el = document.querySelector('[role="alert"]');
    if (el) el.textContent = message;
  }

  /** Append a line to the page's activity log, if it has one. */
  function log(message) {
    const list = document.getElementById("activity");
    if (!list) return;
    const li = document.createElement("li");
    li.textContent = `${new Date().toLocaleTimeString()} — ${message}`;
    list.prepend(li);
    while (list.children.length > 8) list.lastElementChild.remove();
  }

  /**
   * Register an imperative WebMCP tool on document.modelContext.
   * Calls are logged to "Recent activity", except those of a `quiet` tool (a read that
   * leaves the page as it is); failures are always logged.
   * Returns the AbortController whose abort() unregisters the tool.
   */
  function registerTool(tool, { quiet = false } = {}) {
    const controller = new AbortController();
    const mc = document.modelContext;
    if (!mc || typeof mc.registerTool !== "function") {
      console.warn(`WebMCP unavailable; tool ${tool.name} not registered`);
      return controller;
    }
    const wrapped = {
      ...tool,
      async execute(input, options) {
        if (!quiet) log(`Agent called ${tool.name}`);
        try {
          return await tool.execute(input || {}, options || {});
        } catch (err) {
          log(`${tool.name} failed: ${err.message}`);
          throw err;
        }
      },
    };
    try {
      Promise.resolve(mc.registerTool(wrapped, { signal: controller.signal })).catch((err) =>
        showError(`Could not register tool ${tool.name}: ${err.message}`));
    } catch (err) {
      showError(`Could not register tool ${tool.name}: ${err.message}`);
    }
    return controller;
  }

  /** Resolve after ms milliseconds, or reject with the signal's reason when aborted. */
  function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal && signal.aborted) return reject(signal.reason || new DOMException("Aborted", "AbortError"));
      const timer = setTimeout(resolve, ms);
      if (signal) {
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(signal.reason || new DOMException("Aborted", "AbortError"));
        }, { once: true });
      }
    });
  }

  /** Read a query-string parameter. */
  function param(name, fallback = null) {
    const value = new URLSearchParams(location.search).get(name);
    return value === null ? fallback : value;
  }

  /** Create an element with text content and optional class. */
  function el(tag, text = "", className = "") {
    const node = document.createElement(tag);
    if (text !== "") node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  /** A badge span for a status or priority value. */
  function badge(value) {
    return el("span", value, `badge ${value}`);
  }

  // Say so when the browser shows this page again from its back-forward cache (no reload).
  addEventListener("pageshow", (event) => {
    if (event.persisted) log("Page restored from the back-forward cache");
  });

  return { api, say, showError, log, registerTool, sleep, param, el, badge };
})();
