/**
 * `/metrics`: the runtime's numbers (through the port) and the server's own,
 * in one prom-client registry per server, so two servers in one process (tests)
 * never share counters.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { BoardCommands } from '../board/boardPort.js';
import type { HubStats } from './boardHub.js';
import { type HealthFlags, healthFlags } from './nodeHealth.js';

/** The health gauges, 1 or 0, by the flag they show (src/ui-server/nodeHealth.ts). */
const HEALTH_GAUGES: Record<keyof HealthFlags, { name: string; help: string }> = {
  engineAvailable: {
    name: 'roundtable_engine_available',
    help: 'Whether the container engine answered its last start or probe',
  },
  takingGrants: {
    name: 'roundtable_taking_grants',
    help: 'Whether this node may take grants (its boot lock held, or no lock liveness); 0 while the lock is lost, busy, or its connection is not a session',
  },
  listening: {
    name: 'roundtable_notifications_listening',
    help: "Whether other nodes' ticks reach this node by NOTIFY (0: it polls alone)",
  },
  leading: {
    name: 'roundtable_reconciler_leader',
    help: "Whether this node leads the Reconciler's passes",
  },
};

/** Wait-time buckets in seconds: from an immediate grant to a long queue. */
export const WAIT_BUCKETS = [0.1, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600];

/** A dispatch tick's round trip in seconds: a millisecond on a quiet server to a stalled one. */
export const TICK_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Ops one tick carried: one submit alone to a full batch (500). */
export const TICK_OPS_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500];

/**
 * Distinct refusal codes kept as their own series; any further code counts as
 * `other`. The codes are constants of the server's, but a series per code must
 * stay bounded even if one were ever built from input.
 */
export const MAX_REFUSAL_CODES = 48;

/** The server's metrics; `render()` returns the Prometheus text. */
export interface BoardMetrics {
  contentType: string;
  render(): Promise<string>;
  /**
   * Counts one refusal by its answer's `error.code`: a request, an upgrade or
   * a connection the board or its listener turned away (limits, auth, bad
   * input, timeouts, its own failures).
   */
  refused(code: string): void;
}

