// Protects: the preview engine flags missing/abbreviated/branch commits, debug and placeholder versions,
// undeclared or empty artifacts and test or long-lived keys, each with a fix; clean metadata from OIDC is clean.
import { previewFindings, type PreviewMeta } from '../../../src/scan/preview';

const SHA = 'a'.repeat(40);
const clean: PreviewMeta = {
  platform: 'android',
  version: '1.4.2',
  commit: SHA,
  artifact: { sizeBytes: 1234, sha256: 'b'.repeat(64) },
  keyMode: 'oidc',
};
const ids = (meta: Partial<PreviewMeta>) => previewFindings({ ...clean, ...meta }).map((f) => f.id);
const find = (meta: Partial<PreviewMeta>, id: string) => previewFindings({ ...clean, ...meta }).find((f) => f.id === id);

describe('previewFindings', () => {
  it('reports nothing for a release registered from CI with a full commit and an artifact', () => {
    expect(previewFindings(clean)).toEqual([]);
    expect(ids({ commit: 'c'.repeat(64) })).toEqual([]);
  });

  it('flags a missing commit', () => {
    expect(ids({ commit: null })).toEqual(['preview.commit-missing']);
    expect(ids({ commit: '  ' })).toEqual(['preview.commit-missing']);
  });

  it('tells an abbreviated SHA from a branch name', () => {
    expect(find({ commit: 'a1b2c3d' }, 'preview.commit-abbreviated')?.detail).toContain('7 hex digits');
    expect(find({ commit: 'main' }, 'preview.commit-not-sha')?.severity).toBe('medium');
    expect(ids({ commit: 'refs/heads/release' })).toEqual(['preview.commit-not-sha']);
  });

  it.each(['1.0.0-SNAPSHOT', '2.3-debug', '1.2.0-dev', '1.2.0-dev3', '4.0+dirty', 'local'])(
    'flags debug-looking version %s',
    (version) => {
      expect(ids({ version })).toEqual(['preview.version-debug']);
    },
  );

  it('rates a debug version high with a production credential and low with a test key', () => {
    expect(find({ version: '1.0-SNAPSHOT' }, 'preview.version-debug')?.severity).toBe('high');
    expect(find({ version: '1.0-SNAPSHOT', keyMode: 'test' }, 'preview.version-debug')?.severity).toBe('low');
  });

  it('does not mistake words containing a marker for the marker', () => {
    expect(ids({ version: '3.1.0-devices' })).toEqual([]);
    expect(ids({ version: '1.0.0' })).toEqual([]);
  });

  it.each(['0.0.0', '0.0', 'v0.0.0'])('flags placeholder version %s', (version) => {
    expect(ids({ version })).toEqual(['preview.version-placeholder']);
  });

  it('flags a pre-release registered with a live key only', () => {
    expect(ids({ version: '2.0.0-rc1', keyMode: 'live' })).toContain('preview.version-prerelease');
    expect(ids({ version: '2.0.0-rc1' })).toEqual([]);
  });

  it('flags an undeclared artifact and an empty-file hash', () => {
    expect(ids({ artifact: null })).toEqual(['preview.artifact-undeclared']);
    const empty = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    expect(ids({ artifact: { sizeBytes: 10, sha256: empty } })).toEqual(['preview.artifact-empty-hash']);
  });

  it('flags test keys and long-lived live keys', () => {
    expect(ids({ keyMode: 'test' })).toEqual(['preview.test-key']);
    expect(ids({ keyMode: 'live' })).toEqual(['preview.long-lived-key']);
  });

  it('gives every finding a non-empty title, detail and fix', () => {
    const all = previewFindings({ platform: 'ios', version: '0.0.0', commit: null, artifact: null, keyMode: 'test' });
    expect(all.length).toBeGreaterThan(2);
    for (const f of all) {
      expect(f.title && f.detail && f.fix).toBeTruthy();
      expect(f.id).toMatch(/^preview\.[a-z-]+$/);
    }
  });
});
