/**
 * Checks one inbound board frame: a valid client frame, or the code and
 * message of the `error` frame that answers it. Never throws, whatever the
 * bytes.
 */
import {
  CLIENT_FRAME_TYPES,
  type ClientFrame,
  clientFrameSchema,
  type ErrorCode,
  PROTOCOL_VERSION,
} from '../board/boardProtocol.js';
import { firstIssue } from '../common/firstIssue.js';

/**
 * @example
 * ```ts
 * parseClientFrame('{"type":"ping","id":"a"}', false) // => { type: 'ping', id: 'a' }
 * parseClientFrame('{"type":"nope"}', false).code // => 'unknown_type'
 * parseClientFrame('{', false).code // => 'bad_json'
 * parseClientFrame('{}', true).code // => 'bad_frame'
 * parseClientFrame('{"type":"subscribe","v":2,"window":{"new":1}}', false).code // => 'unsupported_version'
 * ```
 */
export function parseClientFrame(
  data: unknown,
  isBinary: boolean,
): ClientFrame | { code: ErrorCode; message: string } {
  if (isBinary) return { code: 'bad_frame', message: 'binary frames are not part of protocol v1' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(data));
  } catch (err) {
    return { code: 'bad_json', message: `not JSON: ${(err as Error).message}` };
  }
  const type = (parsed as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !CLIENT_FRAME_TYPES.includes(type)) {
    return { code: 'unknown_type', message: `unknown frame type ${JSON.stringify(type) ?? ''}` };
  }
  // The version first: a later version's subscribe may carry fields this
  // one does not know, and its client must hear that the version is the
  // problem, not that a field is.
  const v = (parsed as { v?: unknown }).v;
  if (type === 'subscribe' && Number.isInteger(v) && v !== PROTOCOL_VERSION) {
    return { code: 'unsupported_version', message: `this server speaks v${PROTOCOL_VERSION}` };
  }
  const frame = clientFrameSchema.safeParse(parsed);
  if (frame.success) return frame.data;
  const { field, message } = firstIssue(frame.error, type);
  return { code: 'bad_frame', message: `${field}: ${message}` };
}
