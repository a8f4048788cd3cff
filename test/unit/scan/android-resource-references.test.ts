// Protects: manifest attributes written as resource references (@bool, @integer, @string, @xml) are resolved through
// resources.arsc before the rules read them, in every configuration (a flag is judged by its worst value, another
// rule attribute that differs between configurations is unreadable), following chains as the platform does; the
// expected value of every attribute is aapt's reading of the same package. Hostile tables (truncated, mutated, self-referencing, oversized) end in a value, a refusal or a
// limit, never a hang.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LimitExceededError, UnreadablePackageError } from '../../../src/scan/static/package/errors';
import { LIMITS } from '../../../src/scan/static/package/limits';
import { ProtoResourceTable } from '../../../src/scan/static/android/proto-resource-table';
import { MAX_REFERENCE_HOPS, ResourceTable } from '../../../src/scan/static/android/resource-table';
import { AAPT_TYPE, aaptAttribute, aaptAttributeValues, aaptBool, aaptInt, buildResourceAab, buildResourceApk, cleanupResourceFixtures, type ResFiles } from '../../fixtures/resource-packages';
import { stringPoolChunk, utf16Strings } from './craft';
import { ids, only, scan } from './helpers';
import { runSync } from '../../support/host-tools';

jest.setTimeout(120_000);
afterAll(cleanupResourceFixtures);

/** A manifest with no finding of its own unless an attribute given here says otherwise. */
function manifest(opts: { app?: Record<string, string>; sdk?: Record<string, string>; versionCode?: string; versionName?: string; body?: string } = {}): string {
  const attrs = (o: Record<string, string>) => Object.entries(o).map(([k, v]) => ` android:${k}="${v}"`).join('');
  return `<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="com.example.refs"
    android:versionCode="${opts.versionCode ?? '1'}" android:versionName="${opts.versionName ?? '1.0'}">
  <uses-sdk${attrs({ minSdkVersion: '26', targetSdkVersion: '35', ...opts.sdk })}/>
  <application android:label="Refs"${attrs({ allowBackup: 'false', ...opts.app })}>${opts.body ?? ''}</application>
</manifest>
`;
}

const values = (items: string) => ({ 'values/values.xml': `<resources>${items}</resources>` });
const build = (m: string, res: ResFiles) => buildResourceApk(m, res);

