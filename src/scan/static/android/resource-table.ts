import { LimitExceededError, UnreadablePackageError } from '../package/errors';
import { LIMITS } from '../package/limits';
import type { XmlValue } from '../package/xml-node';
import { StringPool } from './string-pool';

// Chunk and value types from frameworks/base/libs/androidfw/include/androidfw/ResourceTypes.h
const RES_TABLE_TYPE = 0x0002;
const RES_STRING_POOL_TYPE = 0x0001;
const RES_TABLE_PACKAGE_TYPE = 0x0200;
const RES_TABLE_TYPE_TYPE = 0x0201;
const TYPE_REFERENCE = 0x01;
const TYPE_STRING = 0x03;
const TYPE_DYNAMIC_REFERENCE = 0x07;
const TYPE_INT_DEC = 0x10;
const TYPE_INT_HEX = 0x11;
const TYPE_INT_BOOLEAN = 0x12;
const NO_ENTRY = 0xffffffff;
const FLAG_SPARSE = 0x01;
const FLAG_OFFSET16 = 0x02;
const ENTRY_FLAG_COMPLEX = 0x0001;
const ENTRY_FLAG_COMPACT = 0x0008;
/** ResTable_type: chunk header (8), id, flags, reserved (4), entryCount (4), entriesStart (4), then ResTable_config. */
const TYPE_CONFIG_AT = 20;
/** ResTable_package: id at 8, name char16[128] at 12, typeStrings at 268, keyStrings at 276, typeIdOffset at 284. */
const PACKAGE_HEADER_MIN = 284;
/**
 * References followed from a reference to the next: AssetManager2::ResolveReference follows at most 20
 * (kMaxIterations) and leaves a longer chain, or a loop, unresolved, as this does.
 */
export const MAX_REFERENCE_HOPS = 20;

/**
 * A resource's values as a device may read them, and its name ("bool/debuggable") for finding details: one value
 * per configuration (after following references, each in every configuration), the default configuration's first,
 * each distinct value once; null stands for a configuration whose value the rules cannot read (a loop, a bag, a
 * float, a missing entry).
 */
export type ResolvedResource = { name: string | null; values: Array<XmlValue | null> };

/** Resolves resource ids to values; implemented for resources.arsc (APK) and resources.pb (App Bundle). */
export interface ResourceResolver {
  /** Every value `id` ends at, over every configuration, after following references. */
  resolve(id: number): ResolvedResource;
}

type TypeChunk = { at: number; size: number; headerSize: number; isDefault: boolean };
type Package = { types: Map<number, TypeChunk[]>; typeNames: StringPool | null; keyNames: StringPool | null; typeIdOffset: number };
type RawValue = { dataType: number; data: number; key: number | null };

/**
 * A resources.arsc indexed in one linear pass over its chunks (packages and type chunks are counted against
 * LIMITS), then read on demand: an entry is looked up in the type chunks of its type, each look-up counted against
 * LIMITS.resourceEntriesRead. Every configuration that has the entry counts (values-v26, values-night, a locale):
 * some device selects each, so the rules judge all of them. Throws UnreadablePackageError on a malformed table.
 */
export class ResourceTable implements ResourceResolver {
  private readonly packages = new Map<number, Package>();
  private values: StringPool | null = null;
  private entriesRead = 0;
  private typeChunks = 0;
  private readonly cache = new Map<number, ResolvedResource>();

  constructor(private readonly buf: Buffer) {
    if (buf.length < 12 || buf.readUInt16LE(0) !== RES_TABLE_TYPE) throw malformed('no table header');
    const end = Math.min(buf.readUInt32LE(4), buf.length);
    for (let at = buf.readUInt16LE(2); at + 8 <= end; ) {
      const { type, size } = chunk(buf, at, end);
      if (type === RES_STRING_POOL_TYPE && !this.values) this.values = new StringPool(buf, at, at + size);
      else if (type === RES_TABLE_PACKAGE_TYPE) this.indexPackage(at, at + size);
      at += size;
    }
  }

  resolve(id: number): ResolvedResource {
    const cached = this.cache.get(id);
    if (cached) return cached;
    const result = followReferences(id, (ref) => {
      const found = this.lookup(ref);
      if (!found) return null;
      return {
        name: found.name,
        steps: found.raws.map((raw) => (isReference(raw.dataType) ? { next: raw.data, value: null } : { next: null, value: this.toValue(raw) })),
      };
    });
    this.cache.set(id, result);
    return result;
  }

