/**
 * Turns whatever an actor holds (context, events, outputs) into a value that
 * JSON can carry, with explicit cuts. Contexts hold actor refs, Errors,
 * Dates, Maps and sometimes cycles; `JSON.stringify` throws on some and
 * silently drops others, and an inspector must show them all, bounded.
 */

/** How far to go before cutting; every cut is marked in the output. */
export interface SafeJsonLimits {
  maxDepth: number;
  maxArray: number;
  maxKeys: number;
  maxString: number;
}

export const SAFE_JSON_DEFAULTS: SafeJsonLimits = {
  maxDepth: 8,
  maxArray: 50,
  maxKeys: 100,
  maxString: 2000,
};

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isActorRef(v: object): v is { sessionId: string; id: string; send: unknown } {
  const r = v as Record<string, unknown>;
  return typeof r.sessionId === 'string' && typeof r.send === 'function';
}

/**
 * @example
 * ```ts
 * toSafeJson({ a: 1, b: undefined, c: [1, 'x'] }) // => { a: 1, c: [1, 'x'] }
 * toSafeJson(new Error('boom')) // => { '@error': 'Error', message: 'boom' }
 * toSafeJson({ sessionId: 'x:3', id: 'pool', send() {} }) // => { '@actor': 'x:3', id: 'pool' }
 * toSafeJson(new Date(0)) // => '1970-01-01T00:00:00.000Z'
 * toSafeJson(10n) // => '10n'
 * toSafeJson('abcdef', { maxString: 3 }) // => 'abc…[cut 3 chars]'
 * toSafeJson([1, 2, 3], { maxArray: 2 }) // => [1, 2, '…[cut 1 items]']
 * toSafeJson({ a: { b: { c: 1 } } }, { maxDepth: 2 }) // => { a: { b: '…[depth]' } }
 * const loop = { name: 'loop' }; loop.self = loop
 * toSafeJson(loop) // => { name: 'loop', self: '[circular]' }
 * toSafeJson(new Map([['k', 1]])) // => { '@map': [['k', 1]] }
 * toSafeJson(function named() {}) // => '[function named]'
 * toSafeJson(Number.NaN) // => 'NaN'
 * ```
 */
export function toSafeJson(value: unknown, limits: Partial<SafeJsonLimits> = {}): Json {
  const l = { ...SAFE_JSON_DEFAULTS, ...limits };
  const path = new Set<object>();

  const walk = (v: unknown, depth: number): Json | undefined => {
    switch (typeof v) {
      case 'undefined':
      case 'symbol':
        return undefined;
      case 'boolean':
        return v;
      case 'number':
        return Number.isFinite(v) ? v : String(v);
      case 'bigint':
        return `${v}n`;
      case 'string':
        return v.length > l.maxString
          ? `${v.slice(0, l.maxString)}…[cut ${v.length - l.maxString} chars]`
          : v;
      case 'function':
        return `[function ${v.name || 'anonymous'}]`;
    }
    if (v === null) return null;
    const o = v as object;
    if (o instanceof Date) return Number.isNaN(o.getTime()) ? 'Invalid Date' : o.toISOString();
    if (isActorRef(o)) return { '@actor': o.sessionId, id: String(o.id) };
    if (depth >= l.maxDepth) return '…[depth]';
    if (path.has(o)) return '[circular]';
    path.add(o);
    try {
      if (o instanceof Error) {
        const e: { [key: string]: Json } = {
          '@error': o.name,
          message: walk(o.message, depth) ?? '',
        };
        const code = (o as { code?: unknown }).code;
        if (code !== undefined) e.code = walk(code, depth + 1) ?? null;
        if (o.cause !== undefined) e.cause = walk(o.cause, depth + 1) ?? null;
        return e;
      }
      if (o instanceof Map) return { '@map': walk([...o.entries()], depth + 1) ?? [] };
      if (o instanceof Set) return { '@set': walk([...o.values()], depth + 1) ?? [] };
      if (Array.isArray(o)) {
        const out: Json[] = [];
        const n = Math.min(o.length, l.maxArray);
        for (let i = 0; i < n; i += 1) out.push(walk(o[i], depth + 1) ?? null);
        if (o.length > n) out.push(`…[cut ${o.length - n} items]`);
        return out;
      }
      const out: { [key: string]: Json } = {};
      let kept = 0;
      let total = 0;
      for (const key of Object.keys(o)) {
        total += 1;
        if (kept >= l.maxKeys) continue;
        const w = walk((o as Record<string, unknown>)[key], depth + 1);
        if (w === undefined) continue;
        out[key] = w;
        kept += 1;
      }
      if (total > kept && kept >= l.maxKeys) out['…'] = `[cut ${total - kept} keys]`;
      return out;
    } finally {
      path.delete(o);
    }
  };
  return walk(value, 0) ?? null;
}
