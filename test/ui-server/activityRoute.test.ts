import * as route from '../../src/ui-server/activityRoute.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/activityRoute.ts', import.meta.url), route);
