import type { ContainerErrorCode, CreatedTask } from 'roundtable';
import type {
  ExecRecord,
  Session,
  SessionEvent,
  SimCommandRegistry,
  SimScript,
  Task,
} from 'roundtable/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';

// The package's entry points, imported by name as a user would (package
// self-reference through the `exports` map), so a broken map fails here.
describe('package entry points', () => {
  it('roundtable assembles a node', async () => {
    const m = await import('roundtable');
    expect(typeof m.createRuntime).toBe('function');
    expect(typeof m.connect).toBe('function');
    expect(typeof m.migrate).toBe('function');
    expect(typeof m.SwarmBackend).toBe('function');
    expect(typeof m.SimulatedBackend).toBe('function');
    expect(typeof m.createUiServer).toBe('function');
    expect(typeof m.createInspector).toBe('function');
    expect(typeof m.startInspectorServer).toBe('function');
    // What a backend of one's own needs to meet docs/containers.md's rules.
    expect(m.handleFor('s1')).toBe('rt-s1');
    expect(() => m.validateSessionId('../etc')).toThrow(m.ContainerError);
    expect(m.runLabels('ns', 's1')).toEqual({
      'roundtable.session': 's1',
      'roundtable.namespace': 'ns',
    });
    // What onError is told besides errors, told apart as docs/library.md shows.
    const notice = new m.OwnerDownNotice('b@1', 'no_beat');
    expect(notice).toBeInstanceOf(Error);
    expect([notice.code, notice.reason]).toEqual(['OWNER_DOWN', 'no_beat']);
    expect(new m.BootLockLostError('a@1', 'lost').code).toBe('BOOT_LOCK_LOST');
    // The Reconciler's notice of a live owner's run taken past its time limit (docs/runtime.md).
    const taken = new m.OverdueRunTakenNotice('ses_1', 'b@1', 60_000, 180_000);
    expect(taken).toBeInstanceOf(Error);
    expect([taken.code, taken.owner]).toEqual(['OVERDUE_RUN_TAKEN', 'b@1']);
    // And what the store says, as docs/operations.md names it.
    for (const E of [m.ConnectError, m.DbTimeoutError, m.MigrationError, m.PooledSessionError])
      expect(E.prototype).toBeInstanceOf(Error);
    expect(m.isTransientDbError(Object.assign(new Error('x'), { code: '57P01' }))).toBe(true);
  });

  it('roundtable exports what a misconfigured board or inspector is refused with', async () => {
    const m = await import('roundtable');
    expect(m.UI_SERVER_DEFAULTS.maxPayload).toBe(65_536);
    const tokens = { admin: 'a'.repeat(20), users: {} };
    const source = {} as never;
    const refused = m
      .mountUiServer({ source, commands: source, tokens, limits: { maxPayLoad: 1 } as never })
      .catch((e: unknown) => e);
    const error = await refused;
    expect(error).toBeInstanceOf(m.UiServerConfigError);
    expect((error as { code: string }).code).toBe('UI_CONFIG');
    expect(() => m.createInspector({ maxViewer: 3 } as never)).toThrow(m.InspectorConfigError);
  });

  it('roundtable/supervisor and roundtable/machines stand alone', async () => {
    const sup = await import('roundtable/supervisor');
    expect(typeof sup.startSupervisor).toBe('function');
    expect(typeof sup.monitor).toBe('function');
    const machines = await import('roundtable/machines');
    expect(machines.decide('2026-07-14T12:47:00Z', '2026-07-14T10:44:00Z', 0, 900_000)).toEqual({
      kind: 'give_up',
      reason: 'container_replaced',
    });
    expect(typeof machines.containerRunMachine).toBe('object');
  });

  it('roundtable/testing and roundtable/client', async () => {
    const testing = await import('roundtable/testing');
    expect(typeof testing.createTestRuntime).toBe('function');
    // The defaults a suite extends with commands of its own (`commands` replaces them).
    const commands: SimCommandRegistry = {
      ...testing.defaultCommands,
      build: () => ({ output: [], durationMs: 1_000, exitCode: 0 }),
    };
    const script: SimScript | undefined = commands.agent?.(['10']);
    expect(script?.durationMs).toBe(10_000);
    const property = await import('roundtable/testing/property');
    expect(typeof property.assertReplayable).toBe('function');
    const client = await import('roundtable/client');
    expect(typeof client.connectBoard).toBe('function');
    expect(typeof client.createBoardStore).toBe('function');
  });

  it('names the types the harness and the runtime answer with', async () => {
    const { createTestRuntime } = await import('roundtable/testing');
    type H = Awaited<ReturnType<typeof createTestRuntime>>;
    expectTypeOf<Awaited<ReturnType<H['sessions']>>>().toEqualTypeOf<Session[]>();
    expectTypeOf<Awaited<ReturnType<H['tasks']>>>().toEqualTypeOf<Task[]>();
    expectTypeOf<Awaited<ReturnType<H['events']>>>().toEqualTypeOf<SessionEvent[]>();
    expectTypeOf<ReturnType<H['execLog']>>().toEqualTypeOf<ExecRecord[]>();
    expectTypeOf<CreatedTask['position']>().toBeNumber();
    expectTypeOf<'exec_lost'>().toExtend<ContainerErrorCode>();
  });
});