describe('manifest attributes given as resource references (APK)', () => {
  it('debuggable via @bool true in the default configuration is debuggable, whatever values-v21 says', async () => {
    const apk = await build(manifest({ app: { debuggable: '@bool/dbg' } }), {
      ...values('<bool name="dbg">true</bool>'),
      'values-v21/values.xml': '<resources><bool name="dbg">false</bool></resources>',
    });
    const expected = aaptBool(await aaptAttribute(apk, 'application', 'debuggable'));
    expect(expected).toBe(true);
    const r = await scan(apk);
    expect(ids(r).includes('android.debuggable')).toBe(expected);
    expect(only(r, 'android.debuggable').detail).toContain('android:debuggable="@bool/dbg" (resolves to true)');
  });

  it('debuggable via @bool false is not debuggable', async () => {
    const apk = await build(manifest({ app: { debuggable: '@bool/dbg' } }), values('<bool name="dbg">false</bool>'));
    const expected = aaptBool(await aaptAttribute(apk, 'application', 'debuggable'));
    expect(expected).toBe(false);
    expect(ids(await scan(apk)).includes('android.debuggable')).toBe(expected);
  });

  it('follows a chain of references (bool -> bool -> bool)', async () => {
    const apk = await build(manifest({ app: { debuggable: '@bool/outer' } }),
      values('<bool name="outer">@bool/middle</bool><bool name="middle">@bool/inner</bool><bool name="inner">true</bool>'));
    const expected = aaptBool(await aaptAttribute(apk, 'application', 'debuggable'));
    expect(expected).toBe(true);
    expect(ids(await scan(apk)).includes('android.debuggable')).toBe(expected);
  });

  it('judges every configuration when the default configuration has no value', async () => {
    const apk = await build(manifest({ app: { debuggable: '@bool/dbg' } }), {
      'values-v21/values.xml': '<resources><bool name="dbg">true</bool></resources>',
      'values-v23/values.xml': '<resources><bool name="dbg">false</bool></resources>',
    });
    const all = (await aaptAttributeValues(apk, 'application', 'debuggable'))!.map(aaptBool);
    expect(all.sort()).toEqual([false, true]);
    expect(ids(await scan(apk)).includes('android.debuggable')).toBe(all.includes(true));
  });

  it('debuggable false by default but true in values-v26 is debuggable: devices of API 26 and later read true', async () => {
    const apk = await build(manifest({ app: { debuggable: '@bool/dbg' } }), {
      ...values('<bool name="dbg">false</bool>'),
      'values-v26/values.xml': '<resources><bool name="dbg">true</bool></resources>',
    });
    expect(aaptBool(await aaptAttribute(apk, 'application', 'debuggable'))).toBe(false); // the default configuration alone
    const all = (await aaptAttributeValues(apk, 'application', 'debuggable'))!.map(aaptBool);
    expect(all).toContain(true);
    const r = await scan(apk);
    expect(only(r, 'android.debuggable').detail).toContain('android:debuggable="@bool/dbg" (resolves to true)');
  });

  it('a flag true only in a configuration reached through a chain of references counts', async () => {
    const apk = await build(manifest({ app: { usesCleartextTraffic: '@bool/outer' } }), {
      ...values('<bool name="outer">@bool/inner</bool><bool name="inner">false</bool>'),
      'values-night/values.xml': '<resources><bool name="inner">true</bool></resources>',
    });
    const all = (await aaptAttributeValues(apk, 'application', 'usesCleartextTraffic'))!.map(aaptBool);
    expect(all.sort()).toEqual([false, true]);
    expect(only(await scan(apk), 'android.cleartext-traffic').severity).toBe('high');
  });

  it('a rule attribute whose value differs between configurations is unreadable', async () => {
    const apk = await build(manifest({ body: '<activity android:name=".Main" android:exported="true" android:permission="@string/perm"/>' }), {
      ...values('<string name="perm">com.example.refs.PRIVATE</string>'),
      'values-fr/values.xml': '<resources><string name="perm">com.example.refs.OPEN</string></resources>',
    });
    const all = (await aaptAttributeValues(apk, 'activity', 'permission'))!.map((v) => v.string);
    expect(all.sort()).toEqual(['com.example.refs.OPEN', 'com.example.refs.PRIVATE']);
    const r = await scan(apk);
    expect(ids(r)).toEqual(['package.unreadable']);
    expect(r.findings[0].detail).toContain('android:permission="@string/perm"> has different values in different resource configurations');
  });

  it('allowBackup via @bool: false keeps backup off, true is flagged', async () => {
    for (const flag of ['false', 'true']) {
      const apk = await build(manifest({ app: { allowBackup: '@bool/backup' } }), values(`<bool name="backup">${flag}</bool>`));
      const allowed = aaptBool(await aaptAttribute(apk, 'application', 'allowBackup'));
      expect(allowed).toBe(flag === 'true');
      const r = await scan(apk);
      expect(ids(r).includes('android.allow-backup')).toBe(allowed);
      if (allowed) expect(only(r, 'android.allow-backup').detail).toContain('android:allowBackup="@bool/backup" (resolves to true)');
    }
  });

  it('exported on a component via @bool', async () => {
    for (const flag of ['true', 'false']) {
      const apk = await build(manifest({ body: '<receiver android:name=".Sync" android:exported="@bool/shared"/>' }), values(`<bool name="shared">${flag}</bool>`));
      const exported = aaptBool(await aaptAttribute(apk, 'receiver', 'exported'));
      expect(exported).toBe(flag === 'true');
      const r = await scan(apk);
      expect(ids(r).includes('android.exported-receiver')).toBe(exported);
      if (exported) expect(only(r, 'android.exported-receiver').detail).toContain('android:exported="@bool/shared"');
    }
  });

  it('usesCleartextTraffic via @bool', async () => {
    for (const flag of ['true', 'false']) {
      const apk = await build(manifest({ app: { usesCleartextTraffic: '@bool/clear' } }), values(`<bool name="clear">${flag}</bool>`));
      const cleartext = aaptBool(await aaptAttribute(apk, 'application', 'usesCleartextTraffic'));
      expect(ids(await scan(apk)).includes('android.cleartext-traffic')).toBe(cleartext);
    }
  });

  it('minSdkVersion and targetSdkVersion via @integer (decimal and hex)', async () => {
    const apk = await build(manifest({ sdk: { minSdkVersion: '@integer/min', targetSdkVersion: '@integer/target' } }),
      values('<integer name="min">19</integer><integer name="target">0x1e</integer>'));
    const min = aaptInt(await aaptAttribute(apk, 'uses-sdk', 'minSdkVersion'));
    const target = aaptInt(await aaptAttribute(apk, 'uses-sdk', 'targetSdkVersion'));
    expect([min, target]).toEqual([19, 30]);
    const r = await scan(apk);
    expect(only(r, 'android.min-sdk').detail).toContain(`minSdkVersion is ${min}`);
    expect(only(r, 'android.target-sdk').detail).toContain(`targetSdkVersion is ${target}`);
  });

  it('versionName via @string names the scan target version', async () => {
    const apk = await build(manifest({ versionName: '@string/version' }), values('<string name="version">4.5.6-rc1</string>'));
    const version = await aaptAttribute(apk, 'manifest', 'versionName');
    expect(version?.type).toBe(AAPT_TYPE.string);
    expect((await scan(apk)).target).toEqual({ name: 'com.example.refs', version: version?.string, versionCode: 1 });
  });

  it('versionCode via @integer is the code the table gives (the version code a device attests)', async () => {
    const apk = await build(manifest({ versionCode: '@integer/code' }), values('<integer name="code">0x2a</integer>'));
    const code = aaptInt(await aaptAttribute(apk, 'manifest', 'versionCode'));
    expect(code).toBe(42);
    expect((await scan(apk)).target.versionCode).toBe(code);
  });

  it('networkSecurityConfig via @xml opens the file the table names', async () => {
    const apk = await build(manifest({ app: { networkSecurityConfig: '@xml/net_rules' } }), {
      'xml/net_rules.xml': '<network-security-config><base-config cleartextTrafficPermitted="true"/></network-security-config>',
    });
    const file = await aaptAttribute(apk, 'application', 'networkSecurityConfig');
    expect(file?.type).toBe(AAPT_TYPE.string);
    expect(only(await scan(apk), 'android.nsc-cleartext').detail).toContain(`${file?.string}:`);
  });

  it('networkSecurityConfig reads every configuration\'s file: a cleartext config only in xml-v24 counts', async () => {
    const apk = await build(manifest({ app: { networkSecurityConfig: '@xml/net_rules' } }), {
      'xml/net_rules.xml': '<network-security-config><base-config cleartextTrafficPermitted="false"/></network-security-config>',
      'xml-v24/net_rules.xml': '<network-security-config><base-config cleartextTrafficPermitted="true"/></network-security-config>',
    });
    const files = (await aaptAttributeValues(apk, 'application', 'networkSecurityConfig'))!.map((v) => v.string!);
    expect(files.sort()).toEqual(['res/xml-v24/net_rules.xml', 'res/xml/net_rules.xml']);
    const r = await scan(apk);
    expect(only(r, 'android.nsc-cleartext').detail).toContain('res/xml-v24/net_rules.xml:');
  });

  it('a malformed resources.arsc makes a package with references unreadable, as it is for the platform', async () => {
    const apk = await build(manifest({ app: { debuggable: '@bool/dbg' } }), values('<bool name="dbg">true</bool>'));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'shieldgate-arsc-'));
    const arsc = runSync('unzip', ['-p', apk, 'resources.arsc']);
    const broken = Buffer.from(arsc);
    broken.writeUInt32LE(arsc.length * 4, 8 + 4 + 4); // the global string pool's size now overruns the table
    writeFileSync(path.join(dir, 'resources.arsc'), broken);
    runSync('zip', ['-q', apk, 'resources.arsc'], { cwd: dir });
    expect(ids(await scan(apk))).toEqual(['package.unreadable']);
  });
});

