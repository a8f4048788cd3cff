/**
 * Largest entry the analyser will inflate, per kind. Real manifests are kilobytes; the caps stop a
 * zip bomb (a tiny entry declaring or inflating to gigabytes) from exhausting memory.
 */
export const LIMITS = {
  manifest: 8 * 1024 * 1024,
  resourceTable: 32 * 1024 * 1024,
  resourceXml: 1024 * 1024,
  signatureFile: 1024 * 1024,
  plist: 8 * 1024 * 1024,
  provisioningProfile: 1024 * 1024,
} as const;
