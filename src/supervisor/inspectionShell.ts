/**
 * A supervisor's own XState actor, which exists only to be seen: the
 * supervisor sends it its events, and its snapshot (the tree, by
 * treeReducer) flows through the same inspect observer as the children's
 * frames, so an inspector draws the tree from one stream.
 */
import { type AnyActorRef, createActor, fromTransition } from 'xstate';
import { shellObserver } from './inspectionGate.js';
import type { SupervisorRuntime } from './supervisorSpec.js';
import { type TreeSnapshot, treeReducer } from './treeReducer.js';

/** The started shell, or `undefined` when nobody inspects. */
export function inspectionShell(id: string, runtime: SupervisorRuntime): AnyActorRef | undefined {
  const inspect = shellObserver(runtime.inspect);
  if (!inspect) return undefined;
  const initial: TreeSnapshot = { id, children: {} };
  const shell = createActor(fromTransition(treeReducer, initial), {
    id,
    clock: runtime.clock,
    inspect,
  });
  shell.start();
  return shell;
}
