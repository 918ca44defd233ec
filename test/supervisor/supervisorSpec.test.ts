import * as mod from '../../src/supervisor/supervisorSpec.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/supervisor/supervisorSpec.ts', import.meta.url), mod);
