// Runs in the isolated world (uicontext/locate.py). Returns an array of elements; `list.info` (a JSON
// string) carries per-element [parentIndex, flags] and page facts. Ancestors are kept only when
// they may be semantic (a landmark, a list, a form…): the AX role is decided afterwards.
// `isSecretField`: the element-level rule of view/secrets.py; `secret`: its CSS superset.
(isSecretField, secret, maxHeadings, maxLandmarks, maxSelected) => {
  const SEMANTIC = /^(MAIN|NAV|HEADER|FOOTER|ASIDE|FORM|SECTION|ARTICLE|DIALOG|TABLE|TR|TD|TH|UL|OL|LI|DL|MENU|FIELDSET|DETAILS|SUMMARY|SELECT|OPTION|IFRAME|A|BUTTON|H[1-6]|INPUT|TEXTAREA|FIGURE|LABEL)$/;
  const LANDMARKS = 'main,nav,aside,header,footer,form,dialog[open],section[aria-label],section[aria-labelledby],' +
    '[role=main],[role=navigation],[role=banner],[role=contentinfo],[role=complementary],[role=region],' +
    '[role=search],[role=form],[role=dialog],[role=alertdialog]';
  const HEADINGS = 'h1,h2,h3,h4,h5,h6,[role=heading]';
  const els = [], meta = [], index = new Map();
  const brands = (navigator.userAgentData && navigator.userAgentData.brands || []).map((b) => b.brand);
  const facts = {visible: document.visibilityState === 'visible', hasFocus: document.hasFocus(), innerWidth,
    innerHeight, brands, title: document.title, url: location.href};
  if (!facts.visible) { els.info = JSON.stringify({...facts, meta}); return els; }  // a background tab: no more
  const parentOf = (el) => {
    if (el.parentElement) return el.parentElement;
    const root = el.parentNode;
    if (root && root.host) return root.host;
    try { return el.ownerDocument.defaultView.frameElement; } catch (e) { return null; }
  };
  const semantic = (el) => { const r = el.getAttribute('role');
    return r ? !/^(none|presentation|generic)$/.test(r) : SEMANTIC.test(el.tagName); };
  const add = (el, flag, force, withText) => {
    const chain = [];
    for (let cur = el, first = true; cur && cur.nodeType === 1; cur = parentOf(cur), first = false) {
      if (cur.tagName === 'HTML' || cur.tagName === 'BODY') continue;
      if (first || force || index.has(cur) || semantic(cur)) chain.push(cur);
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      const cur = chain[i];
      if (!index.has(cur)) {
        index.set(cur, els.length); els.push(cur);
        meta.push([i + 1 < chain.length ? index.get(chain[i + 1]) : -1, 0]);
      }
    }
    if (chain.length && chain[0] === el) {
      const m = meta[index.get(el)]; m[1] |= flag;
      try { if (el.matches(secret) || isSecretField(el)) m[1] |= 8; } catch (e) {}
      // Text of what the user points at (and of headings), as rendered: a title when the element has
      // no accessible name, or when its name is that text with spaces Chromium adds at <wbr>.
      if ((flag & 7 || withText) && m.length < 3 && !(m[1] & 8)) m.push((el.innerText || '').trim().replace(/\s+/g, ' ').slice(0, 80));
    }
  };
  const deep = (el, step) => { for (let n = 0; el && n < 32; n++) { const next = step(el); if (!next) break; el = next; }
    return el; };
  const inner = (el) => { if (el.shadowRoot && el.shadowRoot.activeElement) return el.shadowRoot.activeElement;
    if (el.tagName === 'IFRAME') { try { return el.contentDocument.activeElement; } catch (e) {} } return null; };
  const focused = deep(document.activeElement, inner);
  const hovers = document.querySelectorAll(':hover');
  let hovered = hovers.length ? hovers[hovers.length - 1] : null;
  if (hovered && hovered.tagName === 'IFRAME') { try { const h = hovered.contentDocument.querySelectorAll(':hover');
    if (h.length) hovered = h[h.length - 1]; } catch (e) {} }
  const pointed = [];
  if (focused && focused !== document.body && focused !== document.documentElement) { add(focused, 1); pointed.push(focused); }
  if (hovered && hovered.tagName !== 'BODY' && hovered.tagName !== 'HTML') { add(hovered, 2); pointed.push(hovered); }
  const sel = document.getSelection();
  if (sel && sel.rangeCount && !sel.isCollapsed) { let n = sel.getRangeAt(0).commonAncestorContainer;
    if (n.nodeType !== 1) n = n.parentElement; if (n && n !== document.body) { add(n, 4); pointed.push(n); } }
  if (focused && typeof focused.selectionStart === 'number' && focused.selectionStart !== focused.selectionEnd) add(focused, 4);
  let picked = 0;
  for (const el of document.querySelectorAll('[aria-selected=true],select option:checked')) {
    if (picked++ >= maxSelected) break; add(el, 4);
  }
  const landmarks = document.querySelectorAll(LANDMARKS);
  for (let i = 0; i < landmarks.length && i < maxLandmarks; i++) add(landmarks[i], 16, true);
  const headings = document.querySelectorAll(HEADINGS);
  const before = (a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
  for (const el of pointed) {  // the nearest heading above each pointed-at element places it
    let lo = 0, hi = headings.length - 1, best = -1;
    while (lo <= hi) { const mid = (lo + hi) >> 1;
      if (headings[mid] === el || before(headings[mid], el)) { best = mid; lo = mid + 1; } else hi = mid - 1; }
    if (best >= 0 && el.ownerDocument === document) add(headings[best], 16, false, true);
  }
  for (let i = 0, n = 0; i < headings.length && n < maxHeadings; i++) {
    if (/^H[12]$/.test(headings[i].tagName) || i < 3) { add(headings[i], 16, false, true); n++; }
  }
  // Document order, ancestors first; parents are remapped to the new positions.
  const order = els.map((_, i) => i).sort((a, b) => a === b ? 0 :
    (els[a].compareDocumentPosition(els[b]) & Node.DOCUMENT_POSITION_FOLLOWING) ? -1 : 1);
  const rank = new Map(order.map((old, pos) => [old, pos]));
  const sorted = order.map((i) => els[i]);
  sorted.info = JSON.stringify({...facts,
    meta: order.map((i) => [meta[i][0] < 0 ? -1 : rank.get(meta[i][0]), ...meta[i].slice(1)])});
  return sorted;
}
