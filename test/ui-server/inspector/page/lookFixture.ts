/**
 * A fixed inspector scene for the screenshot and accessibility tests: the
 * real page and its real bundle, fed by a scripted topic that sends the same
 * frames every time (a runtime's tree with two live TaskRunners and an
 * ended one, a timeline, the TaskRunner's real statechart), so a picture
 * differs only when the page does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { taskRunnerMachine } from '../../../../src/machines/taskRunner.js';
import {
  INSPECTOR_HTML,
  inspectorElkScript,
  inspectorScript,
} from '../../../../src/ui-server/inspector/inspectorPage.js';
import {
  type ActorSummary,
  INSPECT_SUBPROTOCOL,
  type InspectServerFrame,
} from '../../../../src/ui-server/inspector/inspectorProtocol.js';
import type { InspectorTree } from '../../../../src/ui-server/inspector/inspectorTree.js';
import { machineGraph } from '../../../../src/ui-server/inspector/machineGraph.js';
import type { TimelineEntry } from '../../../../src/ui-server/inspector/timeline.js';

const T0 = Date.parse('2026-11-01T10:00:00Z');
const runner = (n: number) => `ses_${String(n).padStart(4, '0')}`;

const tree: InspectorTree = {
  supervisors: {
    'x:1': {
      id: 'root',
      sessionId: 'x:1',
      status: 'running',
      reason: null,
      intensityReachedAt: null,
      children: [
        {
          id: 'runnerPool',
          sessionId: 'x:2',
          status: 'running',
          restartCount: 1,
          exits: [{ at: T0 + 5000, reason: 'killed', clean: false }],
          restartDelayMs: null,
        },
        {
          id: 'taskRunners',
          sessionId: 'x:3',
          status: 'running',
          restartCount: 0,
          exits: [],
          restartDelayMs: null,
        },
        {
          id: 'heartbeat',
          sessionId: 'x:4',
          status: 'running',
          restartCount: 0,
          exits: [],
          restartDelayMs: null,
        },
      ],
    },
    'x:3': {
      id: 'taskRunners',
      sessionId: 'x:3',
      status: 'running',
      reason: null,
      intensityReachedAt: null,
      children: [
        {
          id: runner(1),
          sessionId: 'x:10',
          status: 'stopped',
          restartCount: 0,
          exits: [{ at: T0 + 9000, reason: 'normal', clean: true }],
          restartDelayMs: null,
        },
        {
          id: runner(2),
          sessionId: 'x:11',
          status: 'running',
          restartCount: 0,
          exits: [],
          restartDelayMs: null,
        },
        {
          id: runner(3),
          sessionId: 'x:12',
          status: 'running',
          restartCount: 2,
          exits: [{ at: T0 + 7000, reason: 'error: container lost', clean: false }],
          restartDelayMs: null,
        },
      ],
    },
  },
  monitors: {
    '#Monitor<1>': {
      ref: '#Monitor<1>',
      watcherSessionId: 'x:2',
      targetSessionId: 'x:11',
      targetId: runner(2),
      since: T0 + 6000,
      inferred: true,
    },
  },
};

const actor = (sessionId: string, id: string, extra: Partial<ActorSummary> = {}): ActorSummary => ({
  sessionId,
  id,
  parentId: null,
  systemId: null,
  status: 'active',
  supervisor: false,
  machine: true,
  job: null,
  ...extra,
});

const actors: ActorSummary[] = [
  actor('x:1', 'root', { supervisor: true, machine: false }),
  actor('x:2', 'runnerPool'),
  actor('x:3', 'taskRunners', { supervisor: true, machine: false }),
  actor('x:4', 'heartbeat'),
  actor('x:10', runner(1), {
    status: 'done',
    job: { taskId: 'task_0001', title: 'nightly build', userId: 'alice' },
  }),
  actor('x:11', runner(2), {
    job: { taskId: 'task_0002', title: 'lint the monorepo', userId: 'bob' },
  }),
  actor('x:12', runner(3), {
    job: { taskId: 'task_0003', title: 'integration tests (postgres 16)', userId: 'alice' },
  }),
  actor('x:13', 'containerRun', { parentId: 'x:11' }),
];

const line = (
  s: number,
  kind: TimelineEntry['kind'],
  subject: string,
  sessionId: string,
  text: string,
  alarm = false,
): TimelineEntry => ({
  at: T0 + s * 1000,
  kind,
  subject,
  sessionId,
  text,
  alarm,
});

const timeline: TimelineEntry[] = [
  line(1, 'start', 'root/runnerPool', 'x:2', 'started'),
  line(2, 'start', `taskRunners/${runner(1)}`, 'x:10', 'started'),
  line(3, 'grant', runner(1), 'x:10', `slot held for session ${runner(1)}`),
  line(4, 'start', `taskRunners/${runner(2)}`, 'x:11', 'started'),
  line(5, 'exit', 'root/runnerPool', 'x:2', 'exited: killed', true),
  line(6, 'start', 'root/runnerPool', 'x:2', 'restarted (restart #1)'),
  line(7, 'exit', `taskRunners/${runner(3)}`, 'x:12', 'exited: error: container lost', true),
  line(9, 'exit', `taskRunners/${runner(1)}`, 'x:10', 'exited: normal'),
];

function actorFrame(sessionId: string, withGraph: boolean): InspectServerFrame {
  const a = actors.find((x) => x.sessionId === sessionId)!;
  return {
    type: 'actor',
    sessionId,
    id: a.id,
    parentId: a.parentId,
    status: a.status,
    value: 'running',
    active: ['taskRunner', 'taskRunner.running'],
    context: {
      sessionId: a.id,
      userId: a.job?.userId ?? null,
      start: 'granted',
      mode: 'owner',
      handle: 'svc-42',
    },
    output: null,
    error: null,
    ...(withGraph ? { graph: machineGraph(taskRunnerMachine) } : {}),
  };
}

export interface LookServer {
  url: string;
  close(): Promise<void>;
}

/** Serves the page and the scripted topic on a port of its own. */
export async function startLookServer(): Promise<LookServer> {
  const js = await inspectorScript();
  const elk = await inspectorElkScript();
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (p) => (p.has(INSPECT_SUBPROTOCOL) ? INSPECT_SUBPROTOCOL : false),
  });
  wss.on('connection', (ws) => {
    const send = (f: InspectServerFrame) => ws.send(JSON.stringify(f));
    send({
      type: 'hello',
      protocol: 1,
      now: T0 + 10_000,
      limits: { eventsPerActor: 20, timelineSize: 500, flushMs: 100 },
    });
    send({ type: 'tree', version: 1, tree, roots: ['x:1'], actors });
    send({ type: 'timeline', reset: true, entries: timeline });
    ws.on('message', (data) => {
      const f = JSON.parse(String(data)) as { type: string; sessionId: string | null };
      if (f.type !== 'select' || f.sessionId === null) return;
      send(actorFrame(f.sessionId, true));
      send({
        type: 'events',
        sessionId: f.sessionId,
        reset: true,
        events: [
          {
            seq: 1,
            at: T0 + 4000,
            type: 'xstate.init',
            sourceId: null,
            event: { type: 'xstate.init' },
          },
          {
            seq: 2,
            at: T0 + 4100,
            type: 'roundtable.runner.loadRow.done',
            sourceId: null,
            event: { type: 'roundtable.runner.loadRow.done', output: { kind: 'run' } },
          },
        ],
      });
    });
  });
  const server: Server = createServer((req, res) => {
    if (req.url === '/inspect') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(INSPECTOR_HTML);
    } else if (req.url === '/inspect-elk.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(elk);
    } else if (req.url === '/inspect.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(js);
    } else res.writeHead(404).end();
  });
  server.on('upgrade', (req, socket, head) =>
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
