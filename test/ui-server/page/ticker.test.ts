/** The page's spans of time ("3m 5s"), as the nodes list and the cards show them. */
import * as ticker from '../../../src/ui-server/page/ticker.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(new URL('../../../src/ui-server/page/ticker.tsx', import.meta.url), ticker);