  private indexPackage(pkgAt: number, end: number): void {
    if (this.packages.size >= LIMITS.resourcePackages) {
      throw new LimitExceededError('resourcePackages', `resources.arsc has over ${LIMITS.resourcePackages} packages`);
    }
    const headerSize = this.buf.readUInt16LE(pkgAt + 2);
    if (headerSize < PACKAGE_HEADER_MIN || pkgAt + headerSize > end) throw malformed('package header truncated');
    const id = this.buf.readUInt32LE(pkgAt + 8);
    const typeStrings = this.buf.readUInt32LE(pkgAt + 268);
    const keyStrings = this.buf.readUInt32LE(pkgAt + 276);
    const pkg: Package = { types: new Map(), typeNames: null, keyNames: null, typeIdOffset: headerSize >= 288 ? this.buf.readUInt32LE(pkgAt + 284) : 0 };
    // A second package with the same id is what the platform refuses too; the first one is kept.
    if (!this.packages.has(id)) this.packages.set(id, pkg);
    for (let at = pkgAt + headerSize; at + 8 <= end; ) {
      const { type, headerSize: h, size } = chunk(this.buf, at, end);
      if (type === RES_STRING_POOL_TYPE && at - pkgAt === typeStrings) pkg.typeNames = new StringPool(this.buf, at, at + size);
      else if (type === RES_STRING_POOL_TYPE && at - pkgAt === keyStrings) pkg.keyNames = new StringPool(this.buf, at, at + size);
      else if (type === RES_TABLE_TYPE_TYPE) {
        if (++this.typeChunks > LIMITS.resourceTypeChunks) {
          throw new LimitExceededError('resourceTypeChunks', `resources.arsc has over ${LIMITS.resourceTypeChunks} type chunks`);
        }
        const typeId = this.buf[at + 8];
        const list = pkg.types.get(typeId) ?? [];
        list.push({ at, size, headerSize: h, isDefault: this.isDefaultConfig(at, h) });
        pkg.types.set(typeId, list);
      }
      at += size;
    }
  }

  /** True when the chunk's ResTable_config (after its own size field) is all zero: the default configuration. */
  private isDefaultConfig(at: number, headerSize: number): boolean {
    if (headerSize < TYPE_CONFIG_AT + 4) throw malformed('type chunk header truncated');
    const configSize = this.buf.readUInt32LE(at + TYPE_CONFIG_AT);
    if (configSize < 4 || TYPE_CONFIG_AT + configSize > headerSize) throw malformed('type configuration past its header');
    for (let p = at + TYPE_CONFIG_AT + 4; p < at + TYPE_CONFIG_AT + configSize; p++) if (this.buf[p] !== 0) return false;
    return true;
  }

  /** One step: the raw values of `id` in every configuration that has it (the default's first) and its name. */
  private lookup(id: number): { raws: RawValue[]; name: string | null } | null {
    const pkg = this.packages.get(id >>> 24);
    const typeId = (id >>> 16) & 0xff;
    const chunks = pkg?.types.get(typeId);
    if (!pkg || !chunks) return null;
    const raws: RawValue[] = [];
    for (const c of chunks) {
      const offset = this.entryOffset(c, id & 0xffff);
      if (offset === null) continue;
      const raw = this.entryValue(c, offset);
      if (c.isDefault) raws.unshift(raw);
      else raws.push(raw);
    }
    if (raws.length === 0) return null;
    return { raws, name: this.nameOf(pkg, typeId, raws[0].key) };
  }

  /** Offset of an entry inside its type chunk's entry data, or null when this configuration lacks it. */
  private entryOffset(c: TypeChunk, index: number): number | null {
    const { buf } = this;
    const flags = buf[c.at + 9];
    const count = buf.readUInt32LE(c.at + 12);
    const table = c.at + c.headerSize;
    const width = flags & FLAG_SPARSE ? 4 : flags & FLAG_OFFSET16 ? 2 : 4;
    if (count > c.size || table + count * width > c.at + c.size) throw malformed('entry table past its chunk');
    if (flags & FLAG_SPARSE) {
      // Sparse tables list (index u16, offset/4 u16) pairs sorted by index: a binary search.
      for (let lo = 0, hi = count - 1; lo <= hi; ) {
        this.countRead();
        const mid = (lo + hi) >>> 1;
        const at = buf.readUInt16LE(table + mid * 4);
        if (at === index) return buf.readUInt16LE(table + mid * 4 + 2) * 4;
        if (at < index) lo = mid + 1;
        else hi = mid - 1;
      }
      return null;
    }
    this.countRead();
    if (index >= count) return null;
    if (flags & FLAG_OFFSET16) {
      const o = buf.readUInt16LE(table + index * 2);
      return o === 0xffff ? null : o * 4;
    }
    const o = buf.readUInt32LE(table + index * 4);
    return o === NO_ENTRY ? null : o;
  }

  private countRead(): void {
    if (++this.entriesRead > LIMITS.resourceEntriesRead) {
      throw new LimitExceededError('resourceEntriesRead', `resolving resource references read over ${LIMITS.resourceEntriesRead} entries of resources.arsc`);
    }
  }

