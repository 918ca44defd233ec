import { sql } from 'kysely';
import { createRuntime } from '../actors/runtime.js';
import type { Runtime, RuntimeCard } from '../actors/runtimeTypes.js';
import { SimulatedBackend } from '../containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../containers/simulated/SimulatedCluster.js';
import { connect, type Db, type DbHandle, listSessionEvents, migrate } from '../db/index.js';
import { toSession, toTask } from '../db/rows.js';
import {
  checkAddNodeOptions,
  checkAdvanceMs,
  checkRunLookupId,
  checkTestRuntimeOptions,
} from './harnessArguments.js';
import { type AddNodeOptions, HarnessNodes } from './harnessNodes.js';
import {
  HarnessClosedError,
  HarnessSettleError,
  type TestRuntime,
  type TestRuntimeOptions,
} from './harnessTypes.js';
import { migratedPglite } from './migratedPglite.js';
import { TestClock } from './TestClock.js';

export {
  HarnessClosedError,
  HarnessSettleError,
  type TestRuntime,
  type TestRuntimeOptions,
} from './harnessTypes.js';

const DEFAULTS = {
  caps: { maxRunning: 4, defaultUserCap: 2 },
  pollMs: 5_000,
  adoptBudgetMs: 15 * 60 * 1000,
  reconcileMs: 60_000,
  rescheduleDelayMs: 1_000,
  nodeId: 'test-node',
  settleTimeoutMs: 30_000,
};

/** Empties every table but the migration history, whatever migrations added. */
async function emptyTables(db: Db): Promise<void> {
  const { rows } = await sql<{ tablename: string }>`
    SELECT tablename FROM pg_tables
    WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'`.execute(db);
  if (rows.length === 0) return;
  await sql
    .raw(`TRUNCATE ${rows.map((r) => `"${r.tablename}"`).join(', ')} RESTART IDENTITY CASCADE`)
    .execute(db);
}

/**
 * Resolves once `node` has no I/O in flight, or after `timeoutMs` of real
 * time: a killed node starts nothing new, so what is left only settles.
 */
