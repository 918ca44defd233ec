/**
 * The `code` of an error that has no class of its own to test with
 * `instanceof`. Errors of this project are classes: test those with
 * `instanceof`, never with this. Two kinds of error cannot be told apart any
 * other way: Node's system errors (`ENOENT`, `EPERM`; Node exports no class
 * for them) and a Postgres driver's errors, whose one class says only that
 * the server refused while the SQLSTATE (`42P01`, `55P03`) says why.
 *
 * @example
 * ```ts
 * errorCode(Object.assign(new Error('no such file'), { code: 'ENOENT' })) // => 'ENOENT'
 * errorCode(Object.assign(new Error('relation does not exist'), { code: '42P01' })) // => '42P01'
 * errorCode(new Error('plain')) // => undefined
 * errorCode('a thrown string') // => undefined
 * ```
 */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}
