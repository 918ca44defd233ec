import * as eligibleHeap from '../../src/machines/eligibleHeap.js';
import * as poolCaps from '../../src/machines/poolCaps.js';
import * as poolIndex from '../../src/machines/poolIndex.js';
import * as poolSnapshot from '../../src/machines/poolSnapshot.js';
import * as turnOrder from '../../src/machines/turnOrder.js';
import { runDocExamples } from '../support/docExamples.js';

const all = { ...eligibleHeap, ...poolCaps, ...poolIndex, ...poolSnapshot, ...turnOrder };
runDocExamples(new URL('../../src/machines/poolIndex.ts', import.meta.url), all);
runDocExamples(new URL('../../src/machines/poolCaps.ts', import.meta.url), all);
runDocExamples(new URL('../../src/machines/poolSnapshot.ts', import.meta.url), all);
runDocExamples(new URL('../../src/machines/turnOrder.ts', import.meta.url), all);
runDocExamples(new URL('../../src/machines/eligibleHeap.ts', import.meta.url), all);
