// Runs on a node in the isolated world: is it rendered, and how much of it is not clipped
// away by a scrolling ancestor? Coordinates are the frame's viewport's; the box model
// gives the main viewport's, which accounts for iframes (uicontext/locate.py).
(function() {
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el || !el.isConnected) return {connected: false};
  const shown = el.checkVisibility({visibilityProperty: true, contentVisibilityAuto: true});
  let r = el.getBoundingClientRect();
  let x1 = r.left, y1 = r.top, x2 = r.right, y2 = r.bottom;
  for (let a = el.parentElement; a && shown; a = a.parentElement) {
    const s = getComputedStyle(a);
    if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
    const c = a.getBoundingClientRect();
    x1 = Math.max(x1, c.left); y1 = Math.max(y1, c.top); x2 = Math.min(x2, c.right); y2 = Math.min(y2, c.bottom);
  }
  const view = el.ownerDocument.defaultView;
  x1 = Math.max(x1, 0); y1 = Math.max(y1, 0); x2 = Math.min(x2, view.innerWidth); y2 = Math.min(y2, view.innerHeight);
  return {connected: true, shown, inView: x2 > x1 && y2 > y1, top: view === view.top,
          innerWidth: view.top === view ? view.innerWidth : 0, innerHeight: view.top === view ? view.innerHeight : 0};
})