describe('manifest attributes given as resource references (App Bundle, resources.pb)', () => {
  // aapt2 refuses references in uses-sdk and in versionCode ("compiled value is not an integer") when it converts to
  // protobuf, so bundles are tested on the other attributes.
  it('resolves @bool, @string and @xml through the base module\'s resources.pb as aapt reads the APK it came from', async () => {
    const { aab, apk } = await buildResourceAab(manifest({
      versionName: '@string/version',
      app: { debuggable: '@bool/outer', allowBackup: '@bool/backup', usesCleartextTraffic: '@bool/clear', networkSecurityConfig: '@xml/net_rules' },
      body: '<service android:name=".Sync" android:exported="@bool/shared"/>',
    }), {
      ...values('<bool name="outer">@bool/inner</bool><bool name="inner">true</bool><bool name="backup">false</bool>' +
        '<bool name="clear">true</bool><bool name="shared">true</bool><string name="version">7.0-beta</string>'),
      'values-v21/values.xml': '<resources><bool name="inner">false</bool><bool name="shared">false</bool></resources>',
      'xml/net_rules.xml': '<network-security-config><base-config cleartextTrafficPermitted="true"/></network-security-config>',
    });
    const r = await scan(aab);
    const found = ids(r);
    // A flag is judged by its worst value over every configuration.
    const anyTrue = async (element: string, attr: string) => (await aaptAttributeValues(apk, element, attr))!.map(aaptBool).includes(true);
    expect(found.includes('android.debuggable')).toBe(await anyTrue('application', 'debuggable'));
    expect(found.includes('android.allow-backup')).toBe(await anyTrue('application', 'allowBackup'));
    expect(found.includes('android.exported-service')).toBe(await anyTrue('service', 'exported'));
    // With a network security config and minSdk 26 the config decides cleartext; the manifest flag is moot.
    expect(found).not.toContain('android.cleartext-traffic');
    const file = await aaptAttribute(apk, 'application', 'networkSecurityConfig');
    expect(only(r, 'android.nsc-cleartext').detail).toContain(`base/${file?.string}:`);
    expect(r.target.version).toBe((await aaptAttribute(apk, 'manifest', 'versionName'))?.string);
    expect(found).toEqual(expect.arrayContaining(['android.debuggable', 'android.exported-service']));
  });
});

