/// <reference lib="dom" />
/**
 * Keyboard navigation over the cards: arrows move between cards (up and
 * down in a column, left and right across columns), Enter opens the focused
 * card's job page, `/` jumps to the search box.
 */

function cardsOf(section: Element | null): HTMLElement[] {
  return section === null ? [] : Array.from(section.querySelectorAll<HTMLElement>('article.card'));
}

/** Installs the handler on `document`; returns its removal. */
export function installKeyboard(): () => void {
  const onKey = (e: KeyboardEvent) => {
    const target = e.target as HTMLElement | null;
    if (e.key === '/' && !(target instanceof HTMLInputElement)) {
      const search = document.querySelector<HTMLInputElement>('input[type="search"]');
      if (search !== null) {
        e.preventDefault();
        search.focus();
      }
      return;
    }
    const card = target?.closest?.('article.card') as HTMLElement | null;
    if (card == null || card !== target) return;
    if (e.key === 'Enter') {
      card.querySelector<HTMLAnchorElement>('a.title')?.click();
      return;
    }
    const section = card.closest('section');
    const cards = cardsOf(section);
    const i = cards.indexOf(card);
    let next: HTMLElement | undefined;
    if (e.key === 'ArrowDown') next = cards[i + 1];
    else if (e.key === 'ArrowUp') next = cards[i - 1];
    else if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
      let s: Element | null = section;
      do {
        s =
          e.key === 'ArrowRight'
            ? (s?.nextElementSibling ?? null)
            : (s?.previousElementSibling ?? null);
      } while (s !== null && cardsOf(s).length === 0);
      const there = cardsOf(s);
      next = there[Math.min(Math.max(i, 0), there.length - 1)];
    } else return;
    if (next !== undefined) {
      e.preventDefault();
      next.focus();
    }
  };
  document.addEventListener('keydown', onKey);
  return () => document.removeEventListener('keydown', onKey);
}