  private entryValue(c: TypeChunk, offset: number): RawValue {
    const { buf } = this;
    const end = c.at + c.size;
    const entry = c.at + buf.readUInt32LE(c.at + 16) + offset;
    if (entry + 8 > end) throw malformed('entry past its chunk');
    const flags = buf.readUInt16LE(entry + 2);
    // A complex entry is a bag (style, array, plural): no single value an attribute can take.
    if (flags & ENTRY_FLAG_COMPLEX) return { dataType: 0, data: 0, key: null };
    // Compact entries keep the key in the first u16, the value type in the high byte of flags and the data after.
    if (flags & ENTRY_FLAG_COMPACT) return { dataType: flags >>> 8, data: buf.readUInt32LE(entry + 4), key: buf.readUInt16LE(entry) };
    const value = entry + buf.readUInt16LE(entry);
    if (value + 8 > end) throw malformed('value past its chunk');
    return { dataType: buf[value + 3], data: buf.readUInt32LE(value + 4), key: buf.readUInt32LE(entry + 4) };
  }

  private nameOf(pkg: Package, typeId: number, key: number | null): string | null {
    // Type ids count from 1 (less the package's typeIdOffset); the type string pool from 0.
    const typeIndex = typeId - 1 - pkg.typeIdOffset;
    const type = pkg.typeNames && typeIndex >= 0 && typeIndex < pkg.typeNames.size ? pkg.typeNames.get(typeIndex) : null;
    const name = pkg.keyNames && key !== null && key < pkg.keyNames.size ? pkg.keyNames.get(key) : null;
    return type && name ? `${type}/${name}` : null;
  }

  private toValue(raw: RawValue): XmlValue | null {
    switch (raw.dataType) {
      case TYPE_STRING: return this.values ? { type: 'string', value: this.values.get(raw.data) ?? '' } : null;
      case TYPE_INT_BOOLEAN: return { type: 'bool', value: raw.data !== 0 };
      case TYPE_INT_DEC: return { type: 'int', value: raw.data | 0 };
      case TYPE_INT_HEX: return { type: 'int', value: raw.data >>> 0 };
      // Null, attribute references (theme-dependent), floats, dimensions, colours: nothing a manifest rule reads.
      default: return null;
    }
  }
}

/** One resource in every configuration that has it: each a reference to `next`, or a final `value`. */
export type ResourceStep = { name: string | null; steps: Array<{ next: number | null; value: XmlValue | null }> };

/** Distinct values a resolution may collect before the table counts as built to exhaust the reader. */
export const MAX_RESOURCE_VALUES = 64;

/**
 * Follows `id` through references, in every configuration of every resource on the way, to the values it ends at:
 * at most MAX_REFERENCE_HOPS references deep, a reference to an id already on the path (it would loop on a device)
 * or beyond the depth ending as null. The name is the first resource's. Each distinct value is kept once (by its
 * rendering), at most MAX_RESOURCE_VALUES of them; each look-up is counted by the table against its limits.
 */
export function followReferences(id: number, lookup: (id: number) => ResourceStep | null): ResolvedResource {
  const first = lookup(id);
  const values = new Map<string, XmlValue | null>();
  const add = (v: XmlValue | null) => {
    const key = v === null ? 'null' : `${v.type}:${JSON.stringify(v)}`;
    if (values.has(key)) return;
    if (values.size >= MAX_RESOURCE_VALUES) throw new LimitExceededError('resourceEntriesRead', `a resource reference resolves to over ${MAX_RESOURCE_VALUES} values`);
    values.set(key, v);
  };
  const walk = (step: ResourceStep | null, path: Set<number>, depth: number) => {
    if (!step) return add(null);
    for (const s of step.steps) {
      if (s.next === null) add(s.value);
      else if (s.next === 0 || path.has(s.next) || depth >= MAX_REFERENCE_HOPS) add(null);
      else walk(lookup(s.next), new Set([...path, s.next]), depth + 1);
    }
  };
  walk(first, new Set([id]), 0);
  return { name: first?.name ?? null, values: [...values.values()] };
}

/**
 * Resolves a resource id to the file path it names in resources.arsc, e.g. 0x7f020000 ->
 * "res/xml/network_security_config.xml"; null when the id is absent or not a file. Throws on a malformed table.
 */
export function resolveFileReference(arsc: Buffer, id: number): string | null {
  const [value] = new ResourceTable(arsc).resolve(id).values;
  return value?.type === 'string' ? value.value : null;
}

function isReference(dataType: number): boolean {
  return dataType === TYPE_REFERENCE || dataType === TYPE_DYNAMIC_REFERENCE;
}

function chunk(buf: Buffer, at: number, end: number): { type: number; headerSize: number; size: number } {
  const type = buf.readUInt16LE(at);
  const headerSize = buf.readUInt16LE(at + 2);
  const size = buf.readUInt32LE(at + 4);
  if (size < 8 || headerSize < 8 || headerSize > size || at + size > end) throw malformed(`chunk 0x${type.toString(16)} overruns the table`);
  return { type, headerSize, size };
}

function malformed(why: string): UnreadablePackageError {
  return new UnreadablePackageError('corrupt-manifest', `malformed resources.arsc: ${why}`);
}
