// What changed in this frame's document since the bridge last asked (live_view.read_changes), in
// the observer's isolated world: "all" (read the page whole), "none" (when `mayBeNone`: the
// bridge knows the frame's fields and form state as the last take gave them), or an array: a JSON string of
// counts and secret values, then the changed elements (observer.js: roots, named, beside, deep,
// and for the layout relaid and within), the secret fields (by the rule, then by the selector),
// the required controls and those shown invalid, and last the roots whose child list alone
// changed and the children added to each (`adds`: how many each), and the nodes of their
// children's text layout where the page tells it (`layouts`: each one's tree or null; `laid`: the
// nodes, text nodes too) (deep-serialized: each node's backend id).
(limit, most, findSecrets, secretSelector, requiredSelector, flaggedSelector, mayBeNone) => {
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
  const selected = [...document.querySelectorAll(secretSelector)];
  const required = [...document.querySelectorAll(requiredSelector)];
  const flagged = [...document.querySelectorAll(flaggedSelector)];
  const values = [...secret.values, ...selected.map((el) => (typeof el.value === 'string' ? el.value : ''))];
  const meta = {roots: roots.length, named: named.length, beside: beside.length, deep: deep.length, relaid: relaid.length,
    within: within.length, secret: secret.elements.length + selected.length, required: required.length,
    flagged: flagged.length, relisted: relisted.length, added: added.flat().length, adds: added.map((a) => a.length),
    laid: laid.length, layouts: layouts.map((l) => (l ? l.tree : null)),
    values: values.filter((v) => typeof v === 'string' && v), relayout};
  return [JSON.stringify(meta), ...roots, ...named, ...beside, ...deep, ...relaid, ...within, ...secret.elements, ...selected,
    ...required, ...flagged, ...relisted, ...added.flat(), ...laid];
}
