import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DockerBackend } from '../../src/containers/docker/DockerBackend.js';
import { SwarmBackend } from '../../src/containers/docker/SwarmBackend.js';
import { LocalBackend } from '../../src/containers/local/LocalBackend.js';
import * as namespace from '../../src/containers/namespace.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { runDocExamples } from '../support/docExamples.js';
import { newSessionId } from './contract.js';
import { simulatedFixture } from './simulated/simulatedFixture.js';

runDocExamples(new URL('../../src/containers/namespace.ts', import.meta.url), namespace);

const locals: LocalBackend[] = [];
const localBase = mkdtempSync(join(tmpdir(), 'rt-ns-'));
afterAll(() => {
  for (const b of locals) b.close();
  rmSync(localBase, { recursive: true, force: true });
});

// None of these constructors contacts an engine, so no Docker is needed here.
const builders: Record<string, (options: { namespace?: string }) => { namespace: string }> = {
  swarm: (o) => new SwarmBackend({ ...o, host: 'unix:///nonexistent/docker.sock' }),
  docker: (o) => new DockerBackend({ ...o, host: 'unix:///nonexistent/docker.sock' }),
  simulated: (o) => new SimulatedBackend(simulatedFixture().cluster, o),
  local: (o) => {
    const b = new LocalBackend({ ...o, baseDir: localBase });
    locals.push(b);
    return b;
  },
};

describe.each(Object.entries(builders))('the %s backend’s namespace', (_, build) => {
  it('defaults to "default" and keeps a valid one', () => {
    expect(build({}).namespace).toBe('default');
    expect(build({ namespace: 'team-a' }).namespace).toBe('team-a');
  });

  it.each(['', 'Team', 'a=b', 'a,b', '-a', 'a-', 'x'.repeat(33)])(
    'rejects %j at construction with invalid_argument',
    (bad) => {
      expect(() => build({ namespace: bad })).toThrow(
        expect.objectContaining({ name: 'ContainerError', code: 'invalid_argument' }),
      );
    },
  );
});

describe('what the library docs say of the default', () => {
  it('names the namespace every backend defaults to (docs/library.md)', () => {
    const doc = readFileSync(new URL('../../docs/library.md', import.meta.url), 'utf8');
    const said = /default their namespace to `([^`]+)`/.exec(doc)?.[1];
    expect(said).toBe(namespace.DEFAULT_NAMESPACE);
    for (const build of Object.values(builders)) expect(build({}).namespace).toBe(said);
  });
});

describe('namespaces on the simulated cluster', () => {
  it('labels what a backend creates with its namespace; callers cannot override it', async () => {
    const fx = simulatedFixture();
    const sessionId = newSessionId('label');
    await fx.settle(
      fx.backend.start({
        sessionId,
        image: fx.image,
        command: ['echo', 'hi'],
        labels: { user: 'ann', [namespace.NAMESPACE_LABEL]: 'someone-else' },
      }),
    );
    expect(fx.cluster.serviceOf(sessionId)?.labels).toEqual({
      user: 'ann',
      'roundtable.session': sessionId,
      'roundtable.namespace': fx.backend.namespace,
    });
  });

  it('filters services by label terms as Docker does (key, key=value, all must hold)', async () => {
    const fx = simulatedFixture();
    const a = new SimulatedBackend(fx.cluster, { namespace: 'a' });
    const b = new SimulatedBackend(fx.cluster, { namespace: 'b' });
    const [ida, idb] = [newSessionId('a'), newSessionId('b')];
    await fx.settle(a.start({ sessionId: ida, image: 'i', command: ['echo'] }));
    await fx.settle(b.start({ sessionId: idb, image: 'i', command: ['echo'] }));
    const list = (label: string[]) =>
      fx.settle(fx.cluster.api.listServices({ label })).then((s) => s.map((x) => x.sessionId));
    expect((await list(['roundtable.session'])).sort()).toEqual([ida, idb].sort());
    expect(await list(namespace.namespaceFilter('a'))).toEqual([ida]);
    expect(await list(['roundtable.namespace=b', 'roundtable.session'])).toEqual([idb]);
    expect(await list(['roundtable.namespace=c'])).toEqual([]);
    expect(await list(['roundtable.namespace'])).toHaveLength(2);
  });
});
