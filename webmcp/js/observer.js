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
  new MutationObserver((records) => {
    for (const r of records) {
      // Text: its element. Children: the parent. An attribute (a class, hidden, style) may also
      // change how the element's neighbours look (CSS `+`) and where the text beside it breaks.
      note(r.target);
      if (r.type === 'attributes' && r.target.nodeType === 1) {
        if (r.target.previousElementSibling) note(r.target.previousElementSibling);
        if (r.target.nextElementSibling) note(r.target.nextElementSibling);
      }
    }
    ping();
  }).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
  const changedBy = (e) => {
    const t = e.target;
    if (t === document || t === window || !t || t.nodeType !== 1) { everything = true; return; }
    note(t);
    if (e.type === 'focusin' && e.relatedTarget) note(e.relatedTarget);
    // A checked radio button unchecks the others of its group, which hear nothing.
    if (t.localName === 'input' && t.type === 'radio' && t.name) {
      for (const other of (t.form ?? document).querySelectorAll('input[type=radio]')) if (other.name === t.name) note(other);
    }
  };
  for (const type of ['input', 'change', 'toggle', 'close', 'focusin'])
    document.addEventListener(type, (e) => { changedBy(e); ping(); }, true);
  // Hands over what changed and forgets it (one step: nothing is lost between): "all", or the
  // changed elements that are still in the document, none inside another, with the elements
  // whose name or relations come from them (a `<label for>`'s control, `aria-labelledby`, ...).
  // "all" past `limit` of them, on a document of more than `most` elements, or when they hold
  // more than three quarters of it (reading them would cost as much as reading all).
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
      if (record && shown.has(el) && shown.get(el) !== now) note(el);
      shown.set(el, now);
    }
  };
  compare(false);
  // Whether anything changed since the last take (the check of WEBMCP_VERIFY_INCREMENTAL).
  globalThis.__webmcpBridgeChangePending = () => {
    if (everything || changed.size > 0) return true;
    for (const el of controls()) if (shown.has(el) && shown.get(el) !== looks(el)) return true;
    return false;
  };
  globalThis.__webmcpBridgeTakeChanged = (limit, most) => {
    compare(true);
    const all = everything, found = [...changed];
    everything = false; changed.clear();
    const size = document.getElementsByTagName('*').length;
    if (all || size > most || document.querySelector('[aria-owns]')) return 'all';
    let roots = found.filter((el) => el.isConnected);
    const touches = (t) => roots.some((r) => r.contains(t) || t.contains(r));
    const referring = [];
    for (const el of document.querySelectorAll(REFS.map((a) => `[${a}]`).join(','))) {
      const ids = REFS.flatMap((a) => (el.getAttribute(a) || '').split(/\s+/)).filter(Boolean);
      if (ids.some((id) => { const t = document.getElementById(id); return !t || touches(t); })) referring.push(el);
    }
    for (const label of document.querySelectorAll('label')) {
      if (label.control && touches(label)) referring.push(label.control);
    }
    roots = [...new Set([...roots, ...referring])];
    roots = roots.filter((el) => !roots.some((other) => other !== el && other.contains(el)));
    if (roots.length > limit) return 'all';
    let inside = 0;
    for (const el of roots) inside += el.getElementsByTagName('*').length + 1;
    return inside * 4 > size * 3 ? 'all' : roots;
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
