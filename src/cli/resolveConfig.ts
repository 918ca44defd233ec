/**
 * Builds the configuration from its four layers, later ones winning:
 * defaults, the JSON file (`--config`), the environment, the flags. Every
 * value remembers where it came from, so an error says "ROUNDTABLE_PORT:
 * port must be ..." rather than only what is wrong. Pure: the caller reads
 * the file and passes the environment.
 */
import { didYouMean } from '../common/didYouMean.js';
import { firstIssue } from '../common/firstIssue.js';
import { type CliConfig, cliConfigSchema, cliDefaults } from './cliConfig.js';
import { SETTINGS, type Setting } from './cliSettings.js';
import { ConfigError } from './exitCodes.js';

/** Every leaf path of the configuration, for unknown-key checks on the file. */
const LEAVES = [...SETTINGS.map((s) => s.key), 'tokens.users'];

/** What the configuration is built from. */
export interface ConfigSources {
  flags?: Record<string, string | true | string[]>;
  env?: Record<string, string | undefined>;
  file?: { path: string; value: unknown };
  /** A command's own defaults (demo keeps its data apart), applied over the global ones. */
  commandDefaults?: Partial<Record<string, unknown>>;
}

export interface ResolvedConfig {
  config: CliConfig;
  /** Where each set leaf came from: `default`, `--port`, `ROUNDTABLE_PORT`, `file x.json`. */
  origins: Record<string, string>;
  /** Environment variables that look like ours but are not (a typo, most likely). */
  warnings: string[];
}

/**
 * Resolves and validates. Throws {@link ConfigError} naming the first bad key and its source.
 *
 * @example
 * ```ts
 * resolveConfig({ flags: { '--port': '8080' } }).config.port // => 8080
 * resolveConfig({ env: { ROUNDTABLE_PORT: '9000' }, flags: { '--port': '8080' } }).config.port // => 8080
 * resolveConfig({ env: { ROUNDTABLE_PORT: '9000' } }).origins.port // => 'ROUNDTABLE_PORT'
 * resolveConfig({ file: { path: 'c.json', value: { caps: { maxRunning: 9 } } } }).config.caps // => { maxRunning: 9, defaultUserCap: 2 }
 * resolveConfig({ flags: { '--docker': true } }).config.backend // => 'swarm'
 * resolveConfig({ env: { ROUNDTABLE_USERS: 'ann, bo' } }).config.users // => ['ann', 'bo']
 * resolveConfig({ env: { ROUNDTABLE_PROT: '1' } }).warnings // => ['unknown ROUNDTABLE_PROT; did you mean ROUNDTABLE_PORT?']
 * resolveConfig({ env: { DATABASE_URL: '' } }).warnings // => ['DATABASE_URL is set but empty: ignored, so this node uses its own embedded store (a missing secret?); unset it to mean that']
 * resolveConfig({ env: { DATABASE_URL: '' }, flags: { '--database-url': 'postgres://db/q' } }).warnings // => []
 * resolveConfig({ flags: { '--port': 'eighty' } }) // throws ConfigError
 * resolveConfig({ file: { path: 'c.json', value: { cpas: {} } } }) // throws ConfigError
 * resolveConfig({ file: { path: 'c.json', value: [] } }) // throws ConfigError
 * ```
 */
export function resolveConfig(sources: ConfigSources): ResolvedConfig {
  const draft = cliDefaults() as unknown as Record<string, unknown>;
  const origins: Record<string, string> = {};
  for (const [key, value] of Object.entries(sources.commandDefaults ?? {})) {
    setPath(draft, key, value);
    origins[key] = 'command default';
  }
  if (sources.file) applyFile(draft, origins, sources.file);
  const env = sources.env ?? {};
  for (const s of SETTINGS) {
    if (s.env === undefined) continue;
    const raw = env[s.env];
    if (raw === undefined || raw === '') continue;
    setPath(draft, s.key, parseValue(s, raw, s.env));
    origins[s.key] = s.env;
  }
  const flags = sources.flags ?? {};
  for (const s of SETTINGS) {
    if (s.flag === undefined) continue;
    const raw = flags[s.flag];
    if (typeof raw !== 'string') continue;
    setPath(draft, s.key, parseValue(s, raw, s.flag));
    origins[s.key] = s.flag;
  }
  if (flags['--docker'] === true) {
    draft.backend = 'swarm';
    origins.backend = '--docker';
  }
  const parsed = cliConfigSchema.safeParse(draft);
  if (!parsed.success) {
    const { field: key, message } = firstIssue(parsed.error, '');
    const leaf = LEAVES.filter((l) => key === l || key.startsWith(`${l}.`)).sort(
      (a, b) => b.length - a.length,
    )[0];
    throw new ConfigError(key || 'config', origins[leaf ?? key] ?? 'default', message);
  }
  const storeUrlEmpty = origins.databaseUrl === undefined ? emptyStoreUrl(env) : [];
  return { config: parsed.data, origins, warnings: [...storeUrlEmpty, ...unknownEnv(env)] };
}

