import * as mod from '../../../src/ui-server/inspector/machineGraph.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(new URL('../../../src/ui-server/inspector/machineGraph.ts', import.meta.url), mod);