// A resources.arsc built byte by byte after ResourceTypes.h: one package 0x7f with one type ("bool", id 1) whose
// entries hold the given Res_values, in a default-configuration type chunk (or `chunks` copies of it).
const u16 = (n: number) => { const b = Buffer.alloc(2); b.writeUInt16LE(n); return b; };
const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(n >>> 0); return b; };
const chunkOf = (type: number, header: Buffer, body: Buffer) => Buffer.concat([u16(type), u16(8 + header.length), u32(8 + header.length + body.length), header, body]);

function pool(strings: string[]): Buffer {
  const { offsets, data } = utf16Strings(strings);
  return stringPoolChunk(offsets, data);
}

function typeChunk(values: Array<{ type: number; data: number }>, typeId = 1): Buffer {
  const config = Buffer.concat([u32(64), Buffer.alloc(60)]);
  const header = Buffer.concat([Buffer.from([typeId, 0]), u16(0), u32(values.length), u32(8 + 12 + config.length + values.length * 4), config]);
  const offsets = Buffer.concat(values.map((_, i) => u32(i * 16)));
  const entries = Buffer.concat(values.map((v, i) => Buffer.concat([u16(8), u16(0), u32(i), u16(8), Buffer.from([0, v.type]), u32(v.data)])));
  return chunkOf(0x0201, header, Buffer.concat([offsets, entries]));
}

