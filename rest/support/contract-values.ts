import type { components } from '../../src/generated/openapi';
import { loadSpec } from './spec';

type Schemas = components['schemas'];
/** The contract's schemas that are one string of a list (enum). */
type EnumSchema = { [N in keyof Schemas]: Schemas[N] extends string ? (string extends Schemas[N] ? never : N) : never }[keyof Schemas];

/** Each enum's values, read once from openapi/v1.yaml (the one source of the lists), by where it is declared. */
const enums = new Map<string, ReadonlySet<unknown>>();

function listed(where: string, read: () => unknown): ReadonlySet<unknown> {
  let values = enums.get(where);
  if (!values) {
    const list = read();
    values = new Set(Array.isArray(list) ? list : []);
    enums.set(where, values);
  }
  return values;
}

function check(where: string, values: ReadonlySet<unknown>, value: string): void {
  if (!values.has(value)) throw new Error(`${JSON.stringify(value)} is not a ${where} the REST contract knows`);
}

/**
 * A string GraphQL types as String, narrowed to the enum the contract declares for it. A value the contract does not
 * list is a server bug, not a client's: it throws (500), as a Build of an unknown engine does, rather than answering
 * outside the contract.
 */
export function contractValue<N extends EnumSchema>(schema: N, value: string): Schemas[N] {
  check(schema, listed(schema, () => loadSpec().components?.schemas?.[schema]?.enum), value);
  return value as Schemas[N];
}

export function contractValues<N extends EnumSchema>(schema: N, values: readonly string[]): Schemas[N][] {
  return values.map((value) => contractValue(schema, value));
}

/** The same for an enum declared inline, on one property of a schema. */
export function contractMember<S extends keyof Schemas, P extends keyof Schemas[S] & string>(schema: S, property: P, value: string): Schemas[S][P] {
  const where = `${schema}.${property}`;
  check(where, listed(where, () => loadSpec().components?.schemas?.[schema]?.properties?.[property]?.enum), value);
  return value as Schemas[S][P];
}
