/**
 * What `start` prints once the node is up: where the board and inspector
 * are, with the token in the URL fragment (browsers never send a fragment to
 * the server, so it stays out of access logs), and how to stop.
 */

export interface BannerInfo {
  /** `http://host:port` as the server reports it. */
  url: string;
  adminToken: string;
  /** User id to token. */
  users: Record<string, string>;
  /** Whether the inspector answers at `/inspect`. */
  inspector: boolean;
  nodeId: string;
  backend: string;
  store: string;
  /** What chose the backend (`auto: ...`, `local, as --backend says`). */
  backendReason?: string;
  /** The OS user tasks run as, when they run on this machine (the local backend). */
  runsAs?: string;
}

/**
 * Whether a listen address is this machine only.
 *
 * @example
 * ```ts
 * isLoopback('127.0.0.1') // => true
 * isLoopback('localhost') // => true
 * isLoopback('::1') // => true
 * isLoopback('0.0.0.0') // => false
 * isLoopback('192.168.1.5') // => false
 * ```
 */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The lines that say where tasks run and who can start them.
 *
 * @example
 * ```ts
 * runsAsLines({ runsAs: 'ann', url: 'http://127.0.0.1:4100' }) // => ['  tasks run      as OS user ann on this machine; the board listens on this machine only']
 * runsAsLines({ runsAs: 'ann', url: 'http://0.0.0.0:4100' })[1] // => '  WARNING        the board listens on 0.0.0.0: anyone with a token can run commands as ann here'
 * runsAsLines({ url: 'http://0.0.0.0:4100' }) // => []
 * ```
 */
export function runsAsLines(info: Pick<BannerInfo, 'runsAs' | 'url'>): string[] {
  if (info.runsAs === undefined) return [];
  const host = new URL(info.url).hostname.replace(/^\[|\]$/g, '');
  const row = (label: string, value: string) => `  ${label.padEnd(14)} ${value}`;
  return isLoopback(host)
    ? [
        row(
          'tasks run',
          `as OS user ${info.runsAs} on this machine; the board listens on this machine only`,
        ),
      ]
    : [
        row('tasks run', `as OS user ${info.runsAs} on this machine`),
        row(
          'WARNING',
          `the board listens on ${host}: anyone with a token can run commands as ${info.runsAs} here`,
        ),
      ];
}

/**
 * The address a person can open: a wildcard listen address becomes localhost.
 *
 * @example
 * ```ts
 * browsableUrl('http://0.0.0.0:4100') // => 'http://localhost:4100'
 * browsableUrl('http://[::]:4100') // => 'http://localhost:4100'
 * browsableUrl('http://127.0.0.1:4100') // => 'http://127.0.0.1:4100'
 * ```
 */
export function browsableUrl(url: string): string {
  return url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, 'http://localhost');
}

/** The URLs to open, as data (the JSON log record carries the same). */
export function boardUrls(info: Pick<BannerInfo, 'url' | 'adminToken' | 'users' | 'inspector'>): {
  board: string;
  inspector: string | null;
  users: Record<string, string>;
} {
  const base = browsableUrl(info.url);
  return {
    board: `${base}/#token=${info.adminToken}`,
    inspector: info.inspector ? `${base}/inspect#token=${info.adminToken}` : null,
    users: Object.fromEntries(
      Object.entries(info.users).map(([user, token]) => [user, `${base}/#token=${token}`]),
    ),
  };
}

/**
 * The banner's lines.
 *
 * @example
 * ```ts
 * const info = { url: 'http://127.0.0.1:4100', adminToken: 'A'.repeat(16), users: { demo: 'D'.repeat(16) }, inspector: true, nodeId: 'box', backend: 'simulated cluster (2 machines)', store: 'PGlite at .roundtable/pgdata' }
 * bannerLines(info)[0] // => 'roundtable is running on box: simulated cluster (2 machines), PGlite at .roundtable/pgdata'
 * bannerLines(info)[2] // => '  board (admin)  http://127.0.0.1:4100/#token=AAAAAAAAAAAAAAAA'
 * bannerLines(info)[3] // => '  inspector      http://127.0.0.1:4100/inspect#token=AAAAAAAAAAAAAAAA'
 * bannerLines(info)[4] // => '  as demo        http://127.0.0.1:4100/#token=DDDDDDDDDDDDDDDD'
 * ```
 */
export function bannerLines(info: BannerInfo): string[] {
  const urls = boardUrls(info);
  const row = (label: string, value: string) => `  ${label.padEnd(14)} ${value}`;
  return [
    `roundtable is running on ${info.nodeId}: ${info.backend}, ${info.store}`,
    '',
    row('board (admin)', urls.board),
    ...(urls.inspector ? [row('inspector', urls.inspector)] : []),
    ...Object.entries(urls.users).map(([user, url]) => row(`as ${user}`, url)),
    ...(info.backendReason ? [row('backend', info.backendReason)] : []),
    ...runsAsLines(info),
    '',
    'Ctrl-C stops it; queued and running work stays in the rows and resumes on the next start.',
  ];
}