function applyFile(
  draft: Record<string, unknown>,
  origins: Record<string, string>,
  file: { path: string; value: unknown },
): void {
  const source = `config file ${file.path}`;
  const walk = (value: unknown, prefix: string) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ConfigError(prefix || '(top level)', source, 'must be a JSON object');
    }
    const known = [
      ...new Set(
        LEAVES.filter((l) => prefix === '' || l.startsWith(`${prefix}.`)).map(
          // split always gives at least one part.
          (l) => l.slice(prefix === '' ? 0 : prefix.length + 1).split('.')[0]!,
        ),
      ),
    ];
    for (const [name, v] of Object.entries(value)) {
      const path = prefix === '' ? name : `${prefix}.${name}`;
      if (!known.includes(name)) {
        const guess = didYouMean(name, known);
        throw new ConfigError(
          path,
          source,
          `is unknown${guess ? `; did you mean "${guess}"?` : ''}`,
        );
      }
      if (LEAVES.includes(path)) {
        setPath(draft, path, v);
        origins[path] = source;
      } else {
        walk(v, path);
      }
    }
  };
  walk(file.value, '');
}

function parseValue(s: Setting, raw: string, source: string): unknown {
  switch (s.kind) {
    case 'int':
      if (!/^-?\d+$/.test(raw.trim())) {
        throw new ConfigError(s.key, source, `must be an integer, got "${raw}"`);
      }
      return Number(raw.trim());
    case 'number': {
      const n = Number(raw.trim());
      if (raw.trim() === '' || !Number.isFinite(n)) {
        throw new ConfigError(s.key, source, `must be a number, got "${raw}"`);
      }
      return n;
    }
    case 'list':
      return raw
        .split(',')
        .map((w) => w.trim())
        .filter((w) => w !== '');
    default:
      return raw;
  }
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parents = path.split('.');
  const leaf = parents.pop() ?? path;
  let node = target;
  for (const part of parents) {
    const next = node[part];
    if (typeof next !== 'object' || next === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[leaf] = value;
}

// The test suites' variables share the prefix, and ROUNDTABLE_CONFIG names the file: not settings.
const FOREIGN = /^ROUNDTABLE_((TEST|BENCH|CI)_|CONFIG$)/;

/**
 * An empty DATABASE_URL reads as unset, as every empty variable does; but a
 * replica whose database secret is missing would then run its own private
 * queue beside the cluster's, taking submissions no other node sees. Said
 * at start, where the operator looks.
 */
function emptyStoreUrl(env: Record<string, string | undefined>): string[] {
  return env.DATABASE_URL === ''
    ? [
        'DATABASE_URL is set but empty: ignored, so this node uses its own embedded store (a missing secret?); unset it to mean that',
      ]
    : [];
}

function unknownEnv(env: Record<string, string | undefined>): string[] {
  const known = SETTINGS.flatMap((s) => (s.env ? [s.env] : []));
  return Object.keys(env)
    .filter((k) => k.startsWith('ROUNDTABLE_') && !known.includes(k) && !FOREIGN.test(k))
    .sort()
    .map((k) => {
      const guess = didYouMean(k, known);
      return `unknown ${k}${guess ? `; did you mean ${guess}?` : ''}`;
    });
}

/** Reads a leaf by dotted path, for messages and `--help`. */
export function configValue(config: CliConfig, path: string): unknown {
  let node: unknown = config;
  for (const part of path.split('.')) node = (node as Record<string, unknown> | undefined)?.[part];
  return node;
}
