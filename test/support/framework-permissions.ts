import { FRAMEWORK_RES } from '../fixtures/build-packages';
import { runSync } from './host-tools';

/**
 * The platform permissions and their protection levels as the platform itself declares them, read with
 * `aapt dump xmltree` from framework-res.apk: the oracle for which permissions are runtime ("dangerous") ones.
 * `level` is android:protectionLevel as an integer; its low 4 bits are the base level (1 = dangerous).
 */
export function frameworkPermissions(): Array<{ name: string; level: number }> {
  const tree = runSync('aapt', ['dump', 'xmltree', FRAMEWORK_RES, 'AndroidManifest.xml'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const out: Array<{ name: string; level: number }> = [];
  let current: { name?: string; level?: number } | null = null;
  const flush = () => { if (current?.name !== undefined && current.level !== undefined) out.push({ name: current.name, level: current.level }); };
  for (const line of tree.split('\n')) {
    const element = /^\s*E: (\S+)/.exec(line);
    if (element) {
      flush();
      current = element[1] === 'permission' ? {} : null;
      continue;
    }
    if (!current) continue;
    const name = /A: android:name\(0x[0-9a-f]+\)="([^"]+)"/.exec(line);
    if (name) current.name = name[1];
    const level = /A: android:protectionLevel\(0x[0-9a-f]+\)=\(type 0x11\)0x([0-9a-f]+)/.exec(line);
    if (level) current.level = parseInt(level[1], 16);
  }
  flush();
  return out;
}

export const isDangerous = (level: number) => (level & 0xf) === 1;
