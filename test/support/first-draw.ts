/**
 * Run in the /docs page before its scripts (Playwright `addInitScript`; text, since the tests are
 * typed for Node): `window.__firstOperationPainted` is when the first operation was painted, in ms
 * on the page's clock from the navigation's start (found in the DOM, then the next frame). The
 * driver's own round trips, which a busy machine stretches, are not in it.
 */
export const FIRST_OPERATION_PAINTED = `new MutationObserver((_, observer) => {
  if (!document.querySelector('.opblock')) return;
  observer.disconnect();
  requestAnimationFrame(() => setTimeout(() => { window.__firstOperationPainted = performance.now(); }));
}).observe(document, { subtree: true, childList: true });`;

/** Read once the first operation is visible; resolves when the page has set it. */
export const FIRST_OPERATION_PAINTED_AT = `new Promise((done) => {
  const read = () => (window.__firstOperationPainted === undefined ? setTimeout(read, 20) : done(Math.round(window.__firstOperationPainted)));
  read();
})`;
