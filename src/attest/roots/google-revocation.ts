/**
 * The built-in snapshot of Google's attestation revocation list, as the text of a status.json (the CONTRACT: a
 * built-in snapshot, replaced by ATTEST_REVOCATION_LIST; both are read by parseRevocationList). It is NOT Google's
 * current list and cannot be: the list lives at https://android.googleapis.com/attestation/status, changes as Google
 * revokes keys, and holds well over a thousand entries, while this service never fetches anything and was built
 * where that address cannot be reached.
 * An operator who relies on key attestation must download that file regularly and point ATTEST_REVOCATION_LIST at it.
 *
 * What is here: the four entries of the list that google/android-key-attestation (Apache-2.0, commit f9846cd,
 * src/test/resources/status.json) copied from the live list: 64-bit serials, which the live list writes in decimal
 * (6681152659205225093 is the certificate serial 0x5cb838f1fe157a85; see revocationStatus). Published copies of the
 * live list show all four on it, two of them still in 2026. That file's fifth entry (serial
 * cc66e9a93713b6e643b26c15879786f7, SUSPENDED, "Entry for testing only") is a test value and is left out: nothing shows
 * it on Google's list, and it names a TEE intermediate, so keeping it could refuse devices Google never listed.
 */
export const GOOGLE_REVOCATION_SNAPSHOT = `{
  "entries": {
    "6681152659205225093": { "status": "REVOKED", "reason": "KEY_COMPROMISE" },
    "8350192447815228107": { "status": "REVOKED", "reason": "KEY_COMPROMISE" },
    "9408173275444922801": { "status": "REVOKED", "reason": "KEY_COMPROMISE" },
    "11244410301401252959": { "status": "REVOKED", "reason": "KEY_COMPROMISE" }
  }
}`;
