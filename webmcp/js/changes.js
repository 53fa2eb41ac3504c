// What changed in this frame's document since the bridge last asked (live_view.read_changes), in
// the observer's isolated world: "all" (read the page whole), "none" (when `mayBeNone`: the
// bridge knows the frame's fields and form state as the last take gave them), or an array: a JSON string of
// counts and secret values, then the changed elements (observer.js: roots, named, beside, deep,
// and for the layout relaid and within), the secret fields (by the rule, then by the selector),
// the required controls and those shown invalid, and last the roots whose child list alone
// changed and the children added to each (`adds`: how many each), and the nodes of their
// children's text layout where the page tells it (`layouts`: each one's tree or null; `laid`: its
// elements); each node deep-serialized (its backend id) the first time only (`refs`).
(limit, most, findSecrets, secretSelector, requiredSelector, flaggedSelector, mayBeNone, known) => {
  const take = globalThis.__webmcpBridgeTakeChanged;
  if (typeof take !== 'function') return 'all';
  const taken = take(limit, most);
  if (taken === 'all') return 'all';
  const {roots, named, relisted, added, layouts, beside, deep, relaid, within, relayout} = taken;
  const laid = layouts.flatMap((l) => (l ? l.nodes : []));
  // Nothing changed: the secret fields, their values and the form state are as they were too
  // (a field set by script is a changed control, a restyled one a changed attribute).
  if (!roots.length && !named.length && !relisted.length && mayBeNone) return 'none';
  const secret = findSecrets();
  // Both selectors name form controls only (tests/desktop/test_incremental_take.py): matching the
  // controls against them finds what a document-wide query of theirs finds, in the same order, for a
  // fraction of its cost (the secret selector's 17 attribute tests ran on every element).
  const controls = [...document.querySelectorAll('input, textarea, select')];
  const selected = controls.filter((el) => el.matches(secretSelector));
  const required = controls.filter((el) => el.matches(requiredSelector));
  const flagged = [...document.querySelectorAll(flaggedSelector)];
  const values = [...secret.values, ...selected.map((el) => (typeof el.value === 'string' ? el.value : ''))];
  const meta = {roots: roots.length, named: named.length, beside: beside.length, deep: deep.length, relaid: relaid.length,
    within: within.length, secret: secret.elements.length + selected.length, required: required.length,
    flagged: flagged.length, relisted: relisted.length, added: added.flat().length, adds: added.map((a) => a.length),
    laid: laid.length, layouts: layouts.map((l) => (l ? l.tree : null)),
    values: values.filter((v) => typeof v === 'string' && v), relayout};
  const all = [...roots, ...named, ...beside, ...deep, ...relaid, ...within, ...secret.elements, ...selected,
    ...required, ...flagged, ...relisted, ...added.flat(), ...laid];
  // Serializing a node costs ~50 µs: each is serialized once a document, numbered in its order,
  // and given by its number after (`refs`: a number, or -1 for the next serialized one). The
  // bridge says how many numbers it holds (`known`): any other count than this world's (a take
  // whose answer was lost) starts the numbers again.
  const ids = globalThis.__webmcpBridgeIds ??= {map: new WeakMap(), next: 0};
  const fresh = ids.next !== known;
  if (fresh) { ids.map = new WeakMap(); ids.next = 0; }
  const first = ids.next, refs = [], sent = [];
  for (const node of all) {
    const n = ids.map.get(node);
    if (n !== undefined) { refs.push(n); continue; }
    ids.map.set(node, ids.next++);
    refs.push(-1);
    sent.push(node);
  }
  meta.refs = refs;
  meta.fresh = fresh;
  meta.first = first;
  return [JSON.stringify(meta), ...sent];
}
