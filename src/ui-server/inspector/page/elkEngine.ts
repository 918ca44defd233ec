/**
 * ELK itself (elkjs's worker-free build), bundled on its own as
 * `/inspect-elk.js`: 1.4 MB the page loads only after its first paint, when a
 * chart is to be drawn. Node tests import it directly.
 */
import elkBundled from 'elkjs/lib/elk.bundled.js';

/** A new layout engine. (A CommonJS module: its default import is the constructor, `.default` too.) */
export function newElk(): InstanceType<typeof elkBundled.default> {
  return new elkBundled.default();
}
