/**
 * Places per remote address: how many of something (TCP connections to the
 * listener, user WebSockets) one address holds, against a cap. A cap on the
 * total alone lets one client take every place and lock everyone else out;
 * a cap per address well below it leaves places for the others.
 *
 * No I/O: the caller asks when a connection arrives and gives the place back
 * when it is gone.
 */

/** A place taken: give it back once, when the connection is gone. Idempotent. */
export type Release = () => void;

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
 * `fn` as a {@link Release}: it runs on the first call only, so a place is
 * given back once however many ways its connection ends.
 *
 * @example
 * ```ts
 * let n = 0
 * const release = releaseOnce(() => { n += 1 })
 * release(); release()
 * n // => 1
 * ```
 */
export function releaseOnce(fn: () => void): Release {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/**
 * Counts places per address under one cap. Addresses whose count falls to
 * zero are forgotten, so the map holds only addresses with places taken.
 *
 * @example
 * ```ts
 * const slots = new AddressSlots(2)
 * const first = slots.take('::ffff:10.0.0.1')
 * typeof slots.take('10.0.0.1') // => 'function'
 * slots.full('10.0.0.1') // => true
 * slots.take('10.0.0.1') // => null
 * typeof slots.take('10.0.0.2') // => 'function'
 * first(); first()
 * [slots.held('10.0.0.1'), slots.addresses()] // => [1, 2]
 * ```
 */
export class AddressSlots {
  private readonly open = new Map<string, number>();

  constructor(readonly perAddress: number) {}

  /** Whether the address holds all its places. */
  full(remoteAddress: string | undefined): boolean {
    return this.held(remoteAddress) >= this.perAddress;
  }

  /** Places the address holds. */
  held(remoteAddress: string | undefined): number {
    return this.open.get(addressKey(remoteAddress)) ?? 0;
  }

  /** Addresses holding at least one place. */
  addresses(): number {
    return this.open.size;
  }

  /** Takes a place for the address, or null when it holds all of its own (nothing is counted then). */
  take(remoteAddress: string | undefined): Release | null {
    if (this.full(remoteAddress)) return null;
    const key = addressKey(remoteAddress);
    this.open.set(key, (this.open.get(key) ?? 0) + 1);
    return releaseOnce(() => {
      const left = (this.open.get(key) ?? 0) - 1;
      if (left <= 0) this.open.delete(key);
      else this.open.set(key, left);
    });
  }
}
