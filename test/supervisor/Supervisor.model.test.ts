/**
 * Model-based test: random crashes, normal exits, finishes with a chosen
 * reason (`{ shutdown }`, clean; an unknown term, abnormal as in OTP),
 * kills, `exitChild` calls (OTP's exit/2: kill, normal, shutdown) and clock advances
 * against a small reference model of OTP's supervisor. After every step the
 * live children, restart counts and whether the supervisor gave up match.
 */
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { type AnyActorRef, SimulatedClock } from 'xstate';
import {
  type RestartType,
  type Strategy,
  type Supervisor,
  startSupervisor,
} from '../../src/supervisor/index.js';
import { settle, worker } from './workers.js';

interface Model {
  strategy: Strategy;
  intensity: number;
  periodMs: number;
  now: number;
  order: string[];
  types: Record<string, RestartType>;
  live: Set<string>;
  restarts: Record<string, number>;
  window: number[];
  gaveUp: boolean;
}
interface Real {
  sup: Supervisor;
  clock: SimulatedClock;
}

type ExitKind =
  | 'crash'
  | 'normal'
  | 'done_shutdown'
  | 'done_odd'
  | 'kill'
  | 'exit_kill'
  | 'exit_normal'
  | 'exit_shutdown';
const EXIT_KINDS: ExitKind[] = [
  'crash',
  'normal',
  'done_shutdown',
  'done_odd',
  'kill',
  'exit_kill',
  'exit_normal',
  'exit_shutdown',
];

// OTP: normal, shutdown and {shutdown, _} are clean; every other reason is not.
const CLEAN: ReadonlySet<ExitKind> = new Set([
  'normal',
  'done_shutdown',
  'exit_normal',
  'exit_shutdown',
]);

function modelExit(m: Model, id: string, kind: ExitKind): void {
  m.live.delete(id);
  const type = m.types[id]!;
  const restart = type === 'permanent' || (type === 'transient' && !CLEAN.has(kind));
  if (!restart) {
    if (type === 'temporary') m.order = m.order.filter((o) => o !== id);
    return;
  }
  m.window = [m.now, ...m.window.filter((t) => t >= m.now - m.periodMs)];
  if (m.window.length > m.intensity) {
    m.gaveUp = true;
    m.live.clear();
    return;
  }
  const at = m.order.indexOf(id);
  const group =
    m.strategy === 'one_for_one'
      ? [id]
      : m.strategy === 'one_for_all'
        ? [...m.order]
        : m.order.slice(at);
  for (const g of group) {
    if (g !== id && m.types[g] === 'temporary') {
      m.order = m.order.filter((o) => o !== g);
      m.live.delete(g);
    } else {
      m.live.add(g);
      m.restarts[g] = (m.restarts[g] ?? 0) + 1;
    }
  }
}

function check(m: Model, r: Real): void {
  expect(r.sup.exitReason() === 'shutdown').toBe(m.gaveUp);
  if (m.gaveUp) return;
  const rows = r.sup.whichChildren();
  expect(rows.map((c) => c.id)).toEqual(m.order);
  expect(rows.filter((c) => c.status === 'running').map((c) => c.id)).toEqual(
    m.order.filter((id) => m.live.has(id)),
  );
  expect(Object.fromEntries(rows.map((c) => [c.id, c.restartCount]))).toEqual(
    Object.fromEntries(m.order.map((id) => [id, m.restarts[id] ?? 0])),
  );
}

class ExitCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly index: number,
    readonly kind: ExitKind,
  ) {}
  private target(m: Model): string | undefined {
    const live = m.order.filter((id) => m.live.has(id));
    return live[this.index % Math.max(1, live.length)];
  }
  check(m: Readonly<Model>): boolean {
    return !m.gaveUp && this.target(m as Model) !== undefined;
  }
  async run(m: Model, r: Real): Promise<void> {
    const id = this.target(m)!;
    const ref = r.sup.child(id) as AnyActorRef;
    if (this.kind === 'crash') ref.send({ type: 'CRASH' });
    else if (this.kind === 'normal') ref.send({ type: 'EXIT' });
    else if (this.kind === 'done_shutdown') ref.send({ type: 'EXIT', exit: { shutdown: 'done' } });
    // An output naming a reason no shape matches: abnormal, a transient child restarts.
    else if (this.kind === 'done_odd') ref.send({ type: 'EXIT', exit: 'crash' });
    else if (this.kind === 'kill') ref.stop();
    else if (this.kind === 'exit_kill') await r.sup.exitChild(id, 'kill');
    else if (this.kind === 'exit_normal') await r.sup.exitChild(id, 'normal');
    else await r.sup.exitChild(id, { shutdown: 'model' });
    await settle(20);
    modelExit(m, id, this.kind);
    check(m, r);
  }
  toString(): string {
    return `${this.kind}(#${this.index})`;
  }
}

class AdvanceCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    m.now += this.ms;
    r.clock.increment(this.ms);
    await settle();
    check(m, r);
  }
  toString(): string {
    return `advance(${this.ms})`;
  }
}

const restartType = fc.constantFrom<RestartType>('permanent', 'transient', 'temporary');

test.prop(
  [
    fc.constantFrom<Strategy>('one_for_one', 'one_for_all', 'rest_for_one'),
    fc.array(restartType, { minLength: 1, maxLength: 4 }),
    fc.integer({ min: 0, max: 3 }),
    fc.commands(
      [
        fc
          .tuple(fc.nat(7), fc.constantFrom<ExitKind>(...EXIT_KINDS))
          .map(([i, k]) => new ExitCommand(i, k)),
        fc.integer({ min: 1, max: 3000 }).map((ms) => new AdvanceCommand(ms)),
      ],
      { maxCommands: 25 },
    ),
  ],
  { numRuns: 150 },
)('the supervisor matches the OTP reference model', async (strategy, types, intensity, cmds) => {
  const clock = new SimulatedClock();
  const ids = types.map((_, i) => `c${i}`);
  const sup = await startSupervisor(
    {
      strategy,
      intensity,
      periodMs: 5000,
      children: ids.map((id, i) => ({ id, restart: types[i]!, start: { logic: worker } })),
    },
    { clock },
  );
  const model: Model = {
    strategy,
    intensity,
    periodMs: 5000,
    now: 0,
    order: [...ids],
    types: Object.fromEntries(ids.map((id, i) => [id, types[i]!])),
    live: new Set(ids),
    restarts: {},
    window: [],
    gaveUp: false,
  };
  await fc.asyncModelRun(() => ({ model, real: { sup, clock } }), cmds);
  sup.kill();
});
