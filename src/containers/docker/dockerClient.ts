/**
 * Small Docker helpers the backends share that need no backend state: a
 * client from an address, and comparing image pins.
 */
import Docker from 'dockerode';

/** Builds a dockerode client from an address, so callers never import dockerode. */
export function dockerClient(host?: string): Docker {
  if (!host) return new Docker();
  const url = new URL(host);
  if (url.protocol === 'unix:') return new Docker({ socketPath: url.pathname });
  return new Docker({
    host: url.hostname,
    port: url.port || 2375,
    protocol: url.protocol === 'https:' ? 'https' : 'http',
  });
}

/**
 * Swarm may append the digest it resolved (`image@sha256:...`) to a pin.
 *
 * @example
 * ```ts
 * samePin('runner:2', 'runner:2') // => true
 * samePin('runner:2@sha256:abc', 'runner:2') // => true
 * samePin('runner:1', 'runner:2') // => false
 * ```
 */
export function samePin(pinned: string, image: string): boolean {
  return pinned === image || pinned.startsWith(`${image}@`);
}
