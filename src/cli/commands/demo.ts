/**
 * `roundtable demo`: `start` plus a workload that shows every state of the
 * board within a minute. It keeps its data apart (`./.roundtable/demo`) so
 * it never mixes with your own queue, and runs on the simulated cluster (the
 * reschedule is the simulator's), unless --docker says otherwise.
 */
import type { CommandContext } from '../commandContext.js';
import { demoPlan } from '../demoPlan.js';
import type { ExitCode } from '../exitCodes.js';
import { runDemoWorkload } from '../runDemoWorkload.js';
import { runStart } from './start.js';

/** What the demo changes in the defaults (flags, environment and file still win). */
export const DEMO_DEFAULTS = { dataDir: './.roundtable/demo', backend: 'simulated' } as const;

export function runDemo(ctx: CommandContext): Promise<ExitCode> {
  const { config } = ctx;
  const plan = demoPlan({ users: config.demo.users, tasksPerUser: config.demo.tasksPerUser });
  const log = ctx.logger.child({ component: 'demo' });
  return runStart(ctx, {
    users: config.demo.users,
    afterStart: (node) => {
      log.info(
        { tasks: config.demo.users.length * config.demo.tasksPerUser, caps: config.caps },
        'demo: submitting more tasks than the caps allow',
      );
      return runDemoWorkload(node.runtime, node.cluster, plan, log);
    },
  });
}
