/**
 * A section of a JAR manifest or signature file, as apksig's ManifestParser reads it: attributes in order (names
 * compared case-insensitively), and where the section's bytes are, its blank terminating line included, because
 * .SF files sign the manifest's sections byte for byte.
 */
export type ManifestSection = { start: number; size: number; attributes: Array<[string, string]> };

export function attribute(section: ManifestSection, name: string): string | undefined {
  const wanted = name.toLowerCase();
  return section.attributes.find(([n]) => n.toLowerCase() === wanted)?.[1];
}

export function sectionName(section: ManifestSection): string | undefined {
  return attribute(section, 'Name');
}

/**
 * Splits a manifest into its main section and its individual sections. Lines end with CRLF, LF or CR; a line that
 * starts with a space continues the previous one. Linear in the input: each byte is looked at a bounded number of times.
 */
export function parseManifest(bytes: Buffer): { main: ManifestSection | null; sections: ManifestSection[] } {
  const reader = new LineReader(bytes);
  const main = readSection(reader);
  const sections: ManifestSection[] = [];
  for (let s = readSection(reader); s; s = readSection(reader)) sections.push(s);
  return { main, sections };
}

function readSection(reader: LineReader): ManifestSection | null {
  let start: number;
  let attr: string | null;
  do {
    start = reader.offset;
    attr = readAttribute(reader);
    if (attr === null) return null;
  } while (attr.length === 0);
  const attributes: Array<[string, string]> = [parseAttribute(attr)];
  for (;;) {
    attr = readAttribute(reader);
    if (attr === null || attr.length === 0) break;
    attributes.push(parseAttribute(attr));
  }
  return { start, size: reader.offset - start, attributes };
}

/** One logical line: a line and its continuation lines, each without its leading space. */
function readAttribute(reader: LineReader): string | null {
  const first = reader.readLine();
  if (first === null) return null;
  const parts = [first];
  for (;;) {
    const next = reader.peekLine();
    if (next === null || next.length === 0 || next[0] !== 0x20) break;
    reader.readLine();
    parts.push(next.subarray(1));
  }
  return Buffer.concat(parts).toString('utf8');
}

function parseAttribute(line: string): [string, string] {
  const at = line.indexOf(': ');
  return at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 2)];
}

class LineReader {
  offset = 0;
  constructor(private readonly bytes: Buffer) {}

  /** The next line without its terminator, or null at the end; does not move. */
  peekLine(): Buffer | null {
    return this.lineAt(this.offset)?.line ?? null;
  }

  readLine(): Buffer | null {
    const found = this.lineAt(this.offset);
    if (!found) return null;
    this.offset = found.next;
    return found.line;
  }

  private lineAt(from: number): { line: Buffer; next: number } | null {
    if (from >= this.bytes.length) return null;
    let end = from;
    while (end < this.bytes.length && this.bytes[end] !== 0x0a && this.bytes[end] !== 0x0d) end++;
    let next = end;
    if (next < this.bytes.length) next += this.bytes[next] === 0x0d && this.bytes[next + 1] === 0x0a ? 2 : 1;
    return { line: this.bytes.subarray(from, end), next };
  }
}
