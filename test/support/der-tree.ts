/**
 * DER as a tree that tests can edit and write back (definite lengths only, single-byte tags): enough to re-encode
 * a part of a real PKCS#7 block, such as the issuer name of its SignerInfo, and keep every other byte as it was.
 */
export type DerNode = { tag: number; content: Buffer; children: DerNode[] | null };

/** Parses one TLV at `at`; constructed values (bit 0x20) are parsed into children. */
export function parseDer(buf: Buffer, at = 0): { node: DerNode; end: number } {
  const tag = buf[at];
  let p = at + 1;
  let length = buf[p++];
  if (length & 0x80) {
    const n = length & 0x7f;
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + buf[p++];
  }
  const content = buf.subarray(p, p + length);
  let children: DerNode[] | null = null;
  if (tag & 0x20) {
    children = [];
    for (let q = 0; q < content.length; ) {
      const child = parseDer(content, q);
      children.push(child.node);
      q = child.end;
    }
  }
  return { node: { tag, content, children }, end: p + length };
}

/** Encodes a node (its children when constructed, else its content) in DER. */
export function writeDer(node: DerNode): Buffer {
  const content = node.children ? Buffer.concat(node.children.map(writeDer)) : node.content;
  const n = content.length;
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : n < 0x10000 ? Buffer.from([0x82, n >> 8, n & 0xff]) : Buffer.from([0x83, n >> 16, (n >> 8) & 0xff, n & 0xff]);
  return Buffer.concat([Buffer.from([node.tag]), length, content]);
}

/** The node at a path of child indexes (negative counts from the end). */
export function nodeAt(root: DerNode, path: number[]): DerNode {
  let node = root;
  for (const i of path) {
    const kids = node.children!;
    node = kids[i < 0 ? kids.length + i : i];
  }
  return node;
}
