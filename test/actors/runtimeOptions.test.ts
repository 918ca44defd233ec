import { describe } from 'vitest';
import * as mod from '../../src/actors/runtimeOptions.js';
import { runDocExamples } from '../support/docExamples.js';

describe('runtimeOptions doc examples', () => {
  runDocExamples(new URL('../../src/actors/runtimeOptions.ts', import.meta.url), mod);
});
