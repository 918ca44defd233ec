/** The doc examples of the CLI's pure modules, run as tests. */
import * as backgroundLog from '../../src/cli/backgroundLog.js';
import * as banner from '../../src/cli/banner.js';
import * as boardTokens from '../../src/cli/boardTokens.js';
import * as capsInForce from '../../src/cli/capsInForce.js';
import * as cliLogger from '../../src/cli/cliLogger.js';
import * as enqueue from '../../src/cli/commands/enqueue.js';
import * as demoPlan from '../../src/cli/demoPlan.js';
import * as nodeApi from '../../src/cli/nodeApi.js';
import * as nodeFile from '../../src/cli/nodeFile.js';
import * as openBackend from '../../src/cli/openBackend.js';
import * as openStore from '../../src/cli/openStore.js';
import * as outputAttempt from '../../src/cli/outputAttempt.js';
import * as placeInLine from '../../src/cli/placeInLine.js';
import * as rowsTick from '../../src/cli/rowsTick.js';
import * as scaledCommands from '../../src/cli/scaledCommands.js';
import * as statusReport from '../../src/cli/statusReport.js';
import * as taskReport from '../../src/cli/taskReport.js';
import * as withProgress from '../../src/cli/withProgress.js';
import { PooledSessionError } from '../../src/db/index.js';
import { runDocExamples } from '../support/docExamples.js';

const src = (path: string) => new URL(`../../src/cli/${path}`, import.meta.url);

runDocExamples(src('backgroundLog.ts'), backgroundLog);
runDocExamples(src('banner.ts'), banner);
runDocExamples(src('boardTokens.ts'), boardTokens);
runDocExamples(src('capsInForce.ts'), capsInForce);
runDocExamples(src('cliLogger.ts'), cliLogger);
runDocExamples(src('commands/enqueue.ts'), enqueue);
runDocExamples(src('demoPlan.ts'), demoPlan);
runDocExamples(src('nodeApi.ts'), nodeApi);
runDocExamples(src('nodeFile.ts'), nodeFile);
runDocExamples(src('openBackend.ts'), openBackend);
// Its refusal's example builds the store's error it words.
runDocExamples(src('openStore.ts'), { ...openStore, PooledSessionError });
runDocExamples(src('outputAttempt.ts'), outputAttempt);
runDocExamples(src('rowsTick.ts'), rowsTick);
runDocExamples(src('placeInLine.ts'), placeInLine);
runDocExamples(src('scaledCommands.ts'), scaledCommands);
runDocExamples(src('statusReport.ts'), statusReport);
runDocExamples(src('taskReport.ts'), taskReport);
runDocExamples(src('withProgress.ts'), withProgress);
