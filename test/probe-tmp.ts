import { startHarness } from './support/harness';
import { artifactBytes, createBuildWithArtifact, put } from './integration/uploads-support';
(async () => {
  const h = await startHarness({ env: { ARTIFACT_STORE: 'fs' } });
  const { appId } = await h.newApp('scale');
  const key = (await h.newKey(appId, ['builds:write', 'builds:read'])).key;
  const { bytes, sha256 } = artifactBytes(100000);
  const build = await createBuildWithArtifact(h, key, bytes, sha256);
  console.log(JSON.stringify(build), build.artifact.uploadUrl.length);
  const res = await put(build.artifact.uploadUrl, bytes);
  console.log(res.status, JSON.stringify(res.body));
  await h.close();
})();
