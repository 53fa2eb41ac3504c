// Meridian — shared chrome: cookie banner, toasts, the tag manager, and WebMCP registration.
// (Plain ES2020, no bundler; every page loads env.js, then this file, then its own script.)
var mrd = (function () {
  "use strict";
  var env = window.MERIDIAN_ENV || { cdn: "" };

  function $(sel, root) { return (root || document).querySelector(sel); }
  function $$(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }

  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "html") node.innerHTML = attrs[k];
      else if (k.slice(0, 2) === "on") node.addEventListener(k.slice(2), attrs[k]);
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { node.append(c); });
    return node;
  }

  function json(url, options) {
    var init = { headers: { Accept: "application/json" } };
    if (options && options.body !== undefined) {
      init.method = options.method || "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(options.body);
    }
    return fetch(url, init).then(function (r) {
      return r.json().then(function (data) {
        if (!r.ok) throw new Error(data.error || ("HTTP " + r.status));
        return data;
      });
    });
  }

  // The toast region is a polite live region; one message at a time, as most shops do.
  function toast(message) {
    var region = $("#toast");
    if (!region) return;
    region.textContent = message;
    region.classList.add("is-on");
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { region.classList.remove("is-on"); }, 4000);
  }

  // WebMCP: the page registers its own tools; a page that cannot, says nothing and goes on.
  function tool(spec) {
    var ctx = document.modelContext || navigator.modelContext;
    if (!ctx || typeof ctx.registerTool !== "function") return null;
    var controller = new AbortController();
    try {
      var pending = ctx.registerTool(spec, { signal: controller.signal });
      if (pending && pending.catch) pending.catch(function (e) { console.error("registerTool", spec.name, e); });
    } catch (e) {
      console.error("registerTool", spec.name, e);
    }
    return controller;
  }

  function cookieBanner() {
    var banner = $("#consent");
    if (!banner) return;
    if (localStorage.getItem("mrd-consent")) { banner.remove(); return; }
    $$("button[data-consent]", banner).forEach(function (b) {
      b.addEventListener("click", function () {
        localStorage.setItem("mrd-consent", b.dataset.consent);
        banner.remove();
      });
    });
  }

  // The tag manager: after the load event, as consent tools do, pull the vendor's loader from
  // its own host, and send a page-view beacon. The vendor's host never finishes either.
  function tags() {
    if (!env.cdn) return;
    var s = document.createElement("script");
    s.async = true;
    s.src = env.cdn + "/tag/loader.js?site=meridian&page=" + encodeURIComponent(location.pathname);
    document.head.appendChild(s);
    fetch(env.cdn + "/img/hold/pv.gif?p=" + encodeURIComponent(location.pathname), { mode: "no-cors" }).catch(function () {});
  }

  function searchBox() {
    var form = $("#site-search");
    if (!form) return;
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var q = $("input", form).value.trim();
      location.href = "/shop/?q=" + encodeURIComponent(q);
    });
  }

  document.addEventListener("DOMContentLoaded", function () { cookieBanner(); searchBox(); });
  window.addEventListener("load", function () { setTimeout(tags, 0); });

  return { $: $, $$: $$, h: h, json: json, toast: toast, tool: tool, cdn: env.cdn };
})();
