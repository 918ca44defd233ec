import * as mod from '../../src/ui-server/linePlaces.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/linePlaces.ts', import.meta.url), mod);
