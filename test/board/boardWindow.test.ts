import * as mod from '../../src/board/boardWindow.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/board/boardWindow.ts', import.meta.url), mod);
