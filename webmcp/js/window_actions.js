// The window actions' hands (desktop/actions.py), run on one element in the bridge's isolated
// world: the page cannot see or fake them, but its listeners get the events a person's input
// fires. Each returns {ok: true, ...} or {error: "why"}, and a promise that settles one task
// later, so that what the action scheduled (a form's submission) has been requested by then.
// Called as `fn.call(element, op, ...args)`; `op` is "fill", "choose", "press", "probe", "hit",
// "state", "focus", "options" or "submit".
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
  // What the page holds now, as the window would show it: the answer never says more.
  const held = (e) => {
    if (e.tagName === 'SELECT') return [...e.selectedOptions].map((o) => (o.label || o.text).trim());
    if (e.getAttribute?.('role') === 'listbox') {
      return [...e.querySelectorAll('[role=option]')].filter((o) => o.getAttribute('aria-selected') === 'true')
        .map((o) => o.textContent.trim());
    }
    if (e.type === 'checkbox' || e.type === 'radio') return !!e.checked;
    if (e.tagName === 'INPUT' || e.tagName === 'TEXTAREA') return e.value;
    if (e.isContentEditable) return e.innerText.replace(/\n$/, '');
    return null;
  };

  const settled = (extra) => later(null).then(() => ({ ok: true, held: held(el), ...extra }));
  if (!el || !el.isConnected) return { error: 'gone' };

  if (op === 'fill') {
    const kind = a, text = b, checked = c;
    if (off(el)) return { error: 'disabled' };
    if (el.readOnly) return { error: 'readonly' };
    focus(el);
    if (kind === 'checkbox' || kind === 'radio') {
      if (!!el.checked !== checked) { pointer(el); el.click(); }
      return settled();
    }
    if (el.tagName === 'SELECT') {
      const option = [...el.options].find((o) => norm(o.label || o.text) === norm(text));
      if (!option) return { error: 'no-option' };
      if (option.disabled) return { error: 'option-disabled' };
      el.value = option.value;
      el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return settled();
    }
    const typed = new InputEvent('input', { bubbles: true, composed: true, inputType: 'insertText', data: text });
    if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
      const proto = el.tagName === 'INPUT' ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
      Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, text);
      el.dispatchEvent(typed);
      el.dispatchEvent(new Event('change', { bubbles: true }));
      // A date or number input refuses a value it cannot hold by emptying itself.
      if (text !== '' && el.value === '') return { error: 'refused' };
      return settled();
    }
    if (el.isContentEditable) {
      el.textContent = text;
      el.dispatchEvent(typed);
      return settled();
    }
    return { error: 'not-fillable' };
  }

  if (op === 'choose') {
    // A multiple select takes every option of `a` and drops the others; a listbox's options are
    // clicked by the caller (trusted), this only reads them (`options`).
    if (el.tagName !== 'SELECT') return { error: 'not-select' };
    if (!el.multiple) return { error: 'single' };
    const wanted = new Set((a || []).map(norm));
    if (off(el)) return { error: 'disabled' };
    const options = [...el.options];
    const missing = [...wanted].filter((w) => !options.some((o) => norm(o.label || o.text) === w));
    if (missing.length) return { error: 'no-option' };
    if (options.some((o) => o.disabled && wanted.has(norm(o.label || o.text)) !== o.selected)) return { error: 'option-disabled' };
    focus(el);
    for (const o of options) o.selected = wanted.has(norm(o.label || o.text));
    el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return settled();
  }

  if (op === 'options') {
    // The listbox's options to click so that exactly `a` are selected: their elements, in order.
    const wanted = new Set((a || []).map(norm));
    const options = [...el.querySelectorAll('[role=option]')];
    const missing = [...wanted].filter((w) => !options.some((o) => norm(o.textContent) === w));
    if (missing.length) return { error: 'no-option' };
    return options.filter((o) => wanted.has(norm(o.textContent)) !== (o.getAttribute('aria-selected') === 'true'));
  }

  if (op === 'held') return { ok: true, held: held(el) };

  if (op === 'hit') {
    // `a`: the element a click at the element's centre lands on. Inside it, or its label: fine.
    // A glyph drawn by CSS (`::before`, `::after`: an icon font's, a "×") is its element's own.
    const hit = a instanceof CSSPseudoElement ? a.element : a;
    const within = (inner, outer) => {
      for (let n = inner; n; n = n.parentNode || n.host) if (n === outer) return true;
      return false;
    };
    if (!hit) return { cover: 'nothing (it is not under the pointer)' };
    if (within(hit, el) || (el.nodeType === 3 && within(el, hit))) return { ok: true };
    const label = hit.closest?.('label');
    if (label && label.control === el) return { ok: true };
    const name = (hit.getAttribute('aria-label') || hit.innerText || hit.textContent || '').replace(/\s+/g, ' ').trim();
    const tag = hit.tagName.toLowerCase() + (hit.id ? '#' + hit.id : '');
    return { cover: name ? `${tag} \u201c${name.length > 60 ? name.slice(0, 60) + '\u2026' : name}\u201d` : tag };
  }

  if (op === 'state') {
    // What a press may change, to say it: expanded, checked, selected, pressed.
    const e = el.nodeType === 3 ? el.parentElement : el;
    const aria = (name) => e.getAttribute?.(name);
    // A <details>' <summary> opens it: its state is the `open` of the <details>, not an ARIA attribute.
    const details = e.tagName === 'SUMMARY' && e.parentElement?.tagName === 'DETAILS' ? e.parentElement : null;
    return {
      expanded: details ? String(details.open) : aria('aria-expanded'),
      checked: (e.type === 'checkbox' || e.type === 'radio') ? String(!!e.checked) : aria('aria-checked'),
      selected: aria('aria-selected'),
      pressed: aria('aria-pressed'),
    };
  }

  if (op === 'scrolls') {
    // How far the element and each element holding it are scrolled: what a wheel moved, to say it.
    const at = [];
    for (let e = el.nodeType === 3 ? el.parentElement : el; e; e = e.parentElement) at.push(e.scrollTop, e.scrollLeft);
    return { ok: true, at };
  }

  if (op === 'probe') {
    // Before a press or a key: would it submit a form (refused under --human-submit)? `a`: the key, if any.
    const key = a;
    const e = el.nodeType === 3 ? el.parentElement : el;
    let form = submitterOf(e);
    if (key === 'Enter' && !form && e.form && e.tagName === 'INPUT' &&
        !['button', 'checkbox', 'radio', 'file', 'reset', 'image', 'submit', 'color', 'range'].includes(e.type)) form = e.form;
    if (key && key !== 'Enter' && key !== ' ') form = null;
    if (key === ' ' && e.tagName !== 'BUTTON' && e.type !== 'submit') form = null;
    if (form && !b) return { error: 'human-submit' };
    if (off(e)) return { error: 'disabled' };
    return { ok: true, secret: e.tagName === 'INPUT' && e.type === 'password' };
  }

  if (op === 'focus') {
    const e = el.nodeType === 3 ? el.parentElement : el;
    focus(e);
    return { ok: true, focused: document.activeElement === e || e.contains(document.activeElement) };
  }

  if (op === 'press') {
    const allowSubmit = a;
    const form = submitterOf(el);
    if (form && !allowSubmit) return { error: 'human-submit' };
    if (off(el)) return { error: 'disabled' };
    const select = el.tagName === 'OPTION' ? el.closest('select') : null;
    if (select) {
      // An option of a closed drop-down has no box: pressing it picks it, as the list would.
      if (select.multiple) el.selected = !el.selected; else select.value = el.value;
      select.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      select.dispatchEvent(new Event('change', { bubbles: true }));
      return later({ ok: true });
    }
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
