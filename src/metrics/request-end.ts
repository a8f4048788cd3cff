import type { Response } from 'express';

/**
 * Calls `done` once when the exchange is over: `aborted` is true when the connection closed before the response was
 * finished (the client went away mid-request, or the socket was cut), false when the response was sent whole.
 */
export function onRequestEnd(res: Response, done: (aborted: boolean) => void): void {
  let called = false;
  const end = () => {
    if (called) return;
    called = true;
    res.off('finish', end);
    res.off('close', end);
    done(!res.writableFinished);
  };
  res.on('finish', end);
  res.on('close', end);
}
