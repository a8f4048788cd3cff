import type { RequestHandler } from 'express';
import { buildProblem, sendProblem } from '../http/problem';
import { requestState } from '../http/request-state';

/**
 * The only origins Apollo Sandbox's embedded landing page needs (@apollo/server's getEmbeddedSandboxHTML): its
 * script from the Sandbox CDN, and the Sandbox itself in a frame from Apollo's embed host. The page's GraphQL calls
 * are made by that script in this page, to this origin ('self').
 */
export const SANDBOX_SCRIPT_ORIGIN = 'https://embeddable-sandbox.cdn.apollographql.com';
export const SANDBOX_FRAME_ORIGIN = 'https://sandbox.embed.apollographql.com';

/** Apollo's page marks its own inline script and style with one nonce per render; the policy allows that one. */
const NONCE = /'nonce-([0-9a-f]{64})'/;

/** Where the bundled GraphQL explorer lives (src/http/console.ts): everything it needs is served by this service. */
export const EXPLORER_PATH = '/console/explorer';

/** How long the Sandbox script may take to define its global before the page offers the bundled explorer. */
const SANDBOX_WAIT_MS = 4000;

/**
 * Put before Apollo's own markup, under its nonce: the message for when the Sandbox script cannot be had (offline,
 * or the CDN blocked), shown when that script fails to load or has not defined window.EmbeddedSandbox by the time
 * the page has loaded, or after SANDBOX_WAIT_MS for a script that hangs. The listener is on window in the capture
 * phase, set before the script tag, so even an at-once failure is seen.
 */
export function offlineNotice(nonce: string): string {
  return `<style nonce="${nonce}">
  #shieldgate-offline { position: fixed; z-index: 10; inset: 0; display: grid; place-items: center; padding: 24px; background: #f5f6f8;
    font: 15px/1.5 system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', Arial, sans-serif; color: #1c2230; }
  #shieldgate-offline[hidden] { display: none; }
  #shieldgate-offline div { max-width: 560px; background: #fff; border: 1px solid #e3e6eb; border-radius: 12px; padding: 28px 32px; }
  #shieldgate-offline h1 { font-size: 18px; margin: 0 0 12px; }
  #shieldgate-offline a { color: #3b5bdb; font-weight: 600; }
</style>
<div id="shieldgate-offline" role="alert" hidden>
  <div>
    <h1>Apollo Sandbox cannot be loaded</h1>
    <p>Sandbox comes from Apollo's CDN (${new URL(SANDBOX_SCRIPT_ORIGIN).host}), which this browser cannot reach: it may be offline, or the network blocks it.</p>
    <p><a href="${EXPLORER_PATH}" data-explorer-link>Open the bundled GraphQL explorer</a>: the same /graphql with a staff token, served entirely by this service.</p>
  </div>
</div>
<script nonce="${nonce}">
(function () {
  var shown = false;
  function show() {
    if (shown || window.EmbeddedSandbox) return;
    var box = document.getElementById('shieldgate-offline');
    if (!box) return;
    shown = true;
    box.hidden = false;
  }
  addEventListener('error', function (event) {
    var src = event.target && event.target.src;
    if (typeof src === 'string' && src.indexOf(${JSON.stringify(SANDBOX_SCRIPT_ORIGIN + '/')}) === 0) setTimeout(show);
  }, true);
  addEventListener('load', show);
  setTimeout(show, ${SANDBOX_WAIT_MS});
})();
</script>
`;
}

/** Apollo's embedded Sandbox page with offlineNotice put before its first element in the body. */
export function withOfflineNotice(html: string, nonce: string): string {
  const body = /<body[^>]*>/.exec(html);
  if (!body) return html;
  const at = body.index + body[0].length;
  return html.slice(0, at) + offlineNotice(nonce) + html.slice(at);
}

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
 * Puts the Sandbox page under sandboxPolicy, with framing refused (CSP and X-Frame-Options for older browsers), and
 * adds the offline notice pointing to the bundled explorer. Only an HTML answer to a GET gets it: GraphQL answers
 * are JSON and keep their headers.
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
      return send(withOfflineNotice(body as string, nonce));
    }
    return send(body);
  };
  next();
};

/**
 * GRAPHQL_SANDBOX=off: a browser asking /graphql for a page (GET, no operation, HTML preferred) gets the service's
 * not-found problem, as /console/explorer does, rather than Apollo's complaint that the GET carries no query.
 */
export const noSandboxPage: RequestHandler = (req, res, next) => {
  if ((req.method !== 'GET' && req.method !== 'HEAD') || new URL(req.url, 'http://graphql.invalid').searchParams.has('query')) return next();
  if (req.accepts(['application/json', 'text/html']) !== 'text/html') return next();
  sendProblem(req, res, buildProblem('not_found', requestState(res).requestId, { detail: 'No GraphQL explorer here: GRAPHQL_SANDBOX is off.' }));
};
