/**
 * Where `enqueue`, `status`, `show`, `logs`, `cancel` and `retry` send their request: to the
 * node that holds this data directory when one runs (over its HTTP API,
 * with the tokens it keeps there: PGlite has one backend, and the node owns
 * the runs it holds, so only it can stop their containers), otherwise
 * straight to the rows, with what the rows alone decide.
 */
import { type BoardTokens, readBoardTokens } from './boardTokens.js';
import type { CliConfig } from './cliConfig.js';
import { CliError } from './exitCodes.js';
import { readLiveNode } from './nodeFile.js';

export type CommandRoute =
  | { kind: 'node'; url: string; pid: number; tokens: BoardTokens }
  | { kind: 'rows' };

/** The route for `config`; throws `CLI_IN_USE` while a node holding the PGlite directory is still starting. */
export function commandRoute(config: CliConfig): CommandRoute {
  const live = readLiveNode(config.dataDir);
  if (live?.url) {
    return {
      kind: 'node',
      url: live.url,
      pid: live.pid,
      tokens: readBoardTokens(config.dataDir, config.tokens),
    };
  }
  if (live !== null && config.databaseUrl === undefined) {
    throw new CliError(
      'CLI_IN_USE',
      `${config.dataDir} is held by process ${live.pid}, which is still starting`,
    );
  }
  return { kind: 'rows' };
}
