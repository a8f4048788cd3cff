/**
 * Documents and queries for the differential test of the embedded database's pushdown
 * (test/integration/ferretdb-pushdown.test.ts): the same cases run on FerretDB with and without
 * tools/ferretdb/patches, which must answer alike.
 *
 * Two sources of queries:
 *   - the shapes the repositories send (test/support/query-shapes.ts reads them from src/data/*-repo.ts, so a query
 *     written tomorrow is covered the day it is written), each given random values, on a collection with that
 *     repository's declared indexes and documents holding every field the shapes and indexes name;
 *   - random filters over a generic collection, with values of every BSON type the pushdown treats differently.
 * Field values are drawn mostly from the kind the service stores (ids as strings, times as dates, counters as
 * numbers) and otherwise from a pool of every type (missing, null, arrays, strings that sort oddly as JSON text,
 * int32/int64/double of the same value, numbers past 2^53, dates outside 2001..2286, nested documents), because the
 * pushdown must never drop a document MongoDB's semantics keep, whatever a collection holds.
 */
import { BSON, Double, Int32, Long, ObjectId, Timestamp, type Document } from 'mongodb';
import type { DeclaredIndex, QueryShape } from './query-shapes';
import type { Rng } from './prng';

export interface FindCase {
  filter: Document;
  /** Always total (it ends with _id): with ties, MongoDB may return either order, and so may the two builds. */
  sort: Document | null;
  limit: number;
  skip: number;
}

export type FieldKind = 'date' | 'number' | 'string';
export type Mode = 'clean' | 'mixed' | 'sneaky';

/** What the service stores in a field, from its name: times are dates, counters and orders numbers, the rest ids and names. */
export function kindOfField(field: string): FieldKind {
  const last = field.split('.').pop()!;
  // `t` is the generic collection's date field.
  if (/(At|After|Until|Before|End|Start)$|^(expires|time|day|since|until|t)$/.test(last)) return 'date';
  if (/^(turn|buildOrder|attempts|count|seq|version|versionCode|order|size|n|score|failures|deaths)$|(Count|Order|Seq|Ms)$/.test(last)) return 'number';
  return 'string';
}

const BASE = Date.UTC(2025, 0, 1);
const DAY = 86_400_000;

