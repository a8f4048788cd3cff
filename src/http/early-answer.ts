import type { Request, Response } from 'express';

/**
 * An answer sent before the request's body has arrived (401, 404, 405, 413, 429, a refused upload...) ends the
 * connection: the answer carries `Connection: close` and the socket is destroyed once it is written. Kept open, Node
 * would go on reading the body to reach the next request, the request timeout (cleared by the answer) no longer
 * applies, and a client dripping one byte now and then could hold the connection for ever without a credential.
 * Closing costs an honest client one reconnect after a refusal.
 */
export function closeOnEarlyAnswer(req: Request, res: Response): void {
  let closing = false;
  const writeHead = res.writeHead;
  // Every answer, implicit headers included (res.end without writeHead), passes through writeHead.
  res.writeHead = function (this: Response, ...args: Parameters<Response['writeHead']>) {
    if (!req.complete && !res.headersSent) {
      closing = true;
      res.setHeader('Connection', 'close');
    }
    return writeHead.apply(this, args);
  } as Response['writeHead'];
  res.once('finish', () => {
    if (!closing) return;
    // Node ends a `Connection: close` response's socket itself (end, then destroy once flushed); this makes sure of
    // it whatever the protocol version or a proxy in front asked for.
    const socket = req.socket;
    if (socket && !socket.destroyed) socket.destroySoon();
  });
}
