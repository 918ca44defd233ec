/**
 * Runs `fn` over `items`, at most `limit` at a time; rejects with the first
 * error: the Reconciler's work per run (observations, runners started),
 * bounded so that a dead node's thousand runs do not flood the engine.
 */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        await fn(items[i] as T, i);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
