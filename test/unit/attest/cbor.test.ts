// Protects: the strict CBOR decoder of attestation tokens. Each strictness rule refuses what it names, shown on
// hand-made bytes next to the same value written the accepted way; values come back as Maps, Buffers, strings and
// safe integers only; the size and depth bounds hold; CborError is the only error it throws.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CborError, MAX_CBOR_BYTES, decodeStrictCbor } from '../../../src/attest/cbor';

const hex = (h: string) => Buffer.from(h.replace(/\s/g, ''), 'hex');
const decode = (h: string, opts?: { maxDepth?: number }) => decodeStrictCbor(hex(h), opts);
const refusal = (h: string, opts?: { maxDepth?: number }): string => {
  try {
    decode(h, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(CborError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${h}`);
};

it('reads maps as Maps, byte strings as Buffers copied out of the input, text, integers, booleans and null', () => {
  const input = hex('a3 61 61 42 0102 01 63 78797a 20 f5');
  const value = decodeStrictCbor(input) as Map<unknown, unknown>;
  expect(value).toEqual(new Map<unknown, unknown>([['a', Buffer.from([1, 2])], [1, 'xyz'], [-1, true]]));
  input[5] = 0xff;
  expect(value.get('a')).toEqual(Buffer.from([1, 2])); // a copy: changing the input later changes nothing
  expect(decode('f6')).toBeNull();
  expect(decode('83 00 17 1818')).toEqual([0, 23, 24]);
  expect(decode('1b 001fffffffffffff')).toBe(Number.MAX_SAFE_INTEGER);
});

it('refuses a map key twice', () => {
  expect(decode('a2 6161 01 6162 02')).toEqual(new Map([['a', 1], ['b', 2]]));
  expect(refusal('a2 6161 01 6161 02')).toMatch(/Duplicate key/);
  expect(refusal('a2 01 00 01 00')).toMatch(/Duplicate key/);
});

it('refuses indefinite lengths: maps, arrays, byte and text strings', () => {
  expect(refusal('bf 6161 01 ff')).toMatch(/Streaming/);
  expect(refusal('9f 01 ff')).toMatch(/Streaming/);
  expect(refusal('5f 41 00 ff')).toMatch(/Streaming/);
  expect(refusal('7f 61 61 ff')).toMatch(/Streaming/);
});

it('refuses integers and lengths not in their shortest form', () => {
  expect(refusal('18 01')).toMatch(/long integer encoding/);
  expect(refusal('19 00ff')).toMatch(/long integer encoding/);
  expect(refusal('1a 0000ffff')).toMatch(/long integer encoding/);
  expect(refusal('1b 00000000ffffffff')).toMatch(/long integer encoding/);
  expect(refusal('38 00')).toMatch(/long integer encoding/); // -1 written in two bytes
  expect(refusal('58 01 00')).toMatch(/long integer encoding/); // a one-byte string
  expect(refusal('b8 01 00 00')).toMatch(/long integer encoding/); // a map of one
});

it('refuses anything after the one data item', () => {
  expect(refusal('a1 6161 01 00')).toMatch(/Extra data/);
  expect(refusal('00 00')).toMatch(/Extra data/);
});

it('refuses floats, simple values, undefined and a break on its own', () => {
  expect(refusal('f9 3c00')).toMatch(/floating point/);
  expect(refusal('fa 3f800000')).toMatch(/floating point/);
  expect(refusal('fb 3ff0000000000000')).toMatch(/floating point/);
  expect(refusal('f0')).toMatch(/simple value/);
  expect(refusal('f8 20')).toMatch(/simple value/);
  expect(refusal('f7')).toMatch(/undefined/i);
  expect(refusal('ff')).toMatch(/BREAK/);
});

it('refuses every tag, bignums included, without running a tag decoder', () => {
  expect(refusal('c0 74 323032302d30312d30315430303a30303a30305a')).toBe('tag 0 not allowed'); // a date
  expect(refusal('c2 41 01')).toBe('tag 2 not allowed');
  expect(refusal('c3 41 01')).toBe('tag 3 not allowed');
  expect(refusal('d8 18 41 00')).toBe('tag 24 not allowed'); // embedded CBOR
  expect(refusal('d8 23 61 61')).toBe('tag 35 not allowed'); // a regular expression
  expect(refusal('a1 c0 6161 01')).toBe('tag 0 not allowed'); // as a map key
  expect(refusal('a1 00 c1 00')).toBe('tag 1 not allowed'); // nested
});

it('refuses integers beyond 2^53 and negative ones beyond -2^64', () => {
  expect(refusal('1b 0020000000000000')).toBe('integer beyond 2^53');
  expect(refusal('3b 0020000000000000')).toBe('integer beyond 2^53');
  expect(refusal('3b ffffffffffffffff')).toMatch(/65bit negative/);
});

it('refuses text that is not UTF-8, truncated items, reserved additional information', () => {
  expect(refusal('62 c328')).toMatch(/not valid/);
  expect(refusal('58 20 00')).toMatch(/Unexpected end/);
  expect(refusal('5a ffffffff')).toMatch(/Unexpected end/);
  expect(refusal('5b ffffffffffffffff')).toBeTruthy(); // an 8-byte length: refused, never allocated
  expect(refusal('bb 0000000100000000')).toBeTruthy();
  expect(refusal('1c')).toMatch(/Additional info/);
  expect(refusal('')).toBeTruthy();
});

it('bounds depth: four by default, as an attestation object needs; a deeper item is refused without recursion trouble', () => {
  expect(decode('a1 00 a1 00 a1 00 a1 00 00')).toBeInstanceOf(Map);
  expect(refusal('a1 00 a1 00 a1 00 a1 00 a1 00 00')).toMatch(/Maximum depth 4/);
  expect(refusal('a1 00 a1 00 00', { maxDepth: 1 })).toMatch(/Maximum depth 1/);
  expect(refusal('81'.repeat(5000) + '00')).toMatch(/Maximum depth/);
  const fixture = JSON.parse(readFileSync(path.join(__dirname, '../../fixtures/attestation/apple-app-attest/veehaitch-ios-14.2.json'), 'utf8')) as { attestation: string };
  const attestation = Buffer.from(fixture.attestation, 'base64');
  expect(decodeStrictCbor(attestation)).toBeInstanceOf(Map);
  expect(() => decodeStrictCbor(attestation, { maxDepth: 3 })).toThrow(CborError);
});

it('bounds size: at most MAX_CBOR_BYTES', () => {
  const header = hex('59 1ffd');
  expect(decodeStrictCbor(Buffer.concat([header, Buffer.alloc(MAX_CBOR_BYTES - 3)]))).toHaveLength(MAX_CBOR_BYTES - 3);
  expect(() => decodeStrictCbor(Buffer.concat([hex('59 1ffe'), Buffer.alloc(MAX_CBOR_BYTES - 2)]))).toThrow(new CborError(`CBOR larger than ${MAX_CBOR_BYTES} bytes`));
});

it('a `__proto__` key is an ordinary Map key, touching no prototype', () => {
  const value = decode(`a1 69 ${Buffer.from('__proto__').toString('hex')} 01`) as Map<string, number>;
  expect(value.get('__proto__')).toBe(1);
  expect(Object.getPrototypeOf(value)).toBe(Map.prototype);
});
