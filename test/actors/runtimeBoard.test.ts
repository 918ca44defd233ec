import * as board from '../../src/actors/runtimeBoard.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeBoard.ts', import.meta.url), board);
