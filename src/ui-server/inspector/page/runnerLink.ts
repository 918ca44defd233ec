/**
 * The board's link to a job's TaskRunner, `/inspect#runner=<sessionId>`
 * (`&task=<taskId>` to link back when the inspector does not know the job):
 * what it asks for, and where that runner sits in the supervision tree. A
 * runner's child id is its session's id; a live incarnation is preferred
 * over an ended one, and an ended one names the fold it is hidden in.
 * Pure, no DOM.
 */
import type { InspectorTree } from '../inspectorTree.js';

export interface RunnerLink {
  runner: string;
  task: string | null;
}

/**
 * The runner (and task) a URL fragment names, or null when it names none.
 *
 * @example
 * ```ts
 * parseRunnerLink('#runner=ses_1') // => { runner: 'ses_1', task: null }
 * parseRunnerLink('#token=t&runner=ses_1&task=tsk_9') // => { runner: 'ses_1', task: 'tsk_9' }
 * parseRunnerLink('#token=t') // => null
 * parseRunnerLink('') // => null
 * ```
 */
export function parseRunnerLink(hash: string): RunnerLink | null {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const runner = params.get('runner');
  if (!runner) return null;
  return { runner, task: params.get('task') || null };
}

/** Where the runner is: what to select, and the "N ended" fold to open (null when live). */
export interface RunnerPlace {
  sessionId: string;
  path: string;
  fold: string | null;
}

/**
 * The tree's child whose id is `runner`, live ones first; null when this
 * node's tree has none (it ran on another node, or aged out).
 *
 * @example
 * ```ts
 * const child = (id, sessionId, status) => ({ id, sessionId, status, restartCount: 0, exits: [], restartDelayMs: null })
 * const sup = { id: 'taskRunners', sessionId: 'x:3', status: 'running', reason: null, intensityReachedAt: null,
 *   children: [child('ses_1', 'x:10', 'stopped'), child('ses_2', 'x:11', 'running')] }
 * const tree = { supervisors: { 'x:3': sup }, monitors: {} }
 * findRunner(tree, 'ses_2') // => { sessionId: 'x:11', path: 'x:3/ses_2', fold: null }
 * findRunner(tree, 'ses_1') // => { sessionId: 'x:10', path: 'x:3/ses_1', fold: 'ended:x:3' }
 * findRunner(tree, 'ses_9') // => null
 * ```
 */
export function findRunner(tree: InspectorTree, runner: string): RunnerPlace | null {
  let ended: RunnerPlace | null = null;
  for (const sup of Object.values(tree.supervisors)) {
    for (const c of sup.children) {
      if (c.id !== runner || c.sessionId === null) continue;
      const path = `${sup.sessionId}/${c.id}`;
      // The same fold the tree draws ended children in (renderTree.ts).
      if (c.status !== 'stopped') return { sessionId: c.sessionId, path, fold: null };
      ended ??= { sessionId: c.sessionId, path, fold: `ended:${sup.sessionId}` };
    }
  }
  return ended;
}
