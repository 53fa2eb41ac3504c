// The change observer and the write guard's input counter and hold, in the bridge's isolated
// world of every frame (desktop/live_view.py): the page cannot see it, call `binding`, or fake a change.
(binding) => {
  if (globalThis.__webmcpBridgeObserving) return; globalThis.__webmcpBridgeObserving = true;
  // The first change is reported at once (so a tool's effect is known before its answer
  // arrives); further changes within 15 ms are folded into one report at the end.
  let timer = 0, again = false;
  const fire = () => {
    globalThis[binding]('');
    timer = setTimeout(() => { timer = 0; if (again) { again = false; fire(); } }, 15);
  };
  const ping = () => { if (timer) { again = true; return; } fire(); };
  // The top document's first contentful paint (text, an image, a canvas): until it, a person sees
  // nothing of the page (its parser held by a script, its render by a stylesheet), whatever the
  // document holds. A hidden document paints nothing: it says so instead (desktop/navigation.py).
  if (window === window.top) {
    if (document.visibilityState !== 'visible') globalThis[binding]('hidden');
    else {
      try {
        new PerformanceObserver((list, observer) => {
          if (!list.getEntries().some((e) => e.name === 'first-contentful-paint')) return;
          observer.disconnect();
          globalThis[binding]('painted');
        }).observe({type: 'paint', buffered: true});
      } catch { globalThis[binding]('hidden'); }
    }
  }
  // What changed since the bridge last took it (`__webmcpBridgeTakeChanged`, live_view.py): the
  // elements whose subtrees a read must read again, or `everything` when a few cannot say it.
  const changed = new Set();
  let everything = false;
  const top = (el) => el === document.documentElement || el === document.body || el === document.head;
  const note = (node) => {
    if (everything) return;
    const el = node && (node.nodeType === 1 ? node : node.parentElement);
    if (!el || top(el) || el.closest('head')) { everything = true; return; }
    changed.add(el);
    if (changed.size > 400) everything = true;
  };
  const restyle = (node) => {
    note(node);
    if (!everything && node.nodeType === 1) touched.add(node);
  };
  // What each change may have done to the layout, for the bridge's read of the text layout
  // (cdp_bridge/layout.py): elements whose attributes changed, by name (at the take, those a style
  // rule may read are restyled: their neighbours that a CSS sibling rule may restyle are taken as
  // changed too, and those whose text layout may move beside them are named); elements whose
  // children or text changed (what they hold was laid out again, not they themselves); elements an
  // event or a script-set value touched (restyled as far as anyone can tell: `:focus`, `:checked`).
  const attributes = new Map();
  const contents = new Set();
  const touched = new Set();
  // Elements whose only change is to their list of children, by elements (`listed`: the elements
  // added to each), and elements changed otherwise too (`plain`): at the take, the children such an
  // element kept may be kept as the last read has them (`relistable`).
  const listed = new Map();
  const plain = new Set();
  // Attributes set back to the value they had at the last take (`el.hidden = true` on a hidden
  // element, a class added and removed): the element reads the same, attribute for attribute.
  const putBack = () => {
    for (const [el, names] of attributes) {
      for (const [name, old] of names) if (el.getAttribute(name) === old) names.delete(name);
      if (names.size) continue;
      attributes.delete(el);
      if (!contents.has(el) && !touched.has(el)) changed.delete(el);
    }
  };
  // Texts put back as they were (`el.textContent = String(count)` with the count it showed): the
  // document reads the same, text node for text node.
  const unchangedText = (r) => r.type === 'childList' && r.addedNodes.length > 0 &&
    r.addedNodes.length === r.removedNodes.length &&
    [...r.addedNodes].every((n, i) => n.nodeType === 3 && r.removedNodes[i].nodeType === 3 && n.data === r.removedNodes[i].data);
  new MutationObserver((records) => {
    for (const r of records) {
      if (unchangedText(r)) continue;
      // Text: its element. Children: the parent. An attribute (a class, hidden, style): the
      // element, and its neighbours at the take (`besides`).
      note(r.target);
      if (everything) continue;
      if (r.type === 'attributes') {
        if (r.target.nodeType !== 1) continue;
        // By name, with its value at the last take (the first record's old value).
        const names = attributes.get(r.target);
        if (!names) attributes.set(r.target, new Map([[r.attributeName, r.oldValue]]));
        else if (!names.has(r.attributeName)) names.set(r.attributeName, r.oldValue);
        if (attributes.size > 400) everything = true;
      } else {
        const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
        if (el) contents.add(el);
        if (r.type === 'childList' && r.target.nodeType === 1 && [...r.addedNodes].every((n) => n.nodeType === 1 || n.nodeType === 8)) {
          const added = listed.get(r.target);
          if (added) for (const n of r.addedNodes) added.add(n); else listed.set(r.target, new Set(r.addedNodes));
        } else if (el) plain.add(el);
      }
    }
    ping();
  }).observe(document, {subtree: true, childList: true, characterData: true, attributes: true, attributeOldValue: true});
  // What the page's style sheets say of neighbours: the compounds right after each `+` (`next`)
  // and `~` (`later`) of every selector, or null when that cannot be told (a sheet from another
  // origin, `:has()`, a sibling combinator inside `:is()`/`:not()`..., nesting with `&`).
  const SIBLING_OPAQUE = /:(has|is|where|not|matches|-webkit-any|host|host-context)\(|&/;
  const PSEUDO_ELEMENT = /(::[-a-zA-Z]+(\([^)]*\))?|:(before|after|first-line|first-letter))$/;
  const compounds = (selector, out) => {
    let depth = 0, quote = '';
    for (let i = 0; i < selector.length; i++) {
      const c = selector[i];
      if (quote) { if (c === '\\') i++; else if (c === quote) quote = ''; continue; }
      if (c === '"' || c === "'") quote = c;
      else if (c === '(' || c === '[') depth++;
      else if (c === ')' || c === ']') depth--;
      else if (depth === 0 && (c === '+' || c === '~')) {
        let j = i + 1, d = 0, q = '';
        while (j < selector.length && selector[j] === ' ') j++;
        const start = j;
        for (; j < selector.length; j++) {
          const k = selector[j];
          if (q) { if (k === '\\') j++; else if (k === q) q = ''; continue; }
          if (k === '"' || k === "'") q = k;
          else if (k === '(' || k === '[') d++;
          else if (k === ')' || k === ']') d--;
          else if (d === 0 && (k === ' ' || k === '>' || k === '+' || k === '~')) break;
        }
        let part = selector.slice(start, j);
        // Only the element matters: `li::before` is restyled with its `li`.
        part = part.replace(PSEUDO_ELEMENT, '');
        (c === '+' ? out.next : out.later).push(part || '*');
      }
    }
  };
  const sheets = () => [...document.styleSheets, ...(document.adoptedStyleSheets || [])];
  // The analyses of the style sheets below (what selectors read, sibling and position rules,
  // `attr()` in values) each walk every rule: tens of milliseconds a take on a site with thousands
  // of rules. Each is kept while the sheets hold the same rules: the same objects in the same
  // order, which a walk comparing objects tells in a tenth of that time (a sheet or rule added,
  // removed or replaced, by markup or script, makes them again). Asked at most once a take. A rule
  // edited in place by script (its `selectorText`, a value set on its `style`) is not seen, nor one
  // inserted by script into a style rule (CSS nesting): the walk looks into @media, @supports,
  // @layer... blocks, not into style rules (asking each for its nested rules doubles its time).
  const STYLE_RULE = 1;
  let sheetRules = null;
  const analysed = new Map();
  let checked = false;
  // Each sheet, each list's count of rules and each rule, in order (into @media, @supports...
  // blocks), to `visit`, until it answers false; false then.
  const eachRuleItem = (visit) => {
    const walk = (rules) => {
      if (!visit(rules.length)) return false;
      for (const rule of rules) {
        if (!visit(rule)) return false;
        if (rule.type !== STYLE_RULE && rule.cssRules && !walk(rule.cssRules)) return false;
      }
      return true;
    };
    for (const sheet of sheets()) {
      if (!visit(sheet)) return false;
      let rules;
      try { rules = sheet.cssRules; } catch { if (!visit(-1)) return false; continue; }
      if (!walk(rules)) return false;
    }
    return true;
  };
  const rulesNow = () => {
    const out = [];
    eachRuleItem((item) => out.push(item) > 0);
    return out;
  };
  const sameRules = (kept) => {
    let i = 0;
    return eachRuleItem((item) => kept[i++] === item) && i === kept.length;
  };
  const analysis = (name, make) => {
    if (!checked) {
      checked = true;
      if (sheetRules === null || !sameRules(sheetRules)) { analysed.clear(); sheetRules = rulesNow(); }
    }
    if (!analysed.has(name)) {
      analysed.set(name, make());
      globalThis.__webmcpBridgeSheetAnalyses = (globalThis.__webmcpBridgeSheetAnalyses || 0) + 1;
    }
    return analysed.get(name);
  };
  const siblingRules = () => {
    const out = {next: [], later: []};
    const walk = (rules) => {
      for (const rule of rules) {
        const text = rule.selectorText;
        if (typeof text === 'string' && /[+~]/.test(text)) {
          if (SIBLING_OPAQUE.test(text)) return false;
          compounds(text, out);
        }
        if (rule.cssRules && rule.cssRules.length && walk(rule.cssRules) === false) return false;
      }
      return true;
    };
    for (const sheet of sheets()) {
      let rules;
      try { rules = sheet.cssRules; } catch { return null; }
      if (!rules || walk(rules) === false) return null;
    }
    return out;
  };
  // What the page's style rules read that a change of content or of an ARIA or data attribute
  // could move: the attribute names their selectors name (`all` when a selector escapes a
  // character), whether a selector looks at what any element holds (`holds`: `:has()`), and the
  // compounds that look at whether their own element holds anything (`empties`: `.badge` of
  // `.badge:empty`; `*` where the rest cannot be told, `:not(:empty)`). Null when a sheet cannot
  // be read (another origin); and whether a selector names a pseudo-element that makes a box the
  // page cannot see (`pseudoBoxes`: `::first-letter`, `::scroll-marker`..., for `laidOut`). The
  // browser's own sheet names no `aria-` or `data-` attribute and looks at no element's contents
  // for its box.
  const ATTRIBUTE = /\[\s*(?:[-\w*]*\|)?([-\w]+)/g;
  const HOLDS = /:has\(/;
  const EMPTY = /:(empty|blank)\b/g;
  const PSEUDO_BOXES = /first-letter|::scroll-|::column|::check|::picker/i;
  const selectorReads = () => {
    const out = {names: new Set(), all: false, holds: false, empties: [], pseudoBoxes: false};
    const walk = (rules) => {
      for (const rule of rules) {
        const text = rule.selectorText;
        if (typeof text === 'string') {
          if (text.includes('\\')) out.all = true;
          if (HOLDS.test(text)) out.holds = true;
          if (PSEUDO_BOXES.test(text)) out.pseudoBoxes = true;
          if (text.match(EMPTY)) {
            for (const part of text.split(/\s*[\s>+~,]\s*/)) {
              if (!part.match(EMPTY)) continue;
              const left = part.replace(EMPTY, '').replace(PSEUDO_ELEMENT, '');
              out.empties.push(/[()]/.test(left) ? '*' : left || '*');
            }
          }
          for (const m of text.matchAll(ATTRIBUTE)) out.names.add(m[1].toLowerCase());
        }
        if (rule.cssRules && rule.cssRules.length) walk(rule.cssRules);
      }
    };
    for (const sheet of sheets()) {
      let rules;
      try { rules = sheet.cssRules; } catch { return null; }
      if (rules) walk(rules);
    }
    return out;
  };
  // Whether a value reads an attribute (`attr()`, in a rule or an inline style): any attribute may
  // then restyle. Asked only when an ARIA or data attribute changed (serializing rules costs).
  const valuesRead = () => {
    const walk = (rules) => {
      for (const rule of rules) {
        if (rule.style && rule.style.cssText.includes('attr(')) return true;
        if (rule.cssRules && rule.cssRules.length && walk(rule.cssRules)) return true;
      }
      return false;
    };
    for (const sheet of sheets()) if (walk(sheet.cssRules)) return true;
    return document.querySelector('[style*="attr("]') !== null;
  };
  const matchesAny = (el, selectors) => selectors.some((s) => { try { return el.matches(s); } catch { return true; } });
  // The neighbours of the restyled elements: those a sibling rule may restyle (`restyle`, read
  // again whole), and the next and previous one, whose text may now run on into it or stop at its
  // edge (`beside`: the bridge reads their layout again; `deep` when their own inner text does).
  const besides = (restyled) => {
    const restyle = [], beside = [], deep = [];
    if (!restyled.length) return {restyle, beside, deep};
    const rules = analysis('siblings', siblingRules);
    for (const el of restyled) {
      if (!el.isConnected) continue;
      const before = el.previousElementSibling, after = el.nextElementSibling;
      for (const near of [before, after]) {
        if (!near) continue;
        const display = getComputedStyle(near).display;
        (display === 'inline' || display === 'contents' ? deep : beside).push(near);
      }
      if (!rules) { if (before) restyle.push(before); if (after) restyle.push(after); continue; }
      if (after && matchesAny(after, rules.next)) restyle.push(after);
      if (rules.later.length) {
        for (let later = after; later; later = later.nextElementSibling) if (matchesAny(later, rules.later)) restyle.push(later);
      }
    }
    return {restyle, beside, deep};
  };
  // Whether the children an element kept through a change of its child list are, for the
  // accessibility tree, as they were (their nodes may then be kept as read; the added ones are
  // read, the removed ones dropped): no style rule can tell where they stand among their
  // siblings (no `+`/`~` compound, `:nth-child()`, `:first-child`... that they match, no
  // `:has()`, no counter or quote in a `content`), and they are blocks, so no text runs on
  // between them and what came or went. Null when a sheet cannot be read.
  const STRUCTURAL = /:(nth-child|nth-last-child|nth-of-type|nth-last-of-type|first-child|last-child|only-child|first-of-type|last-of-type|only-of-type)\b(\([^()]*\))?/g;
  const BLOCKS = new Set(['block', 'flex', 'grid', 'table', 'flow-root', 'none']);
  const positionRules = () => {
    const siblings = analysis('siblings', siblingRules);
    if (!siblings) return null;
    const out = [...siblings.next, ...siblings.later];
    let opaque = false;
    const walk = (rules) => {
      for (const rule of rules) {
        const text = rule.selectorText;
        if (typeof text === 'string') {
          if (/:has\(/.test(text)) opaque = true;
          if (STRUCTURAL.test(text)) {
            STRUCTURAL.lastIndex = 0;
            // The compounds that name a position, without it: an element that matches one may be
            // restyled by where it stands. One inside a function (`:not(:first-child)`): any element.
            for (const part of text.split(/\s*[\s>+~,]\s*/)) {
              if (!part.match(STRUCTURAL)) continue;
              const left = part.replace(STRUCTURAL, '').replace(PSEUDO_ELEMENT, '');
              out.push(/[()]/.test(left) ? '*' : left || '*');
            }
          }
          STRUCTURAL.lastIndex = 0;
        }
        const content = rule.style && rule.style.content;
        if (content && /counter|quote/.test(content)) opaque = true;
        if (rule.cssRules && rule.cssRules.length) walk(rule.cssRules);
      }
    };
    for (const sheet of sheets()) {
      let rules;
      try { rules = sheet.cssRules; } catch { return null; }
      if (rules) walk(rules);
    }
    return opaque ? null : out;
  };
  // The text layout of a relisted element's children as `DOMSnapshot.captureSnapshot` gives it
  // (cdp_bridge/layout.py `laid_out`): the element, its children, and all that the added ones hold,
  // in document order, each as [parent's index, node type, CSS display (null: no box), a text
  // node's text (null: no box)], with the elements. The kept children's insides are laid out as they
  // were (blocks whose style and contents did not change), so only they themselves and the added
  // ones are. Null when the page cannot tell it as the snapshot would: text beside the children,
  // white space alone in a box (whether it gets one depends on what is beside it), a box that a
  // pseudo-element makes (`::before`, a list marker, `::first-letter`...), `display: contents`,
  // skipped contents (`content-visibility: hidden`, a closed `<details>`), a shadow root or a
  // custom element, a masked text, or more than LAID_MAX nodes.
  const LAID_MAX = 400;
  const SPACE = /[^ \t\n\r\f]/;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const SVG_TEXT = new Set(['text', 'tspan', 'textPath']);
  const SVG_UNDRAWN = new Set(['title', 'desc', 'metadata']);
  const madeBox = (el) => ['::before', '::after'].some((p) => !['none', 'normal'].includes(getComputedStyle(el, p).content));
  const laidOut = (el, kids, displays, fresh) => {
    const style = getComputedStyle(el);
    if (!el.checkVisibility() || ['inline', 'contents', 'list-item'].includes(style.display)) return null;
    const reads = analysis('reads', selectorReads);
    if (style.contentVisibility === 'hidden' || madeBox(el) || reads === null || reads.pseudoBoxes) return null;
    for (const n of el.childNodes) if (n.nodeType === 3 && SPACE.test(n.data)) return null;
    const nodes = [el], tree = [[-1, 1, style.display, null]];
    // What `node` (at `at`, laid out in a box or not) holds, into nodes and tree; false: not to be told.
    const inside = (node, at, boxed) => {
      const svg = node.namespaceURI === SVG_NS && !SVG_TEXT.has(node.localName);
      for (const n of node.childNodes) {
        if (tree.length >= LAID_MAX) return false;
        if (n.nodeType === 3) {
          const drawn = boxed && !svg;
          if (drawn && !SPACE.test(n.data)) return false;
          // Only its edges and whether it holds more than white space count (layout.py `_gaps`); a
          // text node is not serialized (that would give all its text).
          tree.push([at, 3, null, drawn ? (n.data.length <= 2 ? n.data : n.data[0] + 'x' + n.data[n.data.length - 1]) : null]);
        } else if (n.nodeType === 1) {
          if (n.shadowRoot || n.localName.includes('-') || n.localName === 'details') return false;
          let display = null;
          if (boxed) {
            const s = getComputedStyle(n);
            if (['contents', 'list-item'].includes(s.display) || s.contentVisibility === 'hidden') return false;
            if (s.display !== 'none') {
              if (n.checkVisibility()) display = s.display;
              else if (!(n.namespaceURI === SVG_NS && SVG_UNDRAWN.has(n.localName))) return false;
            }
            if (display !== null && (madeBox(n) || !['none', ''].includes(s.webkitTextSecurity || ''))) return false;
          }
          nodes.push(n);
          tree.push([at, 1, display, null]);
          if (!inside(n, tree.length - 1, display !== null)) return false;
        }
      }
      return true;
    };
    for (let i = 0; i < kids.length; i++) {
      nodes.push(kids[i]);
      tree.push([0, 1, displays[i] === 'none' ? null : displays[i], null]);
      if (fresh.includes(kids[i]) && !inside(kids[i], tree.length - 1, displays[i] !== 'none')) return null;
      if (tree.length >= LAID_MAX) return null;
    }
    return {nodes, tree};
  };
  const ADDED_MAX = 4;
  const changedBy = (e) => {
    const t = e.target;
    if (t === document || t === window || !t || t.nodeType !== 1) { everything = true; return; }
    restyle(t);
    if (e.type === 'focusin' && e.relatedTarget) restyle(e.relatedTarget);
    // A checked radio button unchecks the others of its group, which hear nothing.
    if (t.localName === 'input' && t.type === 'radio' && t.name) {
      for (const other of (t.form ?? document).querySelectorAll('input[type=radio]')) if (other.name === t.name) restyle(other);
    }
  };
  // A submit or reset attempt restyles its form (`:user-invalid` once it was tried).
  for (const type of ['input', 'change', 'toggle', 'close', 'focusin', 'submit', 'reset'])
    document.addEventListener(type, (e) => { changedBy(e); ping(); }, true);
  // Hands over what changed and forgets it (one step: nothing is lost between): "all", or
  // `{roots, named, relisted, added, layouts, beside, deep, relaid, within, relayout}`: the changed
  // elements that are still in the document, none inside another (read again whole); the elements
  // whose name or relations come from them (a `<label for>`'s control, `aria-labelledby`, ...; their
  // own node is read again) that are neither inside nor above a root; the roots whose child list
  // alone changed, the children each gained and the text layout of its children (`laidOut`); the
  // neighbours whose text layout may have moved; the elements whose layout moved with what they
  // hold, and those where only what they hold did (`relayout`: too many to say, the whole layout
  // is read again).
  // "all" past `limit` of them, on a document of more than `most` elements, or when the roots
  // hold more than three quarters of it (reading them would cost as much as reading all).
  const REFS = ['aria-labelledby', 'aria-describedby', 'aria-controls', 'aria-details', 'aria-errormessage',
    'aria-flowto', 'aria-activedescendant'];
  // A script may set a control's value, checked state or validity with no mutation and no
  // event: what each control showed at the last take is kept, and a control that shows
  // something else is taken as changed.
  const shown = new WeakMap();
  const looks = (el) => `${el.value}\u0000${el.checked}\u0000${el.selectedIndex}\u0000${el.validity?.valid}`;
  const controls = () => document.querySelectorAll('input, textarea, select');
  const compare = (record) => {
    for (const el of controls()) {
      const now = looks(el);
      if (record && shown.has(el) && shown.get(el) !== now) restyle(el);
      shown.set(el, now);
    }
  };
  compare(false);
  // A whole read begins (live_view.py): what the fold holds is reported now, before the read's
  // answer, and the next change at once, so no report after that answer is of a change before it.
  globalThis.__webmcpBridgeFlush = () => {
    if (timer) { clearTimeout(timer); timer = 0; if (again) { again = false; globalThis[binding](''); } }
    return true;
  };
  // Whether anything changed since the last take (the check of WEBMCP_VERIFY_INCREMENTAL).
  globalThis.__webmcpBridgeChangePending = () => {
    if (everything || changed.size > 0 || attributes.size > 0) return true;
    for (const el of controls()) if (shown.has(el) && shown.get(el) !== looks(el)) return true;
    return false;
  };
  globalThis.__webmcpBridgeTakeChanged = (limit, most) => {
    // What the fold holds unreported is in this take: the next change is reported at once, so a
    // read that took every frame after their last reports has seen all they did (refresher.py).
    if (timer) { clearTimeout(timer); timer = 0; }
    again = false;
    checked = false;
    compare(true);
    // Whether it is "all" is told first: the neighbours' walk over the style sheets is not made for nothing.
    const size = document.getElementsByTagName('*').length;
    const all = everything || size > most || document.querySelector('[aria-owns]') !== null;
    let reads, values;
    const reading = () => (reads === undefined ? (reads = analysis('reads', selectorReads)) : reads);
    // An ARIA or data attribute that no style rule reads restyles nothing: its element's box and
    // its neighbours' stay as they were (a cart link's `aria-label` that counts the items).
    const unread = (name) =>
      (name.startsWith('aria-') || name.startsWith('data-')) && reading() !== null && !reads.all &&
      !reads.names.has(name.toLowerCase()) && !(values ??= analysis('values', valuesRead));
    // What holds something else now is restyled too, as far as anyone can tell, when a style rule
    // looks at contents (`:has()`) or a sheet cannot be read; and so is one that a rule's
    // `:empty` compound matches.
    const holds = !all && contents.size > 0 && (reading() === null || reads.holds);
    if (!all) putBack();
    const restyled = all ? [] : [...attributes].filter(([, names]) => [...names.keys()].some((n) => !unread(n))).map(([el]) => el);
    if (holds) restyled.push(...contents);
    else if (!all && contents.size > 0 && reads.empties.length) {
      for (const el of contents) if (matchesAny(el, reads.empties)) restyled.push(el);
    }
    const near = all ? null : besides(restyled);
    const relaid = new Set(all ? [] : [...restyled, ...near.restyle, ...touched]);
    const held = all ? [] : [...contents];
    const found = [...changed, ...(near ? near.restyle : [])];
    const lists = new Map(listed), otherwise = new Set([...plain, ...attributes.keys(), ...touched]);
    everything = false; changed.clear(); attributes.clear(); contents.clear(); touched.clear(); listed.clear(); plain.clear();
    if (all) return 'all';
    let roots = [...new Set(found.filter((el) => el.isConnected && !top(el)))];
    if (found.some((el) => el.isConnected && top(el))) return 'all';
    const touches = (t) => roots.some((r) => r.contains(t) || t.contains(r));
    const referring = [];
    for (const el of document.querySelectorAll(REFS.map((a) => `[${a}]`).join(','))) {
      const ids = REFS.flatMap((a) => (el.getAttribute(a) || '').split(/\s+/)).filter(Boolean);
      if (ids.some((id) => { const t = document.getElementById(id); return !t || touches(t); })) referring.push(el);
    }
    for (const label of document.querySelectorAll('label')) {
      if (label.control && touches(label)) referring.push(label.control);
    }
    roots = roots.filter((el) => !roots.some((other) => other !== el && other.contains(el)));
    // A root's ancestors are read again with it: a referring element above or inside one is.
    const named = [...new Set(referring)].filter((el) => !roots.some((r) => r.contains(el) || el.contains(r)));
    if (roots.length + named.length > limit) return 'all';
    // Roots whose only change is to their child list, with children kept as they were: their own
    // node and the added children are read, the kept children's nodes stay (`relisted`, `added`).
    let position;
    const relisted = [], added = [], layouts = [];
    for (const el of roots) {
      const adds = lists.get(el);
      if (!adds || otherwise.has(el)) continue;
      if (found.some((other) => other !== el && el.contains(other)) || referring.some((other) => other !== el && el.contains(other))) continue;
      const kids = [...el.children];
      const fresh = kids.filter((k) => adds.has(k));
      if (fresh.length > ADDED_MAX || fresh.length === kids.length) continue;
      const displays = [];
      for (const k of kids) { const d = getComputedStyle(k).display; if (!BLOCKS.has(d)) break; displays.push(d); }
      if (displays.length < kids.length) continue;
      if (position === undefined) position = analysis('position', positionRules);
      if (position === null || kids.some((k) => matchesAny(k, position))) continue;
      relisted.push(el);
      added.push(fresh);
      layouts.push(laidOut(el, kids, displays, fresh));
    }
    let inside = named.length;
    for (const el of roots) inside += el.getElementsByTagName('*').length + 1;
    if (inside * 4 > size * 3) return 'all';
    // The layout: what each restyled element holds, itself too (`relaid`), and what each element
    // whose children or text changed holds, not itself (`within`); each one inside no other.
    const laid = [...relaid, ...held].filter((el) => el.isConnected && !top(el));
    const covered = (el) => laid.some((r) => r !== el && r.contains(el));
    const whole = [...new Set(laid.filter((el) => relaid.has(el) && !covered(el)))];
    const within = [...new Set(laid.filter((el) => !relaid.has(el) && !covered(el)))];
    if (relisted.length) roots = roots.filter((el) => !relisted.includes(el));
    if (whole.length + within.length > limit) return {roots, named, relisted, added, layouts, beside: [], deep: [], relaid: [], within: [], relayout: true};
    const outside = (el) => el.isConnected && !whole.some((r) => r.contains(el)) && !within.some((r) => r !== el && r.contains(el));
    const deep = [...new Set(near.deep)].filter(outside);
    const beside = [...new Set(near.beside)].filter((el) => outside(el) && !deep.includes(el));
    return {roots, named, relisted, added, layouts, beside, deep, relaid: whole, within, relayout: false};
  };
  // The write guard (desktop/input_guard.py): what the person types is counted; while a
  // checked write starts, their keystrokes are held back and replayed once it has started.
  // While a write starts, Chromium itself fills a declarative form for the agent: one trusted
  // plain `input` Event per control, with no key, pointer or composition event before it. A
  // person's input is typed text (an InputEvent; held back below unless it is a composition)
  // or follows their key or pointer: only those move the counter then.
  globalThis.__webmcpBridgeInputs = 0;
  let hold = null;
  let gesture = false;
  for (const type of ['keydown', 'pointerdown', 'mousedown', 'touchstart', 'compositionstart'])
    document.addEventListener(type, (e) => { if (e.isTrusted) gesture = true; }, true);
  document.addEventListener('input', (e) => {
    if (e.isTrusted && (!hold || gesture || e instanceof InputEvent)) globalThis.__webmcpBridgeInputs++;
  }, true);
  globalThis.__webmcpBridgeHold = (expected, ms) => {
    if (globalThis.__webmcpBridgeInputs !== expected) return false;
    if (!hold) {
      gesture = false;
      hold = { queue: [], timer: setTimeout(() => globalThis.__webmcpBridgeRelease(), ms) };
    }
    return true;
  };
  globalThis.__webmcpBridgeRelease = () => {
    const held = hold; hold = null;
    if (!held) return 0;
    clearTimeout(held.timer);
    for (const key of held.queue) {
      if (key.target && key.target.isConnected && document.activeElement !== key.target) key.target.focus();
      const newline = key.type === 'insertLineBreak' || key.type === 'insertParagraph';
      if (newline) document.execCommand('insertText', false, '\n');
      else if (key.type === 'deleteContentBackward') document.execCommand('delete');
      else if (key.type === 'deleteContentForward') document.execCommand('forwardDelete');
      else if (key.type.startsWith('insert')) document.execCommand('insertText', false, key.data ?? '');
    }
    return held.queue.length;
  };
  document.addEventListener('beforeinput', (e) => {
    if (!hold || !e.isTrusted || !e.cancelable) return;
    e.preventDefault();
    hold.queue.push({ target: e.target, type: e.inputType, data: e.data });
  }, true);
  ping();
}
