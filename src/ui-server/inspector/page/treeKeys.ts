/// <reference lib="dom" />
/**
 * Keyboard use of the supervision tree (the WAI-ARIA tree pattern): one
 * item in the tab order at a time; ↑/↓ move between the visible items,
 * Home/End to the first and last, → opens a closed fold or goes to the
 * first child, ← closes an open fold or goes to the parent, Enter or Space
 * selects the actor (or opens/closes the fold).
 */

/** The tree items not hidden inside a closed item. */
function visibleItems(tree: HTMLElement): HTMLLIElement[] {
  return Array.from(tree.querySelectorAll<HTMLLIElement>('li[role="treeitem"]')).filter((li) => {
    for (let p = li.parentElement?.closest('li[role="treeitem"]'); p; ) {
      if (p.getAttribute('aria-expanded') === 'false') return false;
      p = p.parentElement?.closest('li[role="treeitem"]') ?? null;
    }
    return true;
  });
}

/** Puts `li` alone in the tab order and, if asked, focuses it. */
export function makeCurrent(tree: HTMLElement, li: HTMLLIElement | null, focus: boolean): void {
  const items = visibleItems(tree);
  const current = li ?? items.find((i) => i.getAttribute('aria-selected') === 'true') ?? items[0];
  tree.querySelectorAll<HTMLLIElement>('li[role="treeitem"]').forEach((i) => {
    i.tabIndex = -1;
  });
  if (!current) return;
  current.tabIndex = 0;
  if (focus) current.focus();
}

/** Wires the keys once on the tree's container; `activate` runs a row's click. */
export function treeKeys(container: HTMLElement): void {
  container.addEventListener('keydown', (e) => {
    const tree = container.querySelector<HTMLElement>('[role="tree"]');
    const at = (e.target as HTMLElement).closest<HTMLLIElement>('li[role="treeitem"]');
    if (!tree || !at) return;
    const items = visibleItems(tree);
    const i = items.indexOf(at);
    let next: HTMLLIElement | undefined;
    switch (e.key) {
      case 'ArrowDown':
        next = items[i + 1];
        break;
      case 'ArrowUp':
        next = items[i - 1];
        break;
      case 'Home':
        next = items[0];
        break;
      case 'End':
        next = items[items.length - 1];
        break;
      case 'ArrowRight':
        if (at.getAttribute('aria-expanded') === 'false')
          at.querySelector<HTMLElement>(':scope > .node')?.click();
        else if (at.getAttribute('aria-expanded') === 'true') next = items[i + 1];
        break;
      case 'ArrowLeft':
        if (at.getAttribute('aria-expanded') === 'true' && at.dataset.ended !== undefined)
          at.querySelector<HTMLElement>(':scope > .node')?.click();
        else next = at.parentElement?.closest<HTMLLIElement>('li[role="treeitem"]') ?? undefined;
        break;
      case 'Enter':
      case ' ':
        at.querySelector<HTMLElement>(':scope > .node')?.click();
        break;
      default:
        return;
    }
    e.preventDefault();
    if (next) makeCurrent(tree, next, true);
  });
}
