import os from 'node:os';
import type { Deps } from '../core/deps';
import { createContext, type RequestContext } from './context';

/** The operating-system user running the process, as far as it is known (a container's arbitrary uid has none). */
function operatingSystemUser(): string | null {
  try {
    return os.userInfo().username;
  } catch {
    return null;
  }
}

/**
 * The context of work no request asked for: the command line, jobs and hooks. It carries the operator principal, so
 * services authorize and audit it like any caller, through the same calls.
 */
export function operatorContext(deps: Deps, user: string | null = operatingSystemUser()): RequestContext {
  return createContext(deps, { kind: 'operator', user });
}
