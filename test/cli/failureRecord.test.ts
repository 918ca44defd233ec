import { CliError } from '../../src/cli/exitCodes.js';
import * as mod from '../../src/cli/failureRecord.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/cli/failureRecord.ts', import.meta.url), { ...mod, CliError });
