// Protects: exported components without permission (explicit, implicit via intent-filter before targetSdk 31,
// providers before API 17), weak custom permissions, launcher exemption, taskAffinity and StrandHogg rules.
import { buildApk, cleanupFixtures } from '../../fixtures/build-packages';
import { ids, manifest, only, scan } from './helpers';

jest.setTimeout(120_000);
afterAll(cleanupFixtures);

const analyse = async (body: string, extra: Parameters<typeof manifest>[0] = {}) =>
  scan(await buildApk({ manifest: manifest({ ...extra, body }), sign: 'none' }));
const FILTER = '<intent-filter><action android:name="com.example.SYNC"/></intent-filter>';

describe('exported components', () => {
  it.each([
    ['activity', 'android.exported-activity', 'medium'],
    ['service', 'android.exported-service', 'medium'],
    ['receiver', 'android.exported-receiver', 'medium'],
  ])('flags an exported %s without permission and not a protected or private one', async (kind, id, severity) => {
    const open = await analyse(`<${kind} android:name=".Thing" android:exported="true"/>`);
    expect(only(open, id)).toMatchObject({ severity });
    expect(only(open, id).detail).toContain('com.example.app.Thing');
    expect(only(open, id).fix).toContain('android:exported="false"');
    const guarded = await analyse(`<${kind} android:name=".Thing" android:exported="true" android:permission="android.permission.BIND_JOB_SERVICE"/>`);
    expect(ids(guarded)).not.toContain(id);
    expect(ids(await analyse(`<${kind} android:name=".Thing" android:exported="false"/>`))).not.toContain(id);
  });

  it('flags an exported provider without read and write permissions as high', async () => {
    const open = await analyse('<provider android:name=".Data" android:authorities="com.example.data" android:exported="true"/>');
    expect(only(open, 'android.exported-provider').severity).toBe('high');
    expect(only(open, 'android.exported-provider').detail).toContain('content://com.example.data');
    const halfOpen = await analyse('<provider android:name=".Data" android:authorities="com.example.data" android:exported="true" android:readPermission="com.example.READ"/>');
    expect(only(halfOpen, 'android.exported-provider').detail).toContain('only reads are protected');
  });

  it('treats a provider without exported attribute as exported when targetSdk <= 16', async () => {
    const body = '<provider android:name=".Data" android:authorities="com.example.data"/>';
    expect(ids(await analyse(body, { minSdk: 16, targetSdk: 16 }))).toContain('android.exported-provider');
    expect(ids(await analyse(body))).not.toContain('android.exported-provider');
  });

  it('treats an intent-filter without exported attribute as exported only below targetSdk 31', async () => {
    const body = `<service android:name=".Sync">${FILTER}</service>`;
    const old = await analyse(body, { targetSdk: 30 });
    expect(only(old, 'android.exported-service').detail).toContain('targetSdk < 31 (here 30)');
    expect(ids(await analyse(body, { targetSdk: 31 }))).not.toContain('android.exported-service');
  });

  it('does not flag the launcher activity', async () => {
    const launcher = '<activity android:name=".Main" android:exported="true"><intent-filter><action android:name="android.intent.action.MAIN"/><category android:name="android.intent.category.LAUNCHER"/></intent-filter></activity>';
    expect(ids(await analyse(launcher))).toEqual(['android.unsigned']);
  });

  it('rates a browsable deep-link activity low and names its links', async () => {
    const deepLink = '<activity android:name=".Link" android:exported="true"><intent-filter><action android:name="android.intent.action.VIEW"/><category android:name="android.intent.category.BROWSABLE"/><category android:name="android.intent.category.DEFAULT"/><data android:scheme="https" android:host="example.com"/></intent-filter></activity>';
    const f = only(await analyse(deepLink), 'android.exported-activity');
    expect(f.severity).toBe('low');
    expect(f.detail).toContain('https://example.com');
  });

  it('flags an exported component guarded by a normal-level permission the app defines', async () => {
    const extra = { manifestExtra: '<permission android:name="com.example.permission.SYNC" android:protectionLevel="normal"/>' };
    const weak = await analyse('<service android:name=".Sync" android:exported="true" android:permission="com.example.permission.SYNC"/>', extra);
    expect(only(weak, 'android.exported-weak-permission').detail).toContain('android:protectionLevel="normal"');
    const strong = await analyse('<service android:name=".Sync" android:exported="true" android:permission="com.example.permission.SYNC"/>',
      { manifestExtra: '<permission android:name="com.example.permission.SYNC" android:protectionLevel="signature"/>' });
    expect(ids(strong)).toEqual(['android.unsigned']);
  });
});

describe('task hijacking', () => {
  it('flags a custom taskAffinity on an exported activity, not on a private one', async () => {
    const f = only(await analyse('<activity android:name=".Pay" android:exported="true" android:permission="com.example.P" android:taskAffinity="com.other.task"/>'), 'android.task-affinity');
    expect(f.detail).toContain('android:taskAffinity="com.other.task"');
    expect(ids(await analyse('<activity android:name=".Pay" android:exported="false" android:taskAffinity="com.other.task"/>'))).not.toContain('android.task-affinity');
  });

  it('flags singleTask with the default affinity while minSdk < 30, not with taskAffinity=""', async () => {
    const body = '<activity android:name=".Login" android:launchMode="singleTask"/>';
    const f = only(await analyse(body), 'android.task-hijacking');
    expect(f.detail).toContain('android:launchMode="singleTask"');
    expect(f.detail).toContain('task affinity "com.example.app"');
    expect(ids(await analyse('<activity android:name=".Login" android:launchMode="singleTask" android:taskAffinity=""/>'))).not.toContain('android.task-hijacking');
    expect(ids(await analyse(body, { application: { 'android:taskAffinity': '' } }))).not.toContain('android.task-hijacking');
    expect(ids(await analyse(body, { minSdk: 30 }))).not.toContain('android.task-hijacking');
    expect(ids(await analyse('<activity android:name=".Login" android:launchMode="standard"/>'))).not.toContain('android.task-hijacking');
  });
});
