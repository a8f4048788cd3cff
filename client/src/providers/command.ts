/**
 * Runs a CI's own tool that prints the job's OIDC token (buildkite-agent, circleci). execFile, never a shell: the
 * audience is an argument, not text a shell reads. Bounded in time and output, so a hung or chatty tool cannot hold
 * the job; what it prints is checked to be a token before it is used, and never echoed: an error names the command
 * and the first line the tool wrote to stderr, with anything shaped like a token blanked out.
 */
import { execFile } from 'node:child_process';
import { CliError } from '../errors';
import { printable } from '../log-text';
import { isCompactJws } from './shared';
import type { Env } from './types';

export const COMMAND_TIMEOUT_MS = 30_000;
export const MAX_OUTPUT_BYTES = 64 * 1024;

const TOKEN_LIKE = /[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}/g;

/** The first non-empty line of a tool's stderr as printed: no token, at most 200 printable characters. */
export function stderrLine(stderr: string): string {
  const line = stderr.split(/\r?\n|\r/).find((l) => l.trim()) ?? '';
  return printable(line.replace(TOKEN_LIKE, '[token]')).trim().slice(0, 200);
}

export interface TokenCommand {
  file: string;
  args: string[];
  /** What a job without the tool is told to do (one clause, with the docs). */
  missingTool: string;
  /** Where the docs say more, for a tool that answered without a token: "docs/keyless-ci.md, Buildkite". */
  docs: string;
}

/** The token `file args...` prints on stdout; a CliError of one line otherwise. */
export function runTokenCommand(command: TokenCommand, env: Env, timeoutMs = COMMAND_TIMEOUT_MS): Promise<string> {
  const shown = `${command.file} ${command.args.join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = execFile(
      command.file,
      command.args,
      { env: env as NodeJS.ProcessEnv, timeout: timeoutMs, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8', windowsHide: true },
      (error, stdout, stderr) => {
        if (error) {
          const { code, killed, signal } = error as Omit<NodeJS.ErrnoException, 'code'> & { code?: string | number | null; killed?: boolean; signal?: string | null };
          if (code === 'ENOENT') return reject(new CliError(`no OIDC token: ${command.file} is not on PATH (${command.missingTool})`));
          if (code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return reject(new CliError(`no OIDC token: "${shown}" printed more than ${MAX_OUTPUT_BYTES / 1024} KiB (${command.docs})`));
          if (killed) return reject(new CliError(`no OIDC token: "${shown}" did not answer within ${Math.round(timeoutMs / 1000)} s (${command.docs})`));
          // Never error.message: it carries the tool's whole stderr.
          const said = stderrLine(String(stderr ?? '')) || (typeof code === 'number' ? `exit code ${code}` : signal ? `signal ${signal}` : String(code ?? 'no answer'));
          return reject(new CliError(`no OIDC token: "${shown}" failed: ${said} (${command.docs})`));
        }
        const token = String(stdout).trim();
        if (!isCompactJws(token)) return reject(new CliError(`no OIDC token: "${shown}" printed no token (its output is not a compact JWS; ${command.docs})`));
        resolve(token);
      },
    );
    // The tools read nothing: an open stdin would only let one wait for input until the timeout.
    child.stdin?.end();
  });
}
