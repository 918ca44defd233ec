import { expect, it } from 'vitest';
import * as commands from '../../../src/containers/simulated/commands.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(new URL('../../../src/containers/simulated/commands.ts', import.meta.url), commands);

it('an agent run narrates over its whole duration, in order', () => {
  const script = commands.scriptFor(commands.defaultCommands, ['agent', '30', '2']);
  const times = script.output.map((o) => o.atMs);
  expect(times).toEqual([...times].sort((a, b) => a - b));
  expect(times.at(-1)).toBe(30_000);
  expect(script.exitCode).toBe(2);
  expect(commands.scriptFor(commands.defaultCommands, ['toString']).exitCode).toBe(127);
});
