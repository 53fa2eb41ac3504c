// The document's secret fields (open shadow roots too), decided by `isSecretField`
// (is_secret_field.js). `answer` "values": their current values; "fields": `{elements, values}`,
// the elements themselves by reference (for their backend node ids) and their values.
(isSecretField, answer) => {
  const found = [];
  const visit = (root) => {
    for (const el of root.querySelectorAll("input, textarea, [role=textbox]")) if (isSecretField(el)) found.push(el);
    // Every element below `root`, in tree order, as `querySelectorAll("*")` lists them; a walker
    // does not build the list first (a fifth of the time on a page of a thousand elements).
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let host = walker.nextNode(); host; host = walker.nextNode()) if (host.shadowRoot) visit(host.shadowRoot);
  };
  visit(document);
  const valueOf = (el) => (el.localName === "input" || el.localName === "textarea" ? el.value : el.textContent);
  const values = found.map(valueOf).filter((v) => typeof v === "string" && v);
  return answer === "values" ? values : {elements: found, values};
}
