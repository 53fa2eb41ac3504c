// The permission probe, in the page's main world before any of its scripts (desktop/permissions.py):
// each API that asks for a permission tells the bridge which one, then runs as it would. The
// binding is taken off the global object first, so the page can neither call it nor see it; what
// the page gets back is the browser's own answer, never anything this script makes up.
(binding) => {
  const report = globalThis[binding];
  if (typeof report !== 'function') return;
  delete globalThis[binding];
  const tell = (name) => { try { report(name); } catch (e) { /* the page went away */ } };
  const wrap = (owner, method, names) => {
    const original = owner && owner[method];
    if (typeof original !== 'function') return;
    const wrapped = {
      [method](...args) {
        for (const name of (typeof names === 'function' ? names(args) : names)) tell(name);
        return Reflect.apply(original, this, args);
      },
    }[method];
    try { Object.defineProperty(owner, method, {value: wrapped, writable: true, configurable: true}); } catch (e) {}
  };
  const geo = globalThis.Geolocation && Geolocation.prototype;
  wrap(geo, 'getCurrentPosition', ['geolocation']);
  wrap(geo, 'watchPosition', ['geolocation']);
  wrap(globalThis.Notification, 'requestPermission', ['notifications']);
  const media = (args) => {
    const wanted = args[0] || {};
    return [...(wanted.video ? ['camera'] : []), ...(wanted.audio ? ['microphone'] : [])];
  };
  wrap(globalThis.MediaDevices && MediaDevices.prototype, 'getUserMedia', media);
  const clip = globalThis.Clipboard && Clipboard.prototype;
  for (const method of ['read', 'readText', 'write', 'writeText']) wrap(clip, method, ['clipboard']);
}
