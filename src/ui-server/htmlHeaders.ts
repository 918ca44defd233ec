/**
 * The headers every HTML answer of the board and the inspector carries. Their
 * pages have buttons that act (cancel, retry, set a cap), so no other site
 * may frame them: a framed page under a decoy is a click the user never meant
 * (clickjacking). `frame-ancestors 'none'` says so to browsers that read CSP
 * level 2; `X-Frame-Options: DENY` to the older ones that do not.
 */

/** The CSP directive that forbids every frame, this origin's own included. */
export const FRAME_ANCESTORS = "frame-ancestors 'none'";

/**
 * The headers of an HTML page whose Content-Security-Policy is `csp`
 * (without a `frame-ancestors` of its own: this adds it).
 *
 * @example
 * ```ts
 * htmlHeaders("default-src 'self'") // => { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'self'; frame-ancestors 'none'", 'x-frame-options': 'DENY' }
 * ```
 */
export function htmlHeaders(csp: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `${csp}; ${FRAME_ANCESTORS}`,
    'x-frame-options': 'DENY',
  };
}
