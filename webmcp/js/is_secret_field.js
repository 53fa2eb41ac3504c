// `is_secret_field` of view/secrets.py for a live element, in the page: called with the rule's
// word lists (`autocomplete`, `words`, `joined`, `textTypes`), it answers `isSecretField(el)`.
(rules) => {
  const AUTO = new Set(rules.autocomplete);
  const WORDS = new Set(rules.words);
  const JOINED = rules.joined;
  const TEXT = new Set(rules.textTypes);
  return function isSecretField(el) {
    const words = (s) => String(s || "").replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase()
      .split(/[^a-z0-9]+/).filter(Boolean);
    const says = (s) => { const w = words(s); if (w.some((x) => WORDS.has(x))) return true;
      const j = w.join(""); return JOINED.some((x) => j.includes(x)); };
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
    return texts.some(says);
  };
}
