// Runs on an <input type=file> whose chooser the page opened: what a person would see of it.
// Its label (a <label>, aria-label, title, or its name), what it accepts, whether it takes several files.
(function() {
  const get = (name) => Element.prototype.getAttribute.call(this, name);
  let label = '';
  const labels = this.labels ? [...this.labels] : [];
  if (labels.length) label = labels.map((l) => l.innerText || l.textContent || '').join(' ');
  label = label || get('aria-label') || get('title') || get('name') || get('id') || '';
  return {label: label.replace(/\s+/g, ' ').trim(), accept: get('accept') || '', multiple: get('multiple') !== null};
})
