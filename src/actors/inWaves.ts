/**
 * Work in waves: a call handed in while a wave is out waits, and everything
 * waiting goes out together (at most `max`) once every call of the wave out
 * settled. The Reconciler's fail-and-re-queue writes go this way (see
 * src/actors/adoptOrphans.ts): a wave rides one tick, and no second tick of
 * them is sent while one is out, so each tick is decided after the previous
 * one committed and can grant the slots its own finishes free (a tick sent
 * beside another asks for no room the other asked for, and so grants none).
 */

/**
 * A gate running the work handed to it in waves of at most `max`.
 *
 * @example
 * ```ts
 * const wave = inWaves(2);
 * const seen: string[] = [];
 * const step = (name: string) =>
 *   wave(async () => { seen.push(name); await null; seen.push(`${name} done`); });
 * await Promise.all([step('a'), step('b'), step('c')]);
 * seen // => ['a', 'b', 'a done', 'b done', 'c', 'c done']
 * inWaves(0) // throws RangeError
 * ```
 */
export function inWaves(max: number): <T>(work: () => Promise<T>) => Promise<T> {
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`inWaves: max ${max}`);
  const waiting: Array<() => void> = [];
  let out = 0;
  const next = () => {
    if (out > 0) return;
    const wave = waiting.splice(0, max);
    out = wave.length;
    for (const start of wave) start();
  };
  return <T>(work: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      waiting.push(() => {
        Promise.resolve()
          .then(work)
          .then(resolve, reject)
          .finally(() => {
            out -= 1;
            next();
          });
      });
      // Every call made in this turn of the loop joins the first wave.
      if (out === 0) queueMicrotask(next);
    });
}
