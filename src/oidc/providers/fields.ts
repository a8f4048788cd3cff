/**
 * Checks of rule fields that several providers share: identifiers compared exactly, names matched by `*` patterns.
 * A `*` matches text without a colon (the spec's Trust rule), and here also without a `/`: a pattern of one project
 * never reaches into a subgroup or another organisation.
 */
import type { FieldError } from '../../core/errors';
import { MAX_WILDCARDS, wildcardCount, wildcardMatches } from '../subject';
import type { FailedCheck } from './model';

export type Problem = FieldError | null;

export const at = (pointer: string, message: string): FieldError => ({ pointer, message });

const NUMERIC = /^[0-9]{1,20}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Bitbucket writes its UUIDs in braces, lower case: `{7c3c4e2a-...}`. */
const BRACED_UUID = /^\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}$/;

export const onlyWildcards = (text: string) => /^\*+$/.test(text);

export function numericId(pointer: string, value: string | null | undefined): Problem {
  return value != null && !NUMERIC.test(value) ? at(pointer, 'must be a numeric id') : null;
}

export function uuid(pointer: string, value: string | null | undefined, { required }: { required: boolean }): Problem {
  if (value == null) return required ? at(pointer, 'required: the id pins the rule to one tenant') : null;
  return UUID.test(value) ? null : at(pointer, 'must be a UUID in lower case (8-4-4-4-12 hexadecimal digits)');
}

export function bracedUuid(pointer: string, value: string | null | undefined, { required }: { required: boolean }): Problem {
  if (value == null) return required ? at(pointer, 'required: the id pins the rule to one tenant') : null;
  return BRACED_UUID.test(value) ? null : at(pointer, 'must be a UUID in braces, as Bitbucket writes it: {xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}');
}

/** A name pattern: printable, no colon, no `/` (unless allowed), at most MAX_WILDCARDS `*`. */
export function namePattern(pointer: string, value: string | null | undefined, opts: { allowSlash: boolean; max: number }): Problem {
  if (value == null) return null;
  if (value.length === 0 || value.length > opts.max) return at(pointer, `1 to ${opts.max} characters`);
  if (wildcardCount(value) > MAX_WILDCARDS) return at(pointer, `at most ${MAX_WILDCARDS} * per pattern`);
  if (!/^[\x21-\x7e]+$/.test(value) || value.includes(':') || (!opts.allowSlash && value.includes('/'))) {
    return at(pointer, opts.allowSlash ? 'printable, with no colon or space' : 'printable, with no colon, slash or space');
  }
  return null;
}

/** An exact name: printable, no `*`. */
export function exactName(pointer: string, value: string | null | undefined, max: number): Problem {
  if (value == null) return null;
  if (value.length === 0 || value.length > max || value.trim() !== value || value.includes('*') || /[\x00-\x1f\x7f]/.test(value)) {
    return at(pointer, `a name compared exactly: 1 to ${max} characters, no wildcard, no surrounding spaces`);
  }
  return null;
}

export const problems = (...list: Problem[]): FieldError[] => list.filter((problem): problem is FieldError => problem !== null);

export const fail = (check: string, expected: string, actual: string | null): FailedCheck => ({ check, expected, actual });

/** `*` matching of a name that holds no colon; a `/` in the value is matched only by a `/` in the pattern. */
export function nameMatches(pattern: string, value: string | null, opts: { ignoreCase: boolean }): boolean {
  if (value === null) return false;
  const patternParts = pattern.split('/');
  const valueParts = value.split('/');
  return patternParts.length === valueParts.length && patternParts.every((part, i) => wildcardMatches(part, valueParts[i], opts));
}
