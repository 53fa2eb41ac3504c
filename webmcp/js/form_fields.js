// Called with `isSecretField` (is_secret_field.js), it answers the function that runs on a
// <form> element: what a person sees in it, the label and value of each control
// (desktop/forms.py), with `secret` set where the rule calls the field secret.
(isSecretField) => function () {
  const out = [];
  for (const el of this.elements) {
    if (!el.name || ['submit', 'button', 'reset', 'hidden', 'image'].includes(el.type)) continue;
    const label = (el.labels && el.labels[0] && el.labels[0].innerText.trim()) || el.getAttribute('aria-label')
      || el.getAttribute('toolparamdescription') || el.placeholder || el.name;
    let value = el.type === 'checkbox' || el.type === 'radio' ? (el.checked ? 'checked' : '') : String(el.value);
    if (el.type === 'radio' && !el.checked) continue;
    out.push({label: String(label).slice(0, 200), value: String(value).slice(0, 2000), secret: isSecretField(el)});
  }
  return {fields: out};
}
