/**
 * A simulated run's output file as `follow` reads it: through the cluster's
 * API, like the Docker backends through the engine's, so API faults and
 * reschedules bite a follow as they would there. The first container seen
 * under the handle is the run's; another one later (a reschedule, an image
 * roll) has an empty `/tmp` and means the file is gone for good.
 */
import { isContainerError } from '../ContainerError.js';
import { type OutputSlice, type OutputSource, sliceOf } from '../polledFollower.js';
import type { SimulatedCluster } from './SimulatedCluster.js';

/** One API call with the backend's deadline. */
export type SimCall = <T>(work: Promise<T>, what: string) => Promise<T>;

const notFound = (error: unknown) => isContainerError(error) && error.code === 'not_found';

export function simulatedOutputSource(
  cluster: SimulatedCluster,
  call: SimCall,
  handle: string,
  path: string,
): OutputSource {
  let containerId: string | null = null;
  const replaced: OutputSlice = { kind: 'replaced' };
  return {
    async read(from, limit) {
      let text: string | null;
      try {
        const service = await call(cluster.api.inspectService(handle), `follow ${handle}`);
        const id = service.container?.id ?? null;
        // No container now: one was lost (the run's, if it was seen) and the next is not up yet.
        if (id === null) return containerId === null ? { kind: 'missing' } : replaced;
        if (containerId !== null && id !== containerId) return replaced;
        containerId = id;
        text = await call(cluster.api.readFile(handle, path), `follow ${handle}`);
      } catch (error) {
        // The service was removed, or its container died between the two calls.
        if (notFound(error)) return replaced;
        throw error;
      }
      if (text === null) return { kind: 'missing' };
      return sliceOf(Buffer.from(text), from, limit);
    },
  };
}