/** Builds the registry. The port's `metrics()` is read once per scrape. */
export function createBoardMetrics(
  commands: BoardCommands,
  hubStats: () => HubStats,
): BoardMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const queueDepth = new Gauge({
    name: 'roundtable_queue_depth',
    help: 'Sessions waiting in line for a runner, per user',
    labelNames: ['user'],
    registers: [registry],
  });
  const running = new Gauge({
    name: 'roundtable_running',
    help: 'Sessions holding a runner, per user',
    labelNames: ['user'],
    registers: [registry],
  });
  const wait = new Histogram({
    name: 'roundtable_wait_seconds',
    help: 'Time from enqueue to holding a runner',
    buckets: WAIT_BUCKETS,
    registers: [registry],
  });
  const restarts = new Counter({
    name: 'roundtable_restarts_total',
    help: 'Actor restarts by supervisors',
    registers: [registry],
  });
  const giveUps = new Counter({
    name: 'roundtable_give_ups_total',
    help: 'Runs given up, by reason',
    labelNames: ['reason'],
    registers: [registry],
  });
  const tickSeconds = new Histogram({
    name: 'roundtable_tick_seconds',
    help: "Round trip of this node's dispatch ticks, from send to reply or failure",
    buckets: TICK_BUCKETS,
    registers: [registry],
  });
  const tickOps = new Histogram({
    name: 'roundtable_tick_ops',
    help: "Ops (enqueues, handles, finishes, cancels...) each of this node's ticks carried",
    buckets: TICK_OPS_BUCKETS,
    registers: [registry],
  });
  const ticks = new Counter({
    name: 'roundtable_ticks_total',
    help: 'Dispatch ticks this node sent, by outcome (a failed one is sent again)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const grants = new Counter({
    name: 'roundtable_grants_total',
    help: 'Sessions granted a runner on this node',
    registers: [registry],
  });
  const ownerDowns = new Counter({
    name: 'roundtable_owner_downs_total',
    help: "Other boots this node's liveness watch found gone, by reason",
    labelNames: ['reason'],
    registers: [registry],
  });
  const submissions = new Counter({
    name: 'roundtable_submissions_total',
    help: 'Submissions through this node, by outcome (queued, replayed by their key, conflict)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const dropped = new Counter({
    name: 'roundtable_metric_samples_dropped_total',
    help: 'Histogram samples dropped because too many waited for a scrape, by series',
    labelNames: ['series'],
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'roundtable_http_refusals_total',
    help: 'Requests, WebSocket upgrades and connections the board refused, by the code of its answer (429 too_many_*, 408 request_timeout, 401 unauthorized, ...)',
    labelNames: ['code'],
    registers: [registry],
  });
  const refusalCodes = new Set<string>();
  const connections = new Gauge({
    name: 'roundtable_board_connections',
    help: 'Open board WebSocket connections',
    registers: [registry],
  });
  const frames = new Counter({
    name: 'roundtable_board_frames_sent_total',
    help: 'Frames sent to board clients',
    registers: [registry],
  });
  // Made at the first scrape that has the flag: a part this node does not
  // have (no boot lock, no leader lock) has no series at all, not a 0.
  const healthGauges = new Map<keyof HealthFlags, Gauge>();
  const healthGauge = (flag: keyof HealthFlags): Gauge => {
    let gauge = healthGauges.get(flag);
    if (gauge === undefined) {
      gauge = new Gauge({ ...HEALTH_GAUGES[flag], registers: [registry] });
      healthGauges.set(flag, gauge);
    }
    return gauge;
  };

  return {
    contentType: registry.contentType,
    refused(code) {
      if (!refusalCodes.has(code) && refusalCodes.size >= MAX_REFUSAL_CODES) {
        refusals.inc({ code: 'other' });
        return;
      }
      refusalCodes.add(code);
      refusals.inc({ code });
    },
    async render() {
      const m = commands.metrics();
      // Gauges are reset so a user whose queue emptied does not linger.
      queueDepth.reset();
      for (const q of m.queueDepth) queueDepth.set({ user: q.userId }, q.queued);
      running.reset();
      for (const r of m.running) running.set({ user: r.userId }, r.running);
      for (const s of m.waitSamplesSeconds) wait.observe(s);
      // The port reports monotonic totals; counters mirror them.
      restarts.reset();
      restarts.inc(m.restartsTotal);
      giveUps.reset();
      for (const [reason, n] of Object.entries(m.giveUpsTotal)) giveUps.inc({ reason }, n);
      for (const t of m.tickSamples) {
        tickSeconds.observe(t.seconds);
        tickOps.observe(t.ops);
      }
      ticks.reset();
      ticks.inc({ outcome: 'ok' }, m.ticksTotal.ok);
      ticks.inc({ outcome: 'failed' }, m.ticksTotal.failed);
      grants.reset();
      grants.inc(m.grantsTotal);
      ownerDowns.reset();
      for (const [reason, n] of Object.entries(m.ownerDownsTotal)) ownerDowns.inc({ reason }, n);
      submissions.reset();
      for (const [outcome, n] of Object.entries(m.submissionsTotal ?? {}))
        submissions.inc({ outcome }, n);
      dropped.reset();
      for (const [series, n] of Object.entries(m.samplesDroppedTotal)) dropped.inc({ series }, n);
      const hub = hubStats();
      connections.set(hub.connections);
      frames.reset();
      frames.inc(hub.framesSent);
      const health = commands.health?.();
      if (health !== undefined)
        for (const [flag, on] of Object.entries(healthFlags(health)) as [
          keyof HealthFlags,
          boolean,
        ][])
          healthGauge(flag).set(on ? 1 : 0);
      return registry.metrics();
    },
  };
}
