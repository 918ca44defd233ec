import * as mod from '../../src/ui-server/windowGroup.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/windowGroup.ts', import.meta.url), mod);
