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
  new MutationObserver(ping).observe(document, {subtree: true, childList: true, characterData: true,
    attributes: true});
  for (const type of ['input', 'change', 'toggle', 'close', 'focusin'])
    document.addEventListener(type, ping, true);
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
