/**
 * A real-time deadline on a promise the test awaits: a call that never
 * settles fails the test, naming the call, instead of hanging it until
 * vitest's own timeout says nothing of what hung.
 */

/** `p`'s value, or a rejection naming `what` once `ms` of real time have passed. */
export async function within<T>(p: Promise<T>, what: string, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** How `p` settled (its value or its error), within `ms` as `within` says. */
export function settledWithin<T>(
  p: Promise<T>,
  what: string,
  ms: number,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return within(
    p.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    ),
    what,
    ms,
  );
}
