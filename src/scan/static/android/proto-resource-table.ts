import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import type { XmlValue } from '../package/xml-node';
import { firstField, readFields, str, type ProtoField } from './protobuf';
import { followReferences, type ResolvedResource, type ResourceResolver, type ResourceStep } from './resource-table';

// Field numbers of aapt2's Resources.proto (package aapt.pb): the resources.pb of an App Bundle module.
const TABLE = { package: 2 } as const;
const PACKAGE = { packageId: 1, type: 3 } as const;
const TYPE = { typeId: 1, name: 2, entry: 3 } as const;
const ENTRY = { entryId: 1, name: 2, configValue: 6 } as const;
const CONFIG_VALUE = { config: 1, value: 2 } as const;
const VALUE = { item: 4 } as const;
const ITEM = { ref: 1, str: 2, rawStr: 3, styledStr: 4, file: 5, prim: 7 } as const;
const REFERENCE = { type: 1, id: 2 } as const;
/** Reference.Type ATTRIBUTE: a theme attribute (?attr/…), which has no value without a theme. */
const REFERENCE_ATTRIBUTE = 1;
const PRIMITIVE = { intDecimal: 6, intHex: 7, boolean: 8 } as const;

type Type = { name: string; bytes: Buffer };

/**
 * A resources.pb (aapt2's protobuf ResourceTable, as App Bundles carry it) indexed by package and type in one pass,
 * packages and types counted against LIMITS; a look-up walks the entries of one type, each protobuf field it reads
 * counted against LIMITS.resourceEntriesRead. As for resources.arsc, every configuration's value counts, the default
 * configuration's (a Configuration with no field set) first. Throws UnreadablePackageError on malformed protobuf.
 */
export class ProtoResourceTable implements ResourceResolver {
  private readonly types = new Map<number, Type>();
  private fieldsRead = 0;
  private readonly cache = new Map<number, ResolvedResource>();

  constructor(buf: Buffer) {
    let packages = 0;
    for (const p of readFields(buf)) {
      if (p.field !== TABLE.package || !p.bytes) continue;
      if (++packages > LIMITS.resourcePackages) throw new LimitExceededError('resourcePackages', `resources.pb has over ${LIMITS.resourcePackages} packages`);
      const packageId = idOf(firstField(p.bytes, PACKAGE.packageId));
      for (const t of readFields(p.bytes)) {
        if (t.field !== PACKAGE.type || !t.bytes) continue;
        if (this.types.size >= LIMITS.resourceTypeChunks) {
          throw new LimitExceededError('resourceTypeChunks', `resources.pb has over ${LIMITS.resourceTypeChunks} resource types`);
        }
        const key = ((packageId & 0xff) << 8) | (idOf(firstField(t.bytes, TYPE.typeId)) & 0xff);
        const name = firstField(t.bytes, TYPE.name);
        // A type repeated under one id is kept once, the first, as with a repeated package in resources.arsc.
        if (!this.types.has(key)) this.types.set(key, { name: name ? str(name) : '', bytes: t.bytes });
      }
    }
  }

  resolve(id: number): ResolvedResource {
    const cached = this.cache.get(id);
    if (cached) return cached;
    const result = followReferences(id, (ref) => this.lookup(ref));
    this.cache.set(id, result);
    return result;
  }

  private lookup(id: number): ResourceStep | null {
    const type = this.types.get(id >>> 16);
    if (!type) return null;
    for (const e of this.fields(type.bytes)) {
      if (e.field !== TYPE.entry || !e.bytes || idOf(this.first(e.bytes, ENTRY.entryId)) !== (id & 0xffff)) continue;
      const entryName = this.first(e.bytes, ENTRY.name);
      const name = type.name && entryName ? `${type.name}/${str(entryName)}` : null;
      const steps = this.items(e.bytes).map((item) => (item ? this.readItem(item) : { next: null, value: null }));
      return steps.length > 0 ? { name, steps } : null;
    }
    return null;
  }

  /** The item of every configuration's value, the default configuration's first; null for a compound value. */
  private items(entry: Buffer): Array<Buffer | null> {
    const out: Array<Buffer | null> = [];
    for (const cv of this.fields(entry)) {
      if (cv.field !== ENTRY.configValue || !cv.bytes) continue;
      const config = this.first(cv.bytes, CONFIG_VALUE.config);
      const value = this.first(cv.bytes, CONFIG_VALUE.value);
      const item = value?.bytes ? this.first(value.bytes, VALUE.item)?.bytes ?? null : null;
      if (!config?.bytes || this.isDefault(config.bytes)) out.unshift(item);
      else out.push(item);
    }
    return out;
  }

  /** A Configuration with every field at its default (zero, empty) is the default configuration. */
  private isDefault(config: Buffer): boolean {
    for (const f of this.fields(config)) if (f.varint !== 0 || (f.bytes && f.bytes.length > 0)) return false;
    return true;
  }

  private readItem(item: Buffer): ResourceStep['steps'][number] {
    for (const f of this.fields(item)) {
      if (!f.bytes) continue;
      if (f.field === ITEM.ref) {
        if (this.first(f.bytes, REFERENCE.type)?.varint === REFERENCE_ATTRIBUTE) break;
        return { next: this.first(f.bytes, REFERENCE.id)?.low32 ?? 0, value: null };
      }
      // String, RawString, StyledString and FileReference all keep their text (a file's path) in field 1.
      if (f.field === ITEM.str || f.field === ITEM.rawStr || f.field === ITEM.styledStr || f.field === ITEM.file) {
        const text = this.first(f.bytes, 1);
        return { next: null, value: { type: 'string', value: text ? str(text) : '' } };
      }
      if (f.field === ITEM.prim) return { next: null, value: this.readPrimitive(f.bytes) };
    }
    return { next: null, value: null };
  }

  private readPrimitive(buf: Buffer): XmlValue | null {
    for (const f of this.fields(buf)) {
      if (f.field === PRIMITIVE.intDecimal) return { type: 'int', value: f.low32 | 0 };
      if (f.field === PRIMITIVE.intHex) return { type: 'int', value: f.low32 };
      if (f.field === PRIMITIVE.boolean) return { type: 'bool', value: f.varint !== 0 };
    }
    // Floats, dimensions, colours, null: nothing a manifest rule reads.
    return null;
  }

  /** Fields read by look-ups, each counted: however the entries are crafted, look-ups do bounded work. */
  private *fields(buf: Buffer): Generator<ProtoField> {
    for (const f of readFields(buf)) {
      if (++this.fieldsRead > LIMITS.resourceEntriesRead) {
        throw new LimitExceededError('resourceEntriesRead', `resolving resource references read over ${LIMITS.resourceEntriesRead} entries and fields of resources.pb`);
      }
      yield f;
    }
  }

  private first(buf: Buffer, field: number): ProtoField | undefined {
    for (const f of this.fields(buf)) if (f.field === field) return f;
    return undefined;
  }
}

/** PackageId, TypeId and EntryId are messages holding `id` in field 1 (plain uint32s in early aapt2); absent means 0. */
function idOf(f: ProtoField | undefined): number {
  if (!f) return 0;
  return (f.bytes ? firstField(f.bytes, 1)?.low32 ?? 0 : f.low32) & 0xffff;
}
