/**
 * The inspector page's exit button, as a request: exits a supervised child
 * through the admin API (src/ui-server/inspector/inspectorExitApi.ts), whose
 * supervisor then applies its restart policy. DOM-free: `fetch` is passed
 * in (tested in Node); the page shows the answer.
 */
import { INSPECT_EXIT_PATH } from '../inspectorProtocol.js';

/**
 * The exit reason the API is sent for a choice of the page's reason menu:
 * `error` becomes an error reason with a message saying where it came from;
 * the rest (`kill`, `shutdown`, `normal`) are sent as they are.
 *
 * @example
 * ```ts
 * exitReasonOf('error') // => { error: 'exited from the inspector' }
 * exitReasonOf('kill') // => 'kill'
 * ```
 */
export function exitReasonOf(picked: string): string | { error: string } {
  return picked === 'error' ? { error: 'exited from the inspector' } : picked;
}

/**
 * Exits the child at `path` (`supervisorSessionId/childId`). Resolves with
 * the reason the API says it exited with; rejects with `code: message` of
 * the API's error, or with the network's.
 */
export async function requestExit(
  token: string,
  path: string,
  picked: string,
  fetchFn: typeof fetch = fetch,
): Promise<string | undefined> {
  const res = await fetchFn(INSPECT_EXIT_PATH, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ path, reason: exitReasonOf(picked) }),
  });
  const body = (await res.json()) as {
    reason?: string;
    error?: { code: string; message: string };
  };
  if (!res.ok) throw new Error(`${body.error?.code ?? res.status}: ${body.error?.message ?? ''}`);
  return body.reason;
}
