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
import { AddressSlots, type Release, releaseOnce } from './addressSlots.js';
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

const refuse = (code: keyof typeof CONNECTION_REFUSALS, message: string) =>
  new UiRequestError(CONNECTION_REFUSALS[code], code, message);

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
  private readonly perAddress: AddressSlots;
  private users = 0;
  private admins = 0;

  constructor(private readonly caps: ConnectionCaps) {
    this.perAddress = new AddressSlots(caps.maxConnectionsPerAddress);
  }

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
      return releaseOnce(() => {
        this.admins -= 1;
      });
    }
    if ((this.perUser.get(principal.userId) ?? 0) >= caps.maxConnectionsPerUser) {
      return refuse(
        'too_many_user_connections',
        `this user has ${caps.maxConnectionsPerUser} sockets open`,
      );
    }
    if (this.perAddress.full(remoteAddress)) {
      return refuse(
        'too_many_address_connections',
        `this address has ${caps.maxConnectionsPerAddress} sockets open`,
      );
    }
    if (this.users >= caps.maxConnections) return refuse('unavailable', 'too many connections');
    // Not full, checked above: the take cannot fail.
    const releaseAddress = this.perAddress.take(remoteAddress);
    bump(this.perUser, principal.userId, 1);
    this.users += 1;
    return releaseOnce(() => {
      releaseAddress?.();
      bump(this.perUser, principal.userId, -1);
      this.users -= 1;
    });
  }

  /** Open sockets counted: users in all, admin apart. */
  counts(): { users: number; admins: number } {
    return { users: this.users, admins: this.admins };
  }
}

// Keys at zero are deleted, so the map holds only users with sockets.
function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
