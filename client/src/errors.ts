import { printable } from './log-text';

/** Exit codes of `shieldgate-ci`: what a workflow branches on. */
export const EXIT = {
  ok: 0,
  /** Usage error, or the service or network failed: one clear line on stderr. */
  error: 1,
  /** The gate: grade under --fail-under, or the package could not be analysed. */
  gate: 2,
  /** The OIDC exchange was refused: the job's claims and a rule that would admit it are printed. */
  refused: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error that ends the command with one line and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.error,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A problem answer (RFC 9457) of the service, reduced to what a log line needs. */
export class ServiceError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    detail: string,
  ) {
    super(`${detail} (HTTP ${status}${code ? `, ${code}` : ''})`);
    this.name = 'ServiceError';
  }
}

/** A problem's text as the client prints it: its first line, at most 300 characters, printable (log-text.ts). */
export const detailLine = (text: string): string => printable(text.split('\n')[0].slice(0, 300));

/** Reads the one line a problem answer gives, never more than a line of it. */
export function problemLine(body: unknown, fallback: string): { code?: string; detail: string } {
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    const detail = typeof record.detail === 'string' ? record.detail : typeof record.title === 'string' ? record.title : fallback;
    return { code: typeof record.code === 'string' ? record.code : undefined, detail: detailLine(detail) };
  }
  return { detail: fallback };
}
