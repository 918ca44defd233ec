/**
 * Who may open one more board socket. A single global cap lets one user (one
 * token opening thousands of sockets) lock every other user and the admin
 * out, so sockets are counted per user and per remote address as well, and
 * the admin's sockets are counted apart: they never take a place under the
 * global, user or address caps, and have their own small allowance, so
 * whatever users do, the admin can still connect to see and act on it.
 *
 * No I/O: the server asks before the upgrade and releases when the socket
 * closes.
 */
import type { Principal } from './authenticate.js';
import { UiRequestError } from './listenerGuard.js';

/** The caps, all from `UI_SERVER_DEFAULTS`. */
export interface ConnectionCaps {
  /** User sockets in all (admin sockets are not counted). */
  maxConnections: number;
  maxConnectionsPerUser: number;
  /** Per remote address, as the socket reports it (a proxy's address counts once). */
  maxConnectionsPerAddress: number;
  maxAdminConnections: number;
}

/** Stable codes of the refusals, with their statuses. */
export const CONNECTION_REFUSALS = {
  /** This user has `maxConnectionsPerUser` sockets open. */
  too_many_user_connections: 429,
  /** This address has `maxConnectionsPerAddress` user sockets open. */
  too_many_address_connections: 429,
  /** The admin has `maxAdminConnections` sockets open. */
  too_many_admin_connections: 429,
  /** `maxConnections` user sockets are open on this server. */
  unavailable: 503,
} as const;

/** A place taken: give it back once, when the socket is gone. Idempotent. */
export type Release = () => void;

const refuse = (code: keyof typeof CONNECTION_REFUSALS, message: string) =>
  new UiRequestError(CONNECTION_REFUSALS[code], code, message);

/**
 * The address a client is counted under: IPv4-mapped IPv6 (`::ffff:10.0.0.1`)
 * is the IPv4 address, so one client is one key whichever way it arrived.
 *
 * @example
 * ```ts
 * addressKey('::ffff:10.0.0.1') // => '10.0.0.1'
 * addressKey('::1') // => '::1'
 * addressKey(undefined) // => 'unknown'
 * ```
 */
export function addressKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || remoteAddress === '') return 'unknown';
  return remoteAddress.startsWith('::ffff:') && remoteAddress.includes('.')
    ? remoteAddress.slice('::ffff:'.length)
    : remoteAddress;
}

/**
 * Counts open sockets.
 *
 * @example
 * ```ts
 * const caps = { maxConnections: 10, maxConnectionsPerUser: 1, maxConnectionsPerAddress: 5, maxAdminConnections: 1 }
 * const limiter = new ConnectionLimiter(caps)
 * const release = limiter.admit({ kind: 'user', userId: 'ann' }, '10.0.0.1')
 * typeof release // => 'function'
 * limiter.admit({ kind: 'user', userId: 'ann' }, '10.0.0.2').code // => 'too_many_user_connections'
 * typeof limiter.admit({ kind: 'admin' }, '10.0.0.1') // => 'function'
 * ```
 */
export class ConnectionLimiter {
  private readonly perUser = new Map<string, number>();
  private readonly perAddress = new Map<string, number>();
  private users = 0;
  private admins = 0;

  constructor(private readonly caps: ConnectionCaps) {}

  /** Takes a place for one socket, or says why not (nothing is counted then). */
  admit(principal: Principal, remoteAddress: string | undefined): Release | UiRequestError {
    const { caps } = this;
    if (principal.kind === 'admin') {
      if (this.admins >= caps.maxAdminConnections) {
        return refuse(
          'too_many_admin_connections',
          `the admin has ${caps.maxAdminConnections} sockets open`,
        );
      }
      this.admins += 1;
      return once(() => {
        this.admins -= 1;
      });
    }
    const address = addressKey(remoteAddress);
    if ((this.perUser.get(principal.userId) ?? 0) >= caps.maxConnectionsPerUser) {
      return refuse(
        'too_many_user_connections',
        `this user has ${caps.maxConnectionsPerUser} sockets open`,
      );
    }
    if ((this.perAddress.get(address) ?? 0) >= caps.maxConnectionsPerAddress) {
      return refuse(
        'too_many_address_connections',
        `this address has ${caps.maxConnectionsPerAddress} sockets open`,
      );
    }
    if (this.users >= caps.maxConnections) return refuse('unavailable', 'too many connections');
    bump(this.perUser, principal.userId, 1);
    bump(this.perAddress, address, 1);
    this.users += 1;
    return once(() => {
      bump(this.perUser, principal.userId, -1);
      bump(this.perAddress, address, -1);
      this.users -= 1;
    });
  }

  /** Open sockets counted: users in all, admin apart. */
  counts(): { users: number; admins: number } {
    return { users: this.users, admins: this.admins };
  }
}

// Keys at zero are deleted, so the maps hold only users and addresses with sockets.
function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}

function once(fn: () => void): Release {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
