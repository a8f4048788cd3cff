/**
 * Writes a Brotli and a gzip copy of every asset of a built page (dir/assets/NAME) as dir/compressed/NAME.br and
 * NAME.gz, which src/http/console.ts sends to browsers that accept them. Done once here, at the highest levels
 * (Brotli 11 takes seconds for the explorer: too long for every start, paid once per build here). A copy that saves
 * less than a tenth is not written: the original is sent instead. The copies sit beside assets/, not in it, so
 * they are never served under names of their own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

const WORTH_IT = 0.9;

/**
 * Returns the bytes of the assets as built and as a browser that accepts Brotli receives them. The files are
 * compressed at once on libuv's thread pool, so the explorer's 25 take the time of its largest, not of all of them.
 */
export async function compressAssets(dir: string): Promise<{ raw: number; brotli: number }> {
  const assets = path.join(dir, 'assets');
  const out = path.join(dir, 'compressed');
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const sizes = await Promise.all(
    fs.readdirSync(assets).map(async (name) => {
      const body = fs.readFileSync(path.join(assets, name));
      const [br, gz] = await Promise.all([
        brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
        gzip(body, { level: 9 }),
      ]);
      const worthIt = (copy: Buffer) => copy.length < body.length * WORTH_IT;
      if (worthIt(br)) fs.writeFileSync(path.join(out, `${name}.br`), br);
      if (worthIt(gz)) fs.writeFileSync(path.join(out, `${name}.gz`), gz);
      return { raw: body.length, brotli: worthIt(br) ? br.length : body.length };
    }),
  );
  return { raw: sizes.reduce((n, s) => n + s.raw, 0), brotli: sizes.reduce((n, s) => n + s.brotli, 0) };
}
