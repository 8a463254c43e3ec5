// The page's DOM: looked up only when called, so the games' modules load
// without a document (node --test).

export const $ = (id) => document.getElementById(id);

export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) {
    e.className = className;
  }
  if (text !== undefined) {
    e.textContent = text;
  }
  return e;
}

export function setPhase(phase) {
  document.body.dataset.phase = phase;
}

export function say(text) {
  $('message').textContent = text;
}

/** Removes the pion from every square of the board. */
export function clearPion() {
  for (const c of document.querySelectorAll('#board .pion')) {
    c.classList.remove('pion');
  }
}