export class CaseMaker {
  private readonly days: Date[];
  constructor(private readonly rng: Rng) {
    // Few distinct dates, so that sorts meet ties.
    this.days = Array.from({ length: 40 }, () => new Date(BASE + Math.floor(rng() * 20 * DAY)));
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rng() * xs.length)];
  }

  chance(p: number): boolean {
    return this.rng() < p;
  }

  /** A value of every type the pushdown must keep or refuse correctly. */
  odd(): unknown {
    return this.pick<unknown>([
      'x', 'ab', 'ab!', 'ab ', 'a<b', 'a"b', '', 'é', 's1',
      new Int32(5), Long.fromNumber(5), new Double(5), new Double(5.5), new Int32(0), new Double(-0),
      Long.fromString('9007199254740993'), new Double(2 ** 53), Long.fromString('9007199254740992'), new Double(2 ** 60),
      Long.fromString('1577836800000'), new Double(1577900000000), new Int32(-7),
      new Date(5), new Date(-5000), new Date(631152000000), new Date(10413792000000), new Date(999999999999), this.pick(this.days),
      true, false, null, new ObjectId('65a000000000000000000001'), new Timestamp({ t: 1, i: 1 }),
      { x: 1 }, ['s1', new Int32(5)], [], [this.pick(this.days), 's2'],
    ]);
  }

  /** A value of the field's own kind, as the service writes it. */
  typical(kind: FieldKind): unknown {
    if (kind === 'date') return this.pick(this.days);
    if (kind === 'number') return new Int32(Math.floor(this.rng() * 6));
    return `s${Math.floor(this.rng() * 5)}`;
  }

  /**
   * A stored value: in a `clean` collection only the field's own kind (so that the patched build may sort by a date
   * field through its index), in a `mixed` one any type a quarter of the time, in a `sneaky` one a date field
   * sometimes holds a value that sorts among 13-digit texts where an ordered index read would not see it.
   */
  value(kind: FieldKind, mode: Mode = 'mixed'): unknown {
    if (mode === 'sneaky' && kind === 'date' && this.chance(0.05)) {
      return this.pick([new Date(10413792000000), new Date(10000000000000), new Date(631152000000), new Date(999999999999), Long.fromString('1577900000000'), new Double(1577900000000)]);
    }
    return mode !== 'mixed' || this.chance(0.75) ? this.typical(kind) : this.odd();
  }

  /** A scalar to compare with: what a query would hold (no documents or arrays). */
  queryValue(kind: FieldKind): unknown {
    for (;;) {
      const v = this.value(kind);
      if (!(Array.isArray(v) || (v !== null && typeof v === 'object' && !(v instanceof Date) && !('_bsontype' in v)))) return v;
    }
  }

  bound(kind: FieldKind): unknown {
    if (kind === 'date') {
      if (this.chance(0.15)) return this.pick([new Date(0), new Date(631152000000), new Date(10413792000000), new Date(-1), new Date(1e12), new Date(9999999999999)]);
      return this.chance(0.5) ? this.pick(this.days) : new Date(BASE - 3 * DAY + Math.floor(this.rng() * 26 * DAY));
    }
    return this.chance(0.8) ? this.typical(kind) : this.queryValue(kind);
  }

  /** One document holding the given fields (a dotted one inside its parent, sometimes through an array). */
  document(id: number, fields: readonly string[], mode: Mode): Document {
    const doc: Document = { _id: `d${String(id).padStart(5, '0')}` };
    for (const field of fields) {
      if (field === '_id' || this.chance(0.12)) continue;
      const [head, ...rest] = field.split('.');
      const v = this.value(kindOfField(field), mode);
      if (rest.length === 0) {
        if (!(head in doc)) doc[head] = v;
        continue;
      }
      // FerretDB stores no array inside an array: a value that is one is not wrapped in another.
      const leaf = rest.join('.');
      const parent = doc[head];
      if (parent && typeof parent === 'object' && !Array.isArray(parent) && !('_bsontype' in parent) && !(parent instanceof Date)) {
        (parent as Document)[leaf] = v;
      } else if (!(head in doc)) {
        doc[head] = mode === 'mixed' ? this.pick<unknown>([{ [leaf]: v }, { [leaf]: v }, { [leaf]: v }, [{ [leaf]: v }], 'str', { [leaf]: Array.isArray(v) ? v : [v] }, {}, null]) : { [leaf]: v };
      }
    }
    return doc;
  }

  /** A find for one repository shape, its fields given values; its sort made total with _id. */
  forShape(shape: QueryShape, ids: readonly string[]): FindCase {
    const filter: Document = {};
    for (const f of shape.equality) {
      const kind = kindOfField(f);
      filter[f] = this.chance(0.7) ? this.queryValue(kind) : { $in: [this.queryValue(kind), this.queryValue(kind)] };
    }
    for (const f of shape.range) {
      if (f in filter) continue;
      const kind = kindOfField(f);
      const ops: Document = {};
      for (const op of this.chance(0.5) ? ['$gte', '$lt'] : [this.pick(['$gt', '$gte', '$lt', '$lte'])]) ops[op] = this.bound(kind);
      filter[f] = ops;
    }
    const sort = totalSort(shape.sort);
    const [first, direction] = shape.sort[0] ?? [];
    for (const f of shape.other) {
      if (f in filter || f === '_id') continue;
      const kind = kindOfField(f);
      if (f === first) {
        // A keyset page: after the last item of the page before.
        const at = this.bound(kind);
        const op = direction === -1 ? '$lt' : '$gt';
        filter.$or = [{ [f]: { [op]: at } }, { [f]: at, _id: { [op]: this.pick(ids) } }];
      } else {
        filter[f] = this.pick([{ $ne: this.queryValue(kind) }, { $exists: this.chance(0.5) }, { $nin: [this.queryValue(kind)] }]);
      }
    }
    // A limit without a sort may keep any of the matching documents: only sorted finds are limited here.
    const limit = sort ? this.pick([0, 1, 5, 20, 50]) : 0;
    return { filter, sort, limit, skip: limit && this.chance(0.2) ? 2 : 0 };
  }

  /** The shape as the service sends it: values of each field's own kind, ranges one-sided, keyset pages after a date. */
  typicalForShape(shape: QueryShape, ids: readonly string[]): FindCase {
    const filter: Document = {};
    for (const f of shape.equality) filter[f] = this.typical(kindOfField(f));
    for (const f of shape.range) if (!(f in filter)) filter[f] = { $lt: this.typical(kindOfField(f)) };
    const sort = totalSort(shape.sort);
    const [first, direction] = shape.sort[0] ?? [];
    for (const f of shape.other) {
      if (f in filter || f === '_id') continue;
      const at = this.typical(kindOfField(f));
      const op = direction === -1 ? '$lt' : '$gt';
      if (f === first) filter.$or = [{ [f]: { [op]: at } }, { [f]: at, _id: { [op]: this.pick(ids) } }];
      else filter[f] = { $ne: at };
    }
    return { filter, sort, limit: sort ? 50 : 0, skip: 0 };
  }

  /** A random filter of one to three conditions over the generic collection's fields (g, a, n.k, t). */
  generic(ids: readonly string[]): FindCase {
    const filter: Document = {};
    const conditions = 1 + Math.floor(this.rng() * 3);
    for (let i = 0; i < conditions; i++) {
      const p = this.genericCondition(ids);
      const key = Object.keys(p)[0];
      if (key in filter) ((filter.$and ??= []) as Document[]).push(p);
      else Object.assign(filter, p);
    }
    const sort = this.pick([null, null, { t: -1, _id: -1 }, { t: -1, _id: -1 }, { t: 1, _id: 1 }, { _id: 1 }, { t: -1, a: 1, _id: 1 }]);
    const limit = sort ? this.pick([0, 1, 3, 10, 50]) : 0;
    return { filter, sort, limit, skip: limit && this.chance(0.2) ? 2 : 0 };
  }

  private genericCondition(ids: readonly string[]): Document {
    switch (this.pick(['g', 'g', 'a', 'a', 'nk', 't', 't', 't', 'or', 'arange'])) {
      case 'g':
        return this.chance(0.7) ? { g: this.pick(['s0', 's1', 's2', null]) } : { g: { $in: [this.typical('string'), this.typical('string')] } };
      case 'a': {
        const v = this.queryValue('string');
        return this.pick([{ a: v }, { a: { $eq: v } }, { a: { $in: [v, this.queryValue('number'), this.queryValue('date')] } }]);
      }
      case 'nk':
        return this.chance(0.7) ? { 'n.k': this.queryValue('string') } : { 'n.k': { $in: ['s1', this.queryValue('string')] } };
      case 't': {
        if (this.chance(0.2)) return { t: this.pick(this.days) };
        const ops: Document = {};
        for (let k = this.chance(0.5) ? 2 : 1; k > 0; k--) ops[this.pick(['$gt', '$gte', '$lt', '$lte'])] = this.bound('date');
        return { t: ops };
      }
      case 'or': {
        const at = this.pick(this.days);
        if (this.chance(0.6)) return { $or: [{ t: { $lt: at } }, { t: at, _id: { $lt: this.pick(ids) } }] };
        return { $or: [this.genericCondition(ids), this.genericCondition(ids)] };
      }
      default:
        return { a: { $gte: new Date(1600000000000), $lt: this.pick([new Date(1800000000000), new Date(1700000000001), this.pick(this.days)]) } };
    }
  }
}

export const GENERIC_FIELDS = ['g', 'a', 'n.k', 't'];
export const GENERIC_INDEXES: DeclaredIndex[] = [
  { name: 'g_t_id', keys: [['g', 1], ['t', -1], ['_id', -1]] },
  { name: 'a', keys: [['a', 1]] },
  { name: 'nk', keys: [['n.k', 1]] },
  { name: 't', keys: [['t', 1]] },
  { name: 'g_a_t', keys: [['g', 1], ['a', 1], ['t', -1]] },
];

/** The sort made total: _id last, in the direction of the last key. */
export function totalSort(sort: readonly [string, 1 | -1][]): Document | null {
  if (sort.length === 0) return null;
  const out: Document = Object.fromEntries(sort);
  if (!('_id' in out)) out._id = sort[sort.length - 1][1];
  return out;
}

/** Canonical extended JSON, so that an int32 and a double of the same value differ. */
export const canonical = (doc: Document): string => BSON.EJSON.stringify(doc, { relaxed: false });
