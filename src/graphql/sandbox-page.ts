import type { RequestHandler } from 'express';

/**
 * The only origins Apollo Sandbox's embedded landing page needs (@apollo/server's getEmbeddedSandboxHTML): its
 * script from the Sandbox CDN, and the Sandbox itself in a frame from Apollo's embed host. The page's GraphQL calls
 * are made by that script in this page, to this origin ('self').
 */
export const SANDBOX_SCRIPT_ORIGIN = 'https://embeddable-sandbox.cdn.apollographql.com';
export const SANDBOX_FRAME_ORIGIN = 'https://sandbox.embed.apollographql.com';

/** Apollo's page marks its own inline script and style with one nonce per render; the policy allows that one. */
const NONCE = /'nonce-([0-9a-f]{64})'/;

export function sandboxPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' ${SANDBOX_SCRIPT_ORIGIN}`,
    `style-src 'nonce-${nonce}'`,
    `frame-src ${SANDBOX_FRAME_ORIGIN}`,
    "connect-src 'self'",
    // Nobody frames the page: a framed Sandbox holding a staff token could be clickjacked.
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/**
 * Puts the Sandbox page under sandboxPolicy, with framing refused (CSP and X-Frame-Options for older browsers).
 * Only an HTML answer to a GET gets it: GraphQL answers are JSON and keep their headers.
 */
export const sandboxPageSecurity: RequestHandler = (req, res, next) => {
  if (req.method !== 'GET' && req.method !== 'HEAD') return next();
  const send = res.send.bind(res);
  res.send = (body?: unknown) => {
    const type = String(res.getHeader('content-type') ?? '');
    const nonce = typeof body === 'string' && type.startsWith('text/html') ? NONCE.exec(body)?.[1] : undefined;
    if (nonce) {
      res.setHeader('content-security-policy', sandboxPolicy(nonce));
      res.setHeader('x-frame-options', 'DENY');
      res.setHeader('referrer-policy', 'no-referrer');
      res.setHeader('x-content-type-options', 'nosniff');
    }
    return send(body);
  };
  next();
};
