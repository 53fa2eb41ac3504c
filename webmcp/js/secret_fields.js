// The document's secret fields (open shadow roots too), decided by `isSecretField`
// (is_secret_field.js). `answer` "values": their current values; "fields": `{elements, values}`,
// the elements themselves by reference (for their backend node ids) and their values.
(isSecretField, answer) => {
  const found = [];
  const visit = (root) => {
    for (const el of root.querySelectorAll("input, textarea, [role=textbox]")) if (isSecretField(el)) found.push(el);
    for (const host of root.querySelectorAll("*")) if (host.shadowRoot) visit(host.shadowRoot);
  };
  visit(document);
  const valueOf = (el) => (el.localName === "input" || el.localName === "textarea" ? el.value : el.textContent);
  const values = found.map(valueOf).filter((v) => typeof v === "string" && v);
  return answer === "values" ? values : {elements: found, values};
}
