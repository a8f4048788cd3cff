/**
 * Writes a Brotli and a gzip copy of every asset of a built page (dir/assets/NAME) as dir/compressed/NAME.br and
 * NAME.gz, which src/http/console.ts sends to browsers that accept them. Done once here, at the highest levels
 * (Brotli 11 takes seconds for the explorer: far too long at every start, nothing at build time). A copy that saves
 * less than a tenth is not written: the original is sent instead. The copies sit beside assets/, not in it, so
 * they are never served under names of their own.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const WORTH_IT = 0.9;

/** Returns the bytes of the assets as built and as a browser that accepts Brotli receives them. */
export function compressAssets(dir: string): { raw: number; brotli: number } {
  const assets = path.join(dir, 'assets');
  const out = path.join(dir, 'compressed');
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  let raw = 0;
  let brotli = 0;
  for (const name of fs.readdirSync(assets)) {
    const body = fs.readFileSync(path.join(assets, name));
    const br = zlib.brotliCompressSync(body, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    });
    const gz = zlib.gzipSync(body, { level: 9 });
    raw += body.length;
    brotli += br.length < body.length * WORTH_IT ? br.length : body.length;
    if (br.length < body.length * WORTH_IT) fs.writeFileSync(path.join(out, `${name}.br`), br);
    if (gz.length < body.length * WORTH_IT) fs.writeFileSync(path.join(out, `${name}.gz`), gz);
  }
  return { raw, brotli };
}
