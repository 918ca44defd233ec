import * as mod from '../../../src/ui-server/inspector/inspectorTree.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(new URL('../../../src/ui-server/inspector/inspectorTree.ts', import.meta.url), mod);
