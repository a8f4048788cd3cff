import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler } from 'express';

/**
 * The JSON body parser of both entry points (/v1 and /graphql). The raw bytes are checked before parsing: JSON is
 * UTF-8 (RFC 8259), and the parser would otherwise replace bad bytes with U+FFFD and store text nobody sent. Not
 * strict: a top-level `null` or `3` is valid JSON, and validation says what is wrong with it. With `emptyIsMissing`,
 * an empty body is reported as a missing body rather than parsed as `{}` (then reported as missing fields).
 * Errors carry body-parser's `type` (entity.too.large with its `limit`, entity.parse.failed, or the two below); the
 * error handler turns them into problems.
 */
export function jsonBody(limitBytes: number, options: { emptyIsMissing: boolean }): RequestHandler {
  const types = ['application/json', 'application/*+json'];
  const parse = express.json({
    limit: limitBytes,
    strict: false,
    type: types,
    verify: (_req, _res, body: Buffer) => {
      if (options.emptyIsMissing && body.length === 0) throw Object.assign(new Error('body is empty'), { status: 400, type: 'entity.empty' });
      if (!isUtf8(body)) throw Object.assign(new Error('body is not UTF-8'), { status: 400, type: 'encoding.invalid' });
    },
  });
  // A declared length over the limit is refused at once: body-parser would first read (and drop) the whole body, so
  // the refusal would wait on a client that may drip it for as long as the request timeout lets it. Refused before
  // the body arrived, the answer also ends the connection (src/http/early-answer.ts).
  return (req, res, next) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isSafeInteger(declared) && declared > limitBytes && req.is(types)) {
      return next(Object.assign(new Error('request entity too large'), { status: 413, type: 'entity.too.large', limit: limitBytes, length: declared, expected: declared }));
    }
    return parse(req, res, next);
  };
}

/** "1 MB", "100 KB": a byte limit as a refusal states it. */
export function describeLimit(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}
