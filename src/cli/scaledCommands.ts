/**
 * The simulated cluster's commands, sped up: `speed` 10 makes `agent 60` take
 * six seconds and print its steps ten times as often. The demo and the
 * end-to-end test use it to show a minute of work in seconds, without
 * changing what the commands say or how they exit.
 */
import type { SimCommandRegistry } from '../containers/simulated/commands.js';

/**
 * Divides every duration and output time of `registry` by `speed`.
 *
 * @example
 * ```ts
 * const base = { sleep: () => ({ output: [{ atMs: 500, text: 'z\n' }], durationMs: 1000, exitCode: 0 }) }
 * scaledCommands(base, 4).sleep([]) // => { output: [{ atMs: 125, text: 'z\n' }], durationMs: 250, exitCode: 0 }
 * scaledCommands(base, 1) === base // => true
 * scaledCommands(base, 0) // throws RangeError
 * ```
 */
export function scaledCommands(registry: SimCommandRegistry, speed: number): SimCommandRegistry {
  if (!(Number.isFinite(speed) && speed > 0)) {
    throw new RangeError(`speed must be a number > 0, got ${speed}`);
  }
  if (speed === 1) return registry;
  const scale = (ms: number) => Math.round(ms / speed);
  return Object.fromEntries(
    Object.entries(registry).map(([name, command]) => [
      name,
      (args: readonly string[]) => {
        const script = command(args);
        return {
          ...script,
          output: script.output.map((o) => ({ ...o, atMs: scale(o.atMs) })),
          durationMs: scale(script.durationMs),
        };
      },
    ]),
  );
}