function packageChunk(types: Buffer[], id = 0x7f): Buffer {
  const typeNames = pool(['bool']);
  const keyNames = pool(['k']);
  const header = Buffer.concat([u32(id), Buffer.alloc(256), u32(288), u32(0), u32(288 + typeNames.length), u32(0), u32(0)]);
  return chunkOf(0x0200, header, Buffer.concat([typeNames, keyNames, ...types]));
}

function table(packages: Buffer[]): Buffer {
  return chunkOf(0x0002, u32(packages.length), Buffer.concat([pool([]), ...packages]));
}

const REF = 0x01;
const BOOL = 0x12;
const id = (entry: number) => 0x7f010000 | entry;
/** Entry i references entry i+1, `hops` times, and the last entry is true. */
const chain = (hops: number) => table([packageChunk([typeChunk([...Array.from({ length: hops }, (_, i) => ({ type: REF, data: id(i + 1) })), { type: BOOL, data: 1 }])])]);

function settle(fn: () => unknown): 'ok' | 'refused' {
  try {
    fn();
    return 'ok';
  } catch (err) {
    if (err instanceof UnreadablePackageError || err instanceof LimitExceededError) return 'refused';
    throw err;
  }
}

describe('hostile resource tables', () => {
  it('reads a crafted table as aapt writes one', () => {
    expect(new ResourceTable(chain(0)).resolve(id(0))).toEqual({ name: 'bool/k', values: [{ type: 'bool', value: true }] });
  });

  it('a reference to itself, or a loop of two, ends unresolved at once', () => {
    const self = new ResourceTable(table([packageChunk([typeChunk([{ type: REF, data: id(0) }])])]));
    expect(self.resolve(id(0)).values).toEqual([null]);
    const loop = new ResourceTable(table([packageChunk([typeChunk([{ type: REF, data: id(1) }, { type: REF, data: id(0) }])])]));
    expect(loop.resolve(id(0)).values).toEqual([null]);
    expect(loop.resolve(id(1)).values).toEqual([null]);
  });

  it('follows as many references as the platform does and no more', () => {
    expect(new ResourceTable(chain(MAX_REFERENCE_HOPS)).resolve(id(0)).values).toEqual([{ type: 'bool', value: true }]);
    expect(new ResourceTable(chain(MAX_REFERENCE_HOPS + 1)).resolve(id(0)).values).toEqual([null]);
  });

  it('every truncation and 3,000 seeded byte mutations of a table end in a value or a refusal', () => {
    const good = chain(3);
    for (let n = 0; n < good.length; n++) {
      const cut = Buffer.from(good.subarray(0, n));
      expect(settle(() => new ResourceTable(cut).resolve(id(0)))).toBeDefined();
    }
    let seed = 20;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 8;
    for (let i = 0; i < 3_000; i++) {
      const bad = Buffer.from(good);
      for (let k = 0; k < 1 + (i % 4); k++) bad[next() % bad.length] = next() & 0xff;
      expect(settle(() => { const t = new ResourceTable(bad); for (let e = 0; e < 5; e++) t.resolve(id(e)); })).toBeDefined();
    }
  });

  it('stops at the package, type-chunk and entries-read caps', () => {
    const packages = Array.from({ length: LIMITS.resourcePackages + 1 }, (_, i) => packageChunk([], 0x10 + i));
    expect(settle(() => new ResourceTable(table(packages)))).toBe('refused');
    expect(() => new ResourceTable(table(packages))).toThrow(expect.objectContaining({ limit: 'resourcePackages' }));
    const empty = typeChunk([]);
    const many = table([packageChunk(Array.from({ length: LIMITS.resourceTypeChunks + 1 }, () => empty))]);
    expect(() => new ResourceTable(many)).toThrow(expect.objectContaining({ limit: 'resourceTypeChunks' }));
    // Every look-up reads one slot in each of the type's chunks: enough distinct ids exceed the read cap.
    const chunks = LIMITS.resourceTypeChunks - 1;
    const wide = new ResourceTable(table([packageChunk(Array.from({ length: chunks }, () => empty))]));
    expect(() => { for (let e = 0; e <= LIMITS.resourceEntriesRead / chunks; e++) wide.resolve(id(e)); }).toThrow(expect.objectContaining({ limit: 'resourceEntriesRead' }));
  });
});

