// The binary plist of the shared-reference attack: a dictionary holding the first of `depth` arrays, each of
// which lists the next one twice. About 20 bytes an array, but a reader that copies every reference it follows
// builds 2^depth values.
const HEADER = Buffer.from('bplist00', 'latin1');

export function sharedReferencePlist(depth: number): Buffer {
  // Object numbers: 0 root dict, 1 key "CFBundleIdentifier", 2 its value, 3 key "Items", 4.. the arrays, then
  // the leaf string the last array lists twice.
  const objects: Buffer[] = [];
  // ASCII string: 0x5N for N < 15 characters, else 0x5F followed by the length as a one-byte integer (0x10 nn).
  const ascii = (s: string) => Buffer.concat([Buffer.from(s.length < 15 ? [0x50 | s.length] : [0x5f, 0x10, s.length]), Buffer.from(s, 'latin1')]);
  const ref = (n: number) => { const b = Buffer.alloc(2); b.writeUInt16BE(n); return b; };
  const firstArray = 4;
  objects.push(Buffer.concat([Buffer.from([0xd2]), ref(1), ref(3), ref(2), ref(firstArray)]));
  objects.push(ascii('CFBundleIdentifier'), ascii('com.example.x'), ascii('Items'));
  for (let i = 0; i < depth; i++) objects.push(Buffer.concat([Buffer.from([0xa2]), ref(firstArray + i + 1), ref(firstArray + i + 1)]));
  objects.push(ascii('leaf'));
  const offsets: number[] = [];
  let at = HEADER.length;
  for (const o of objects) { offsets.push(at); at += o.length; }
  const table = Buffer.alloc(offsets.length * 4);
  offsets.forEach((o, i) => table.writeUInt32BE(o, i * 4));
  const trailer = Buffer.alloc(32);
  trailer[6] = 4; // offset int size
  trailer[7] = 2; // object ref size
  trailer.writeBigUInt64BE(BigInt(objects.length), 8);
  trailer.writeBigUInt64BE(0n, 16); // top object
  trailer.writeBigUInt64BE(BigInt(at), 24); // offset table offset
  return Buffer.concat([HEADER, ...objects, table, trailer]);
}
