/**
 * Namespaces keep deployments that share one engine apart. Every service or
 * container a backend creates carries `roundtable.namespace=<ns>` beside
 * `roundtable.session`, and a backend lists and re-pins only what carries its
 * own namespace, so one deployment's stale-handle sweep can never remove
 * another's runs. Names still derive from session ids alone (session ids are
 * random, so two namespaces do not collide on names).
 */
import { ContainerError } from './ContainerError.js';
import { SESSION_LABEL } from './wrapper.js';

/** Label every roundtable service and container carries, valued with its namespace. */
export const NAMESPACE_LABEL = 'roundtable.namespace';

/** The namespace of a backend built without one. */
export const DEFAULT_NAMESPACE = 'default';

/**
 * 1-32 of `a-z 0-9 -`, starting and ending with a letter or digit: a short
 * DNS label, so it reads well in `docker service ls` filters and can never
 * smuggle `=` or `,` into a label filter.
 */
export const NAMESPACE_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;

/**
 * Throws `invalid_argument` unless `namespace` matches {@link NAMESPACE_PATTERN}.
 *
 * @example
 * ```ts
 * validateNamespace('default') // => 'default'
 * validateNamespace('team-a-2') // => 'team-a-2'
 * validateNamespace('x'.repeat(32)) // => 'x'.repeat(32)
 * validateNamespace('x'.repeat(33)) // throws invalid_argument
 * validateNamespace('Prod') // throws invalid_argument
 * validateNamespace('-a') // throws invalid_argument
 * validateNamespace('a=b') // throws invalid_argument
 * validateNamespace('') // throws invalid_argument
 * ```
 */
export function validateNamespace(namespace: string): string {
  if (typeof namespace !== 'string' || !NAMESPACE_PATTERN.test(namespace)) {
    throw new ContainerError(
      'invalid_argument',
      `namespace must match ${NAMESPACE_PATTERN.source}, got ${JSON.stringify(namespace)}`,
    );
  }
  return namespace;
}

/**
 * The labels a backend puts on what it creates: the caller's, then ours, so
 * no caller label can move a run into another namespace or session.
 *
 * @example
 * ```ts
 * runLabels('ns1', 's1', { user: 'ann' }) // => { user: 'ann', 'roundtable.session': 's1', 'roundtable.namespace': 'ns1' }
 * runLabels('ns1', 's1', { 'roundtable.namespace': 'other' })['roundtable.namespace'] // => 'ns1'
 * ```
 */
export function runLabels(
  namespace: string,
  sessionId: string,
  labels: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return { ...labels, [SESSION_LABEL]: sessionId, [NAMESPACE_LABEL]: namespace };
}

/**
 * The engine's label filter for one namespace's runs (Docker ANDs the terms),
 * so other namespaces' runs never even come back from the query.
 *
 * @example
 * ```ts
 * namespaceFilter('ns1') // => ['roundtable.session', 'roundtable.namespace=ns1']
 * ```
 */
export function namespaceFilter(namespace: string): string[] {
  return [SESSION_LABEL, `${NAMESPACE_LABEL}=${namespace}`];
}
