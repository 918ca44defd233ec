import { describe, expect, it } from 'vitest';
import * as mod from '../../src/actors/runtimeOptions.js';
import { RuntimeOptionError, resolveRuntimeOptions } from '../../src/actors/runtimeOptions.js';
import type { RuntimeOptions } from '../../src/actors/runtimeTypes.js';
import { systemClock } from '../../src/supervisor/clock.js';
import { runDocExamples } from '../support/docExamples.js';

describe('runtimeOptions doc examples', () => {
  runDocExamples(new URL('../../src/actors/runtimeOptions.ts', import.meta.url), mod);
});

const backend = { start() {}, attach() {}, observe() {}, remove() {}, ping() {} };
const base = { db: {}, backend } as unknown as RuntimeOptions;

function problem(options: unknown): string {
  try {
    resolveRuntimeOptions(options as RuntimeOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(RuntimeOptionError);
    return (error as Error).message;
  }
  throw new Error('resolved');
}

describe('createRuntime options as a library user meets them', () => {
  it('needs only the store and the backend: the clock, caps and node id have defaults', () => {
    const o = resolveRuntimeOptions(base);
    expect(o.clock).toBe(systemClock);
    expect(o.caps).toEqual({ maxRunning: 4, defaultUserCap: 2 });
    expect(o.nodeId).toBe(mod.defaultNodeId());
    expect(o.db).toBe(base.db);
    expect(o.backend).toBe(backend);
  });

  it('names the bad field and says what it must be', () => {
    expect(problem({ db: {} })).toMatch(/^createRuntime: backend must be a ContainerBackend/);
    expect(problem({ backend })).toMatch(/^createRuntime: db is required/);
    expect(problem({ ...base, pollMs: 0 })).toBe('createRuntime: pollMs must be a number > 0');
    expect(problem({ ...base, caps: { maxRunning: -1, defaultUserCap: 1 } })).toBe(
      'createRuntime: caps.maxRunning must be an integer >= 0',
    );
    expect(problem({ ...base, clock: { now: () => 0 } })).toMatch(
      /^createRuntime: clock must be a clock/,
    );
    expect(problem({ ...base, onError: 'log' })).toBe('createRuntime: onError must be a function');
    expect(problem(undefined)).toMatch(/must be an object/);
  });

  it('suggests the option meant for a misspelt one (the project-wide did-you-mean)', () => {
    expect(problem({ ...base, pollMS: 5 })).toBe(
      'createRuntime: pollMS is unknown; did you mean pollMs?',
    );
    expect(problem({ ...base, maxRuning: 5 })).toBe('createRuntime: maxRuning is unknown');
    expect(problem({ ...base, adoptBudget: 5 })).toBe(
      'createRuntime: adoptBudget is unknown; did you mean adoptBudgetMs?',
    );
  });
});
