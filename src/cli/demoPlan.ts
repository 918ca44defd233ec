/**
 * The demo's workload as data: who submits what, when, and the three events
 * that make every state of the board appear within a minute (a cap override,
 * a cancelled card, a container rescheduled under a running session, and a
 * retry of a failed task). Pure; `runDemoWorkload` plays it.
 */

export type DemoStep =
  | { atMs: number; kind: 'submit'; user: string; title: string; command: string[] }
  | { atMs: number; kind: 'setCap'; user: string; maxRunning: number }
  | { atMs: number; kind: 'cancelQueued' }
  | { atMs: number; kind: 'reschedule' }
  | { atMs: number; kind: 'retryFailed' };

const TITLES = [
  'fix the flaky login test',
  'upgrade to the new ORM',
  'add dark mode to settings',
  'write the release notes',
  'refactor the billing module',
  'speed up the CI cache',
  'translate the onboarding',
  'remove the legacy API',
];

/**
 * The commands, by kind: most succeed, some fail slowly or at once, each
 * with a duration of its own so cards do not move in lockstep.
 *
 * @example
 * ```ts
 * demoCommand(0) // => ['agent', '12']
 * demoCommand(1) // => ['agent', '18', '1']
 * demoCommand(2) // => ['fail', '2', 'lint: 3 problems']
 * demoCommand(5) // => ['agent', '15']
 * ```
 */
export function demoCommand(i: number): string[] {
  switch (i % 5) {
    case 1:
      return ['agent', '18', '1'];
    case 2:
      return ['fail', '2', 'lint: 3 problems'];
    case 4:
      return ['echo', 'nothing to do'];
    default:
      return ['agent', String(12 + (i % 4) + (i % 3))];
  }
}

/**
 * The plan, sorted by time. Submissions alternate between users (a fair
 * line is visible as such) and come a little apart so the board animates.
 *
 * @example
 * ```ts
 * const plan = demoPlan({ users: ['ann', 'bo'], tasksPerUser: 2 })
 * plan.filter((s) => s.kind === 'submit').map((s) => s.user) // => ['ann', 'bo', 'ann', 'bo']
 * plan.map((s) => s.kind).filter((k) => k !== 'submit') // => ['setCap', 'cancelQueued', 'reschedule', 'retryFailed']
 * plan.every((s, i) => i === 0 || plan[i - 1].atMs <= s.atMs) // => true
 * demoPlan({ users: [], tasksPerUser: 2 }) // throws RangeError
 * ```
 */
export function demoPlan(options: {
  users: readonly string[];
  tasksPerUser: number;
  /** Gap between two submissions. */
  spacingMs?: number;
}): DemoStep[] {
  const [firstUser] = options.users;
  if (firstUser === undefined) throw new RangeError('the demo needs at least one user');
  const spacing = options.spacingMs ?? 400;
  const steps: DemoStep[] = [];
  let n = 0;
  for (let round = 0; round < options.tasksPerUser; round++) {
    for (const user of options.users) {
      steps.push({
        atMs: n * spacing,
        kind: 'submit',
        user,
        title: TITLES[n % TITLES.length]!, // TITLES is a non-empty constant
        command: demoCommand(n),
      });
      n += 1;
    }
  }
  const submitted = n * spacing;
  steps.push(
    { atMs: 1_000, kind: 'setCap', user: firstUser, maxRunning: 3 },
    { atMs: submitted + 1_000, kind: 'cancelQueued' },
    { atMs: submitted + 5_000, kind: 'reschedule' },
    { atMs: submitted + 20_000, kind: 'retryFailed' },
  );
  return steps.sort((a, b) => a.atMs - b.atMs);
}