export async function drained(node: Pick<Runtime, 'busy'>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (node.busy() > 0 && Date.now() < deadline) {
    await new Promise<void>((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * Real time a teardown waits for a killed node's I/O in flight: a statement
 * takes milliseconds. Past it the teardown goes on (it is a teardown, not a
 * check): what is still in flight then is a call stalled on purpose.
 */
export const KILLED_NODE_DRAIN_MS = 5_000;

/** Every option's key: a key added to the interface and not here fails to compile. */
const OPTION_KEY_SET: Record<keyof TestRuntimeOptions, true> = {
  caps: true,
  pollMs: true,
  adoptBudgetMs: true,
  reconcileMs: true,
  nodes: true,
  rescheduleDelayMs: true,
  commands: true,
  runnerImage: true,
  pglite: true,
  db: true,
  nodeId: true,
  reconcileLock: true,
  liveness: true,
  settleTimeoutMs: true,
  dispatchPollMs: true,
  localMax: true,
  retentionMs: true,
  defaultTimeLimitMs: true,
  onError: true,
};
const OPTION_KEYS = Object.keys(OPTION_KEY_SET);

/** `options` without the keys given as undefined, which take their defaults as if left out. */
function definedOnly(options: TestRuntimeOptions): TestRuntimeOptions {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}

/** Rounds of the event loop allowed for one settle before it is called a hang. */
const SETTLE_ROUNDS = 5_000;

export async function createTestRuntime(options: TestRuntimeOptions = {}): Promise<TestRuntime> {
  // Before anything opens: a misspelt option was silently ignored (`pollMS`
  // left the poll at its default, and the test asserted on the wrong timing).
  checkTestRuntimeOptions(options, OPTION_KEYS);
  const o = { ...DEFAULTS, ...definedOnly(options) };
  const clock = new TestClock();
  const cluster = new SimulatedCluster({
    clock,
    rescheduleDelayMs: o.rescheduleDelayMs,
    ...(o.nodes ? { nodes: o.nodes } : {}),
    ...(o.commands ? { commands: o.commands } : {}),
  });
  // A given db or PGlite is the caller's to close; what is opened here, close() closes.
  let connected: DbHandle | undefined;
  let db: Db;
  if (o.db !== undefined) db = o.db;
  else {
    const pglite = o.pglite ?? (await migratedPglite());
    connected = await connect({ pglite });
    db = connected.db;
    if (o.pglite === undefined) {
      const close = connected.close;
      connected.close = async () => {
        await close();
        await pglite.close();
      };
    }
  }
  // A harness that is not handed back cannot be closed: what it opened is
  // closed here (an own PGlite left open kept the test's process alive for ever).
  try {
    await migrate(db);
    if (o.db !== undefined || o.pglite !== undefined) await emptyTables(db);
  } catch (error) {
    await connected?.close();
    throw error;
  }
  const errors: unknown[] = [];
  let boots = 0;
  let runtime: Runtime;
  /** The first boot, once createRuntime returned it: what a failed open kills. */
  let firstBoot: Runtime | undefined;
  const killed: Runtime[] = [];
  let closing: Promise<void> | undefined;

  /** A node of this harness: its store, cluster and clock, its options but `node`'s. */
  const nodeOn = (node: AddNodeOptions, bootId: string, runnerImage = node.runnerImage) =>
    createRuntime({
      db,
      backend: new SimulatedBackend(cluster),
      clock,
      caps: node.caps ?? o.caps,
      ...(connected ? { notifications: connected } : {}),
      pollMs: o.pollMs,
      adoptBudgetMs: o.adoptBudgetMs,
      reconcileMs: o.reconcileMs,
      nodeId: node.nodeId,
      bootId,
      ...(runnerImage ? { runnerImage } : {}),
      ...(o.reconcileLock === undefined ? {} : { reconcileLock: o.reconcileLock }),
      ...(o.liveness === undefined ? {} : { liveness: o.liveness }),
      ...(o.dispatchPollMs === undefined ? {} : { dispatchPollMs: o.dispatchPollMs }),
      ...((node.localMax ?? o.localMax) === undefined
        ? {}
        : { localMax: node.localMax ?? o.localMax }),
      ...(o.retentionMs === undefined ? {} : { retentionMs: o.retentionMs }),
      ...(o.defaultTimeLimitMs === undefined ? {} : { defaultTimeLimitMs: o.defaultTimeLimitMs }),
      onError: o.onError ?? ((e) => errors.push(e)),
    });
  const others = new HarnessNodes((node, bootId) => nodeOn(node, bootId));
  /** I/O in flight over every node: the harness's boot and the ones `addNode` booted. */
  const busy = () => runtime.busy() + others.busy();

  const boot = async (runnerImage?: string) => {
    boots += 1;
    runtime = await nodeOn({ nodeId: o.nodeId }, `boot${boots}`, runnerImage);
    firstBoot ??= runtime;
    await settled();
    return runtime;
  };

  // Yield to the event loop (not to time: the virtual clock does not move)
  // until nothing is in flight for a few rounds in a row.
  // The hang check needs both many rounds and real time: PGlite answers
  // within a few turns of the loop, a server over a socket takes longer.
  async function settle(): Promise<void> {
    let quiet = 0;
    const deadline = Date.now() + o.settleTimeoutMs;
    for (let i = 0; i < SETTLE_ROUNDS || Date.now() < deadline; i += 1) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (busy() === 0) quiet += 1;
      else quiet = 0;
      if (quiet >= 3) return;
      // Engine calls stalled by `hangApi` answer only when the clock moves:
      // what is still in flight after the rounds waits on them, so this is
      // as settled as it gets until `advance` fires the next timer (waiting
      // out the real-time deadline here made every such advance throw).
      if (i + 1 >= SETTLE_ROUNDS && cluster.stalledCalls() > 0) return;
    }
    throw new HarnessSettleError(busy());
  }

  // The board's order is the tasks' (oldest first), ties by random id: in
  // virtual time every task of one instant ties, so `board()` listed them in
  // a new order each run. It lists them as `tasks()` does instead, by a rank
  // read after every advance, settle and deploy (a card newer than the last
  // read comes after the ranked ones, in the board's order).
  let rank = new Map<string, number>();
  const tasksInOrder = () =>
    db
      .selectFrom('tasks')
      .orderBy('tasks.created_at')
      .orderBy((eb) =>
        eb
          .selectFrom('sessions')
          .select((s) => s.fn.min('sessions.queued_tick').as('first'))
          .whereRef('sessions.task_id', '=', 'tasks.id'),
      )
      .orderBy('tasks.id');
  /** `settle()`, then the tasks' order read for `board()`. */
  let ranking: Promise<void> = Promise.resolve();
  async function settled(): Promise<void> {
    await settle();
    if (closing) return; // close() is closing the store: a boot or advance it cut short reads nothing
    // A store the test took down on purpose fails the read: the last order
    // stands (a newer card comes last), and the advance goes on as before.
    ranking = Promise.resolve()
      .then(() => tasksInOrder().select('tasks.id').execute())
      .then(
        (rows) => {
          rank = new Map(rows.map((r, i) => [r.id, i]));
        },
        () => undefined,
      );
    await ranking;
  }
  const byRank = (a: RuntimeCard, b: RuntimeCard) =>
    (rank.get(a.taskId) ?? rank.size) - (rank.get(b.taskId) ?? rank.size);

  try {
    await boot(o.runnerImage);
  } catch (error) {
    // createRuntime refused an option, or the first boot did not settle.
    firstBoot?.kill();
    if (firstBoot) await drained(firstBoot, KILLED_NODE_DRAIN_MS);
    await connected?.close();
    throw error;
  }

  // advance() and deploy() run one at a time, in the order they were called:
  // an advance not awaited before the next one used to share its start with
  // it (two advances of 20 s moved the clock 20 s), and one made after
  // close() resolved having done nothing. A call made while none is under
  // way starts at once, as before; one made meanwhile waits for the calls
  // before it (settled either way). Both are refused once close() was
  // called, and a deploy whose turn comes after it boots nothing.
  let unfinished = 0;
  let tail: Promise<void> = Promise.resolve();
  function inTurn<T>(
    operation: 'advance' | 'deploy' | 'addNode',
    step: () => Promise<T>,
  ): Promise<T> {
    if (closing) return Promise.reject(new HarnessClosedError(operation));
    const run =
      unfinished === 0
        ? step()
        : tail.then(() =>
            closing && operation !== 'advance'
              ? Promise.reject(new HarnessClosedError(operation))
              : step(),
          );
    unfinished += 1;
    tail = run.then(
      () => {
        unfinished -= 1;
      },
      () => {
        unfinished -= 1;
      },
    );
    return run;
  }

  const harness: TestRuntime = {
    clock,
    cluster,
    get runtime() {
      return runtime;
    },
    get boots() {
      return boots;
    },
    errors,
    advance(ms) {
      // Checked when called, not when its turn comes: the test's line is the one to blame.
      try {
        checkAdvanceMs(ms);
      } catch (error) {
        return Promise.reject(error);
      }
      return inTurn('advance', async () => {
        // The target is read when this call's turn comes, not when it was
        // made: two advances of 20 s are 40 s, awaited one by one or not.
        const target = clock.now() + ms;
        await settle();
        for (;;) {
          const due = clock.nextDue(target);
          if (due === null) break;
          clock.fireNext(due);
          await settle();
        }
        clock.fireNext(target);
        await settled();
      });
    },
    settle: settled,
    deploy(deployOptions = {}) {
      return inTurn('deploy', async () => {
        // Like a replaced app container: no shutdown, no cleanup, no last writes.
        runtime.kill();
        // Only a boot with I/O still in flight is worth waiting for at close():
        // a storm of deploys would otherwise keep every dead runtime.
        for (let i = killed.length - 1; i >= 0; i -= 1)
          if (killed[i]?.busy() === 0) killed.splice(i, 1);
        killed.push(runtime);
        return boot(deployOptions.runnerImage);
      });
    },
    addNode(nodeOptions) {
      try {
        checkAddNodeOptions(nodeOptions);
      } catch (error) {
        return Promise.reject(error);
      }
      return inTurn('addNode', async () => {
        const node = await others.add(nodeOptions);
        await settled();
        return node;
      });
    },
    get nodes() {
      return others.all();
    },
    // Virtual time stands still between timers, so many rows share an
    // instant: ties go by the tick that queued them and their place in it,
    // never by the random id, so a seed lists the same history every time.
    async sessions() {
      if (closing) throw new HarnessClosedError('sessions');
      const rows = await db
        .selectFrom('sessions')
        .selectAll()
        .orderBy('enqueued_at')
        .orderBy('queued_tick')
        .orderBy('turn')
        .orderBy('join_seq')
        .orderBy('id')
        .execute();
      return rows.map(toSession);
    },
    async tasks() {
      if (closing) throw new HarnessClosedError('tasks');
      const rows = await tasksInOrder().selectAll('tasks').execute();
      return rows.map(toTask);
    },
    async events(sessionId) {
      if (closing) throw new HarnessClosedError('events');
      return listSessionEvents(db, sessionId);
    },
    // Array.prototype.sort is stable: unranked cards keep the board's order.
    board: () => runtime.cards(null).sort(byRank),
    execLog: (sessionId) =>
      cluster.execLog(sessionId === undefined ? undefined : checkRunLookupId(sessionId)),
    close() {
      // Idempotent, as Runtime.stop is: a test that closes its harness and
      // an afterEach that closes it again must not fail on a closed PGlite.
      closing ??= (async () => {
        runtime.kill();
        others.killAll();
        // A killed node's statements already sent still run: wait for them
        // (this boot's and every one a deploy killed), so the caller's
        // teardown (a TRUNCATE, a DROP) does not race them.
        // A call a test left hanging on purpose (an engine stalled in virtual
        // time) never ends: hence a short deadline, not the settle timeout.
        for (const node of [...killed, runtime, ...others.all()])
          await drained(node, KILLED_NODE_DRAIN_MS);
        // And the board's order read, if one is under way (its caller hears how it ended).
        await ranking.catch(() => undefined);
        await connected?.close();
      })();
      return closing;
    },
  };
  return harness;
}
