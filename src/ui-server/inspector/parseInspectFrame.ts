/**
 * Checks one inbound inspector frame: a viewer's `select`, or the code and
 * message of the `error` frame that answers it. Never throws, whatever the
 * bytes (the board's twin is src/ui-server/parseClientFrame.ts).
 */
import { z } from 'zod';
import { firstIssue } from '../../common/firstIssue.js';
import type { InspectClientFrame, InspectErrorCode } from './inspectorProtocol.js';

const clientFrame = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('select'), sessionId: z.string().max(200).nullable() }),
]);

/**
 * @example
 * ```ts
 * parseInspectFrame('{"type":"select","sessionId":"x:1"}', false) // => { type: 'select', sessionId: 'x:1' }
 * parseInspectFrame('{"type":"select","sessionId":null}', false) // => { type: 'select', sessionId: null }
 * parseInspectFrame('{', false).code // => 'bad_json'
 * parseInspectFrame('{}', true) // => { code: 'bad_json', message: 'binary frames are not accepted' }
 * parseInspectFrame('{"type":"select"}', false).code // => 'bad_frame'
 * parseInspectFrame('{"type":"select","sessionId":null,"more":1}', false).code // => 'bad_frame'
 * ```
 */
export function parseInspectFrame(
  text: string,
  isBinary: boolean,
): InspectClientFrame | { code: Exclude<InspectErrorCode, 'observer_failed'>; message: string } {
  let value: unknown;
  try {
    if (isBinary) throw new Error('binary frames are not accepted');
    value = JSON.parse(text);
  } catch (err) {
    return { code: 'bad_json', message: (err as Error).message };
  }
  const parsed = clientFrame.safeParse(value);
  if (parsed.success) return parsed.data;
  const { field, message } = firstIssue(parsed.error, 'frame');
  return { code: 'bad_frame', message: `${field}: ${message}` };
}
