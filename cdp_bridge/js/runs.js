// Elements in the document, and elements in rows or list items past the first `keep` of their
// parent; a document of at most `small` elements is not counted further (ax.py).
(keep, small) => {
  const all = document.getElementsByTagName('*').length;
  if (all <= small) return {all, past: 0};
  const seen = new Map();
  let past = 0;
  for (const el of document.querySelectorAll('tr, li, [role=row], [role=listitem]')) {
    const n = (seen.get(el.parentNode) || 0) + 1;
    seen.set(el.parentNode, n);
    if (n > keep) past += 1 + el.getElementsByTagName('*').length;
  }
  return {all, past};
}
