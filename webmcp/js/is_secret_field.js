// `is_secret_field` of view/secrets.py for a live element, in the page: called with the rule's
// lists (`autocomplete`, `terms`, `run`, `textTypes`), it answers `isSecretField(el)`.
// Cheapest checks first: it runs on every field of every read. The computed style comes last.
(rules) => {
  const AUTO = new Set(rules.autocomplete);
  const TERMS = new Set(rules.terms);
  const RUN = rules.run;
  const TEXT = new Set(rules.textTypes);
  const words = (s) => String(s || "").replace(/([a-z])([A-Z])|([A-Z])([A-Z][a-z])/g, "$1$3 $2$4").toLowerCase()
    .split(/[^a-z]+/).filter(Boolean);
  const says = (s) => {
    const w = words(s);
    for (let i = 0; i < w.length; i++) {
      let joined = "";
      for (let j = i; j < w.length && j < i + RUN; j++) { joined += w[j]; if (TERMS.has(joined)) return true; }
    }
    return false;
  };
  return function isSecretField(el) {
    const attr = (n) => (el.getAttribute && el.getAttribute(n)) || "";
    const tag = String(el.localName || "").toLowerCase();
    if (tag === "input") {
      const kind = attr("type").trim().toLowerCase();
      if (kind === "password" || el.type === "password") return true;
      if (!TEXT.has(kind)) return false;
    } else if (tag !== "textarea" && !(attr("role").trim().toLowerCase() === "textbox" && el.isContentEditable)) {
      return false;
    }
    if (attr("autocomplete").toLowerCase().split(/\s+/).some((t) => AUTO.has(t))) return true;
    const texts = [attr("name"), attr("id"), attr("aria-label"), attr("placeholder"), attr("title")];
    for (const l of el.labels || []) texts.push(l.textContent);
    for (const id of attr("aria-labelledby").split(/\s+/).filter(Boolean)) {
      const ref = el.ownerDocument.getElementById(id); if (ref) texts.push(ref.textContent);
    }
    if (texts.some(says)) return true;
    // Dots drawn by CSS (`-webkit-text-security: disc`): the page itself treats the text as secret.
    const view = el.ownerDocument && el.ownerDocument.defaultView;
    const security = view && view.getComputedStyle ? view.getComputedStyle(el).getPropertyValue("-webkit-text-security") : "";
    return !["", "none"].includes(String(security || "").trim().toLowerCase());
  };
}
