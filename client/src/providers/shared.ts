/** Small rules every provider uses: full refs, run links, and what a token read from a CI must look like. */
import { CliError } from '../errors';
import { printable } from '../log-text';
import type { Env } from './types';

/** A full ref from a CI's tag and branch variables; a tag wins (some CIs also put the tag in the branch variable). */
export function fullRef(env: Env, tagVariable: string, branchVariable: string): string | undefined {
  const tag = env[tagVariable]?.trim();
  if (tag) return `refs/tags/${tag}`;
  const branch = env[branchVariable]?.trim();
  return branch ? `refs/heads/${branch}` : undefined;
}

/** An http(s) link as the CI gave it, or undefined for anything else (a link is only ever printed). */
export function httpUrl(value: string | undefined): string | undefined {
  const url = value?.trim();
  return url && /^https?:\/\/[^\s]+$/.test(url) ? url : undefined;
}

/** Three base64url parts: a signed compact JWS (RFC 7515), which every CI's OIDC token is. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const MAX_TOKEN_CHARS = 16_384;

export const isCompactJws = (text: string) => text.length <= MAX_TOKEN_CHARS && COMPACT_JWS.test(text);

/** The `aud` of a token, decoded locally (never verified): a string, a list of strings, or undefined. */
export function unverifiedAudience(token: string): string | string[] | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as { aud?: unknown };
    const aud = payload?.aud;
    if (typeof aud === 'string') return aud;
    if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) return aud as string[];
  } catch {
    // Not JSON: no audience to tell.
  }
  return undefined;
}

/**
 * A token a job holds in a variable was minted for whatever audience the job's configuration named. One that is not
 * for this service is never sent to it: it is a credential for the other services that trust that audience (a
 * Bitbucket workspace's default audience opens every resource server of the workspace).
 */
export function checkVariableToken(token: string, variable: string, audience: string, acceptList: boolean, hint: string): string {
  if (!isCompactJws(token)) throw new CliError(`${variable} holds no OIDC token (not a compact JWS): ${hint}`);
  const aud = unverifiedAudience(token);
  const ours = aud === audience || (acceptList && Array.isArray(aud) && aud.includes(audience));
  if (!ours) {
    const said = aud === undefined ? 'no audience' : `audience ${printable(JSON.stringify(aud)).slice(0, 200)}`;
    throw new CliError(`the OIDC token in ${variable} has ${said}, not "${audience}": ${hint}`);
  }
  return token;
}
