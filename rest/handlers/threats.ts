import type { RestHandler } from '../handler';
import type { Writable } from 'node:stream';
import { exportThreats as exportThreatsOf } from '../../src/services/threats-service';
import { execute } from '../support/execute';
import { connectionArgs, toRestPage } from '../support/rest-page';
import { notFound } from '../../src/core/errors';
import { ThreatsDocument } from '../../src/generated/rest-operations';
import { toRestThreat } from '../../src/threats/rest-threat';

export const listThreats: RestHandler<'listThreats'> = async (call, ctx) => {
  const { query } = call;
  const { app } = await execute(ctx, ThreatsDocument, {
    appId: call.params.id,
    filter: query.detection ? { detection: query.detection } : null,
    ...connectionArgs(query),
  });
  if (!app) throw notFound('App');
  call.answer(200, toRestPage(app.threats, toRestThreat));
};

/**
 * A reader that takes nothing for this long is gone or hostile: its export ends, freeing its place (export-budget.ts).
 * A SIEM back-fill reads continuously; the socket's buffers hold far more than one line.
 */
export const EXPORT_STALL_MS = 30_000;

/** Waits until `out` drains: 'drained', 'closed' (the connection went away), or 'stalled' after `ms`. */
export function drained(out: Writable, ms: number): Promise<'drained' | 'closed' | 'stalled'> {
  return new Promise((resolve) => {
    const settle = (how: 'drained' | 'closed' | 'stalled') => {
      clearTimeout(timer);
      out.off('drain', onDrain);
      out.off('close', onClose);
      resolve(how);
    };
    const onDrain = () => settle('drained');
    const onClose = () => settle('closed');
    const timer = setTimeout(() => settle('stalled'), ms);
    out.once('drain', onDrain);
    out.once('close', onClose);
  });
}

/**
 * Streams NDJSON, one Threat per line, as the list shows them. Not through GraphQL: a response of any size must not be
 * held in memory. Each line waits for the socket to drain when its buffer is full, and a client that goes away stops
 * the reading of further pages, as does one that reads nothing for EXPORT_STALL_MS. Errors before the first line are
 * problems as usual; after it, the stream is cut short.
 */
export const exportThreats: RestHandler<'exportThreats'> = async (call, ctx) => {
  const { query, res } = call;
  const threats = exportThreatsOf(ctx, { appId: call.params.id, from: new Date(query.from), to: new Date(query.to) });
  let started = false;
  let closed = false;
  res.once('close', () => (closed = true));
  try {
    for await (const t of threats) {
      if (closed) break;
      if (!started) {
        res.status(200).setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
        started = true;
      }
      const line = JSON.stringify(toRestThreat({ ...t, id: t._id })) + '\n';
      if (!res.write(line) && (await drained(res, EXPORT_STALL_MS)) === 'stalled') {
        ctx.logger.info({ stalledMs: EXPORT_STALL_MS }, 'threat export cut short: its reader stopped reading');
        res.destroy();
        return; // ends the loop, which ends the export and frees its place
      }
    }
  } catch (error) {
    if (!started) throw error;
    ctx.logger.error({ err: error }, 'threat export failed after it started');
    res.destroy();
    return;
  }
  if (!started) res.status(200).setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
  res.end();
};
