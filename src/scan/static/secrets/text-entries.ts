import { LimitExceededError } from '../package/errors';
import { LIMITS } from '../package/limits';
import type { PackageZip } from '../package/zip-reader';
import type { ScanOptions, SecretCollector } from './collector';

/**
 * Files whose names say they are not text (images, audio, video, fonts, archives, native code, models, databases):
 * never opened, nor counted against LIMITS.secretTextFiles. What is left is sniffed: a NUL in its first bytes
 * makes it binary too.
 */
const BINARY_NAME = /\.(png|jpe?g|gif|webp|bmp|ico|heic|avif|ktx2?|astc|pkm|mp3|ogg|oga|wav|m4a|aac|flac|opus|mid|mp4|m4v|webm|mkv|3gp|ttf|otf|ttc|woff2?|so|dex|jar|zip|apk|aab|gz|tgz|bz2|xz|7z|br|zst|tflite|lite|onnx|pt|bin|dat|db|sqlite|realm|pdf|car|nib|mom|omo|cer|der|p12|pfx)$/i;
/** Bytes sniffed for a NUL, as `file` and git do. */
const SNIFF = 8000;
/**
 * Characters of one chunk searched again with the next, so that a value split across two chunks is still found
 * whole: longer than a PEM 4096-bit RSA key (3.3 KB) and every other pattern.
 */
const OVERLAP = 16 * 1024;

/** Counts the text files and bytes searched in one package against their caps. */
export class TextBudget {
  private files = 0;
  private bytes = 0;

  file(name: string): void {
    if (++this.files > LIMITS.secretTextFiles) {
      throw new LimitExceededError('secretTextFiles', `more than ${LIMITS.secretTextFiles} text files to search for secrets (at ${name})`);
    }
  }

  read(name: string, n: number): void {
    this.bytes += n;
    if (this.bytes > LIMITS.secretTextBytes) {
      throw new LimitExceededError('secretTextBytes', `more than ${LIMITS.secretTextBytes} bytes of text files to search for secrets (at ${name})`);
    }
  }
}

export function isBinaryName(name: string): boolean {
  return BINARY_NAME.test(name);
}

/**
 * Searches one entry as text, streamed (memory stays at a chunk and the overlap), as Latin-1: every secret is
 * ASCII, and ASCII bytes read the same in UTF-8. Binary content (a NUL in the first bytes) is skipped; a file
 * larger than LIMITS.secretTextFileBytes is searched up to there only.
 */
export async function scanTextEntry(zip: PackageZip, name: string, collector: SecretCollector, budget: TextBudget, options: ScanOptions = {}): Promise<void> {
  const entry = zip.entry(name);
  if (!entry || isBinaryName(name) || entry.uncompressedSize === 0) return;
  // An entry the app cannot read (another compression method, encrypted) holds nothing it could use.
  if (!zip.readable(name)) return;
  budget.file(name);
  let tail = '';
  let sniffed = 0;
  // The entry is read up to its declared size (one that inflates past it is refused); the search stops earlier.
  await zip.stream(name, 'secretTextFileBytes', entry.uncompressedSize, (chunk, offset) => {
    if (sniffed < SNIFF) {
      const head = chunk.subarray(0, SNIFF - sniffed);
      if (head.indexOf(0) >= 0) return false;
      sniffed += head.length;
    }
    const room = LIMITS.secretTextFileBytes - offset;
    const part = room < chunk.length ? chunk.subarray(0, Math.max(room, 0)) : chunk;
    budget.read(name, part.length);
    const text = tail + part.toString('latin1');
    collector.scan(name, text, { ...options, awsSecretsAnywhere: true });
    tail = text.length > OVERLAP ? text.slice(-OVERLAP) : text;
    return part.length === chunk.length;
  });
}
