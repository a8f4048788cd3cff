// negotiator ships no types, and @types/negotiator (0.6) predates the `preferred` option of 1.x that
// src/http/console.ts uses; this declares the one method it calls, as negotiator 1.1's README documents it.
declare module 'negotiator' {
  import type { IncomingMessage } from 'node:http';
  export default class Negotiator {
    constructor(request: Pick<IncomingMessage, 'headers'>);
    /** The codings of `available` the request accepts, best first; q-value ties go in the order of `preferred`. */
    encodings(available?: string[], options?: { preferred?: string[] }): string[];
  }
}
