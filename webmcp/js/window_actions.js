// The window actions' hands (desktop/actions.py), run on one element in the bridge's isolated
// world: the page cannot see or fake them, but its listeners get the events a person's input
// fires. Each returns {ok: true, ...} or {error: "why"}, and a promise that settles one task
// later, so that what the action scheduled (a form's submission) has been requested by then.
// Called as `fn.call(element, op, ...args)`; `op` is "fill", "press" or "submit".
function windowAction(op, a, b, c) {
  const el = this;
  const later = (value) => new Promise((resolve) => setTimeout(() => resolve(value), 0));
  const norm = (s) => String(s ?? '').replace(/\s+/g, ' ').trim().toLowerCase();
  const off = (e) => e.disabled || !!e.closest?.('fieldset:disabled') || e.getAttribute?.('aria-disabled') === 'true';
  const submitterOf = (e) => {
    const tag = e.tagName;
    const type = (e.getAttribute?.('type') || '').toLowerCase();
    if (tag === 'BUTTON' && (type === 'submit' || type === '') && e.form) return e.form;
    if (tag === 'INPUT' && (type === 'submit' || type === 'image') && e.form) return e.form;
    return null;
  };
  const pointer = (e) => {
    for (const type of ['pointerdown', 'mousedown', 'pointerup', 'mouseup']) {
      const Ctor = type.startsWith('pointer') ? PointerEvent : MouseEvent;
      e.dispatchEvent(new Ctor(type, { bubbles: true, cancelable: true, composed: true, button: 0 }));
    }
  };
  const focus = (e) => {
    e.scrollIntoView?.({ block: 'center', inline: 'nearest' });
    e.focus?.({ preventScroll: true });
  };
  if (!el || !el.isConnected) return { error: 'gone' };

  if (op === 'fill') {
    const kind = a, text = b, checked = c;
    if (off(el)) return { error: 'disabled' };
    if (el.readOnly) return { error: 'readonly' };
    focus(el);
    if (kind === 'checkbox' || kind === 'radio') {
      if (!!el.checked !== checked) { pointer(el); el.click(); }
      return later({ ok: !!el.checked === checked });
    }
    if (el.tagName === 'SELECT') {
      const option = [...el.options].find((o) => norm(o.label || o.text) === norm(text));
      if (!option) return { error: 'no-option' };
      if (option.disabled) return { error: 'option-disabled' };
      el.value = option.value;
      el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return later({ ok: true });
    }
    const typed = new InputEvent('input', { bubbles: true, composed: true, inputType: 'insertText', data: text });
    if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
      const proto = el.tagName === 'INPUT' ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
      Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, text);
      el.dispatchEvent(typed);
      el.dispatchEvent(new Event('change', { bubbles: true }));
      // A date or number input refuses a value it cannot hold by emptying itself.
      if (text !== '' && el.value === '') return { error: 'refused' };
      return later({ ok: true });
    }
    if (el.isContentEditable) {
      el.textContent = text;
      el.dispatchEvent(typed);
      return later({ ok: true });
    }
    return { error: 'not-fillable' };
  }

  if (op === 'press') {
    const allowSubmit = a;
    const form = submitterOf(el);
    if (form && !allowSubmit) return { error: 'human-submit' };
    if (off(el)) return { error: 'disabled' };
    focus(el);
    pointer(el);
    el.click();
    return later({ ok: true, submit: !!form });
  }

  if (op === 'submit') {
    // `el` is the document; `a` the form's name or heading, `b` an element of the form last filled.
    const wanted = a, hint = b;
    const shown = (e) => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
    const textOf = (e) => (e ? norm(e.textContent) : '');
    const nameOf = (f) => {
      const labelled = f.getAttribute('aria-labelledby');
      const by = labelled && document.getElementById(labelled.split(/\s+/)[0]);
      return f.getAttribute('aria-label') || (by && by.textContent) ||
        f.querySelector('legend, h1, h2, h3, h4, h5, h6')?.textContent ||
        f.closest('section, article, main, dialog')?.querySelector('h1, h2, h3, h4, h5, h6')?.textContent ||
        f.getAttribute('name') || f.id || '';
    };
    const submitterIn = (f) => [...f.elements].find((e) => submitterOf(e) === f && shown(e) && !off(e)) || null;
    const forms = [...document.forms].filter(shown);
    let form = null;
    if (wanted) {
      const w = norm(wanted);
      const matches = forms.filter((f) => norm(nameOf(f)) === w || textOf(submitterIn(f)) === w ||
        norm(nameOf(f)).startsWith(w));
      if (matches.length !== 1) {
        return { error: matches.length ? 'ambiguous' : 'no-form', forms: forms.map((f) => norm(nameOf(f)) ? nameOf(f).trim() : '') };
      }
      form = matches[0];
    } else if (hint && hint.isConnected && hint.form && shown(hint.form)) {
      form = hint.form;
    } else if (forms.length === 1) {
      form = forms[0];
    } else {
      return { error: forms.length ? 'ambiguous' : 'no-form', forms: forms.map((f) => nameOf(f).trim()) };
    }
    const submitter = submitterIn(form);
    const name = nameOf(form).trim();
    if (submitter) { focus(submitter); pointer(submitter); submitter.click(); }
    else form.requestSubmit();
    return later({ ok: true, form: name, submitter: submitter ? (submitter.textContent || submitter.value || '').trim() : '' });
  }
  return { error: 'unknown-op' };
}
