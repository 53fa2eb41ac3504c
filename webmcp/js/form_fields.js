// Runs on a <form> element: what a person sees in it, the label and value of each control
// (desktop/forms.py). `secret`: a CSS selector of the fields whose value is masked.
(function (secret) {
  const out = [];
  for (const el of this.elements) {
    if (!el.name || ['submit', 'button', 'reset', 'hidden', 'image'].includes(el.type)) continue;
    const label = (el.labels && el.labels[0] && el.labels[0].innerText.trim()) || el.getAttribute('aria-label')
      || el.getAttribute('toolparamdescription') || el.placeholder || el.name;
    let value = el.type === 'checkbox' || el.type === 'radio' ? (el.checked ? 'checked' : '') : String(el.value);
    if (el.type === 'radio' && !el.checked) continue;
    out.push({label: String(label).slice(0, 200), value: String(value).slice(0, 2000), secret: el.matches(secret)});
  }
  return {fields: out};
})
