// The focused element, followed into same-origin frames (an out-of-process frame's stays its <iframe>).
(() => {
  let at = document.activeElement || document.body || document.documentElement;
  while (at && at.contentDocument && at.contentDocument.activeElement) at = at.contentDocument.activeElement;
  return at;
})()