// A resources.pb built field by field after aapt2's Resources.proto: package 0x7f, type 1 "bool", entries by id.
const varint = (n: number): Buffer => { const out: number[] = []; for (; n > 0x7f; n = Math.floor(n / 128)) out.push((n & 0x7f) | 0x80); out.push(n); return Buffer.from(out); };
const field = (n: number, body: Buffer | number): Buffer => (typeof body === 'number'
  ? Buffer.concat([varint(n * 8), varint(body)])
  : Buffer.concat([varint(n * 8 + 2), varint(body.length), body]));
const pbEntry = (entry: number, item: Buffer) => field(3, Buffer.concat([field(1, field(1, entry)), field(2, Buffer.from('e')), field(6, field(2, field(4, item)))]));
const pbRef = (target: number) => field(1, field(2, target));
const pbTable = (entries: Buffer[]) => field(2, Buffer.concat([field(1, field(1, 0x7f)), field(3, Buffer.concat([field(1, field(1, 1)), field(2, Buffer.from('bool')), ...entries]))]));

describe('hostile resources.pb', () => {
  it('reads a crafted table, and a reference to itself or a loop ends unresolved', () => {
    const t = new ProtoResourceTable(pbTable([pbEntry(0, field(7, field(8, 1))), pbEntry(1, pbRef(id(1))), pbEntry(2, pbRef(id(3))), pbEntry(3, pbRef(id(2)))]));
    expect(t.resolve(id(0))).toEqual({ name: 'bool/e', values: [{ type: 'bool', value: true }] });
    expect(t.resolve(id(1)).values).toEqual([null]);
    expect(t.resolve(id(2)).values).toEqual([null]);
  });

  it('follows as many references as the platform does and no more', () => {
    const pbChain = (hops: number) => pbTable([...Array.from({ length: hops }, (_, i) => pbEntry(i, pbRef(id(i + 1)))), pbEntry(hops, field(7, field(8, 1)))]);
    expect(new ProtoResourceTable(pbChain(MAX_REFERENCE_HOPS)).resolve(id(0)).values).toEqual([{ type: 'bool', value: true }]);
    expect(new ProtoResourceTable(pbChain(MAX_REFERENCE_HOPS + 1)).resolve(id(0)).values).toEqual([null]);
  });

  it('every truncation and 3,000 seeded byte mutations end in a value or a refusal', () => {
    const good = pbTable([pbEntry(0, pbRef(id(1))), pbEntry(1, field(7, field(6, 19))), pbEntry(2, field(2, field(1, Buffer.from('x'))))]);
    for (let n = 0; n < good.length; n++) {
      const cut = Buffer.from(good.subarray(0, n));
      expect(settle(() => new ProtoResourceTable(cut).resolve(id(0)))).toBeDefined();
    }
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 8;
    for (let i = 0; i < 3_000; i++) {
      const bad = Buffer.from(good);
      for (let k = 0; k < 1 + (i % 4); k++) bad[next() % bad.length] = next() & 0xff;
      expect(settle(() => { const t = new ProtoResourceTable(bad); for (let e = 0; e < 4; e++) t.resolve(id(e)); })).toBeDefined();
    }
  });

  it('stops at the entries-read cap however the entries are laid out', () => {
    const filler = field(3, field(1, field(1, 0xfffe)));
    const wide = new ProtoResourceTable(pbTable(Array.from({ length: LIMITS.resourceEntriesRead / 2 + 1 }, () => filler)));
    expect(() => wide.resolve(id(1))).toThrow(expect.objectContaining({ limit: 'resourceEntriesRead' }));
  });
});
