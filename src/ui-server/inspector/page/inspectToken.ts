/**
 * Where the inspector page finds its admin token. It comes in the URL
 * fragment (`/inspect#token=...`), never in a URL the server sees, and is
 * kept in sessionStorage for reloads. Pure over the storage it is given
 * (tested in Node); the page passes `sessionStorage` and puts the fragment
 * it returns back into the address bar.
 */

/** The inspector's own sessionStorage key for its token. */
export const INSPECT_TOKEN_KEY = 'roundtable.inspect.token';
/** The board page's sessionStorage key for its token (src/ui-server/page/board.tsx). */
export const BOARD_TOKEN_KEY = 'roundtable.token';

/** The part of `Storage` this reads and writes. */
export interface TokenStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/**
 * The token, and the fragment the address bar should show instead (null:
 * leave it as it is). A token in the fragment is stored and leaves the
 * address bar; a runner link beside it stays. The admin token opens the admin
 * board too: the links to a job and to the board then work in this tab (and
 * in tabs opened from it) with no token in their URL; a board token this tab
 * already holds is left alone. With none in the fragment, the stored one, or
 * the board's (opened from the admin board's job page in the same tab: its
 * token is the admin's).
 *
 * @example
 * ```ts
 * const m = new Map()
 * const store = { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => void m.set(k, v) }
 * readInspectToken('', store) // => { token: null, hash: null }
 * readInspectToken('#token=adm&runner=ses_1', store) // => { token: 'adm', hash: '#runner=ses_1' }
 * m.get(INSPECT_TOKEN_KEY) // => 'adm'
 * m.get(BOARD_TOKEN_KEY) // => 'adm'
 * readInspectToken('#runner=ses_2', store) // => { token: 'adm', hash: null }
 * readInspectToken('#token=other', store) // => { token: 'other', hash: '' }
 * m.get(BOARD_TOKEN_KEY) // => 'adm'
 * ```
 */
export function readInspectToken(
  hash: string,
  store: TokenStore,
): { token: string | null; hash: string | null } {
  const params = new URLSearchParams(hash.slice(1));
  const fromHash = params.get('token');
  if (fromHash) {
    store.setItem(INSPECT_TOKEN_KEY, fromHash);
    if (store.getItem(BOARD_TOKEN_KEY) === null) store.setItem(BOARD_TOKEN_KEY, fromHash);
    params.delete('token');
    const rest = params.toString();
    return { token: fromHash, hash: rest ? `#${rest}` : '' };
  }
  return { token: store.getItem(INSPECT_TOKEN_KEY) ?? store.getItem(BOARD_TOKEN_KEY), hash: null };
}
