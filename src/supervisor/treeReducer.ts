/**
 * The state of a supervisor's inspection actor: its children, as the events
 * describe them. Pure, so an inspector can replay the event stream.
 */
import type { SupervisorEvent } from './events.js';
import { describeExitReason } from './exitReason.js';

export interface TreeSnapshot {
  id: string;
  status?: 'running' | 'shutdown';
  children: Record<string, { sessionId?: string; status: string; restartCount: number }>;
}

/**
 * @example
 * ```ts
 * const s0 = { id: 'root', children: {} }
 * const s1 = treeReducer(s0, { type: 'roundtable.child.started', supervisorId: 'root', childId: 'a', sessionId: 'x:1', restartCount: 0 })
 * s1.children.a // => { sessionId: 'x:1', status: 'running', restartCount: 0 }
 * treeReducer(s1, { type: 'roundtable.child.exited', supervisorId: 'root', childId: 'a', reason: 'killed' }).children.a.status // => 'exited: killed'
 * ```
 */
export function treeReducer(state: TreeSnapshot, event: SupervisorEvent): TreeSnapshot {
  switch (event.type) {
    case 'roundtable.child.started':
      return {
        ...state,
        children: {
          ...state.children,
          [event.childId]: {
            sessionId: event.sessionId,
            status: 'running',
            restartCount: event.restartCount,
          },
        },
      };
    case 'roundtable.child.exited':
    case 'roundtable.child.restarting': {
      const prev = state.children[event.childId] ?? { status: 'stopped', restartCount: 0 };
      const status =
        event.type === 'roundtable.child.exited'
          ? `exited: ${describeExitReason(event.reason)}`
          : 'restarting';
      return { ...state, children: { ...state.children, [event.childId]: { ...prev, status } } };
    }
    case 'roundtable.supervisor.shutdown':
      return { ...state, status: 'shutdown' };
    default:
      return state;
  }
}
