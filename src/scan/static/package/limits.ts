/**
 * Every cap the static analyser puts on a package, in one place, each with the reason for its value.
 * A package that reaches one is not analysed further: its scan ends with a `scan.incomplete` finding
 * naming the limit (see incomplete.ts), and such a scan scores 0 (see score.ts).
 * Real packages stay far below every value here; the caps exist because every byte of an upload may be
 * written by an attacker who has read this code.
 */
export const LIMITS = {
  // Largest entry inflated, per kind. Real manifests and plists are kilobytes; the caps stop a zip bomb
  // (a tiny entry declaring or inflating to gigabytes) from exhausting memory.
  manifest: 8 * 1024 * 1024,
  resourceTable: 32 * 1024 * 1024,
  resourceXml: 1024 * 1024,
  signatureFile: 1024 * 1024,
  plist: 8 * 1024 * 1024,
  provisioningProfile: 1024 * 1024,

  /**
   * Central-directory records walked. 65,535 is the most a zip without Zip64 holds, which is what aapt2,
   * bundletool and Xcode write for real apps. A record kept (every res/*.xml, signature file, manifest and plist)
   * is its name and six numbers, about 150 bytes of heap plus the name; none of the record's bytes are kept (see
   * EntryRecord in zip-reader.ts).
   */
  zipEntries: 65_535,
  /** APK Signing Block bytes read: real blocks are kilobytes (plus 4 KiB of verity padding). */
  signingBlock: 16 * 1024 * 1024,
  /**
   * Central directory bytes read whole by the signature check: 65,535 records with 100-character names are 9 MB;
   * names, extra fields and comments of 64 KB each are what would make it larger, and nothing real has them.
   */
  centralDirectory: 32 * 1024 * 1024,
  /**
   * Uncompressed bytes the JAR (v1) check may digest across all entries, as the entries declare them (inflation stops
   * at the declared size). A 500 MB APK of compressible content holds a few GB; a bomb declaring more stops here
   * before any of it is inflated.
   */
  signedContentBytes: 8 * 1024 * 1024 * 1024,
  /** ID-value pairs of the APK Signing Block looked at: a real block has a handful (v2, v3, v3.1, padding, stamp). */
  signingBlockPairs: 64,
  /** Packages indexed in one resources.arsc: an app has one (0x7f), plus one per shared library built into it. */
  resourcePackages: 16,
  /**
   * Type chunks (one per resource type and configuration) indexed in one resources.arsc: large apps have a few
   * thousand (strings in about 100 locales, drawables in a dozen densities); each costs a record of ~100 bytes.
   */
  resourceTypeChunks: 16_384,
  /**
   * Entry slots read while resolving a manifest's resource references: one reference reads its entry in each
   * configuration of its type (hundreds at most), and a manifest has tens to hundreds of references.
   */
  resourceEntriesRead: 1_000_000,
  /** res/xml files opened to find an unresolved network security config: apps have a few xml resources. */
  networkConfigCandidates: 64,
  /** v1 (JAR) signature files read: one per signer, and real apps have one or two signers. */
  signatureFiles: 8,
  /** Certificates taken from one PKCS#7 file or v2/v3 signer list: a signer plus its chain is under 5. */
  certificatesPerFile: 16,
  /** Nesting of ASN.1 (X.509 and PKCS#7 nest about 10 deep); also bounds the walk of indefinite lengths. */
  derDepth: 32,

  /** Element nesting in compiled XML and plists: real manifests and Info.plists nest under 15 deep. */
  xmlDepth: 64,
  /** Elements in one compiled XML document: the largest real manifests have a few thousand. */
  xmlElements: 100_000,
  /** Attributes in one compiled XML document (each costs ~200 bytes of heap for 20 bytes of input). */
  xmlAttributes: 200_000,
  /** Characters of element text in one compiled XML document: only <domain> names use text, a few KB at most. */
  xmlText: 1024 * 1024,
  /**
   * Bytes of strings decoded from one string pool (each entry is decoded once, but crafted offsets can make
   * entries overlap): a manifest's strings total kilobytes, a resource table's a few megabytes.
   */
  stringPoolBytes: 16 * 1024 * 1024,

  /**
   * Values in a property list, counted as the tree a reader sees (a binary plist object referenced twice
   * counts twice): a real Info.plist has hundreds, a provisioning profile a few thousand (device lists).
   */
  plistValues: 100_000,
  /**
   * Bytes of strings and data decoded from one binary plist, and never more than the plist's own length. Data
   * objects and strings over 1 MB live outside the V8 heap, where the worker's heap limit does not see them. Each
   * offset is decoded once and a real plist stores its objects side by side, so what it decodes is less than its
   * length; only crafted offsets that make objects overlap decode more. The value is LIMITS.plist, the largest
   * plist read.
   */
  plistDecodedBytes: 8 * 1024 * 1024,

  /**
   * Load commands walked in one Mach-O slice: a real iOS executable has 30 to 80 (one per linked dylib plus
   * segments); each is 8 bytes read, and the count bounds the walk of a header that claims millions.
   */
  machoLoadCommands: 4096,
  /** Bytes of load commands (sizeofcmds) read per slice: Xcode's header pad keeps them under 64 KiB. */
  machoLoadCommandBytes: 1024 * 1024,
  /** Architectures in a fat Mach-O: App Store binaries have one or two (arm64, arm64e), old ones three. */
  machoFatArchs: 16,
  /**
   * Bytes of one embedded code signature (LC_CODE_SIGNATURE) read whole: its CodeDirectories hold 20 + 32 bytes per
   * 4 KiB page, so a 500 MB executable needs about 6.5 MB, plus the CMS blob and entitlements (kilobytes).
   */
  codeSignatureBytes: 16 * 1024 * 1024,
  /**
   * Mach-O symbol table entries read for hardening facts, over every slice of one file (16 bytes each): an App Store
   * executable is stripped to its exported and imported names, tens of thousands even in the largest apps; LC_DYSYMTAB
   * lets the reader take the imported ones alone. 1,048,576 entries are 16 MiB, read once per file.
   */
  machoSymbols: 1_048_576,
  /**
   * Mach-O string table bytes read for hardening facts, over every slice of one file: a stripped executable's names
   * total a few MB; the table is held while its imported names are looked up.
   */
  machoStringBytes: 16 * 1024 * 1024,
  /** Blobs in one signature SuperBlob: codesign writes at most seven (CodeDirectories, requirements, entitlements, CMS). */
  codeSignatureBlobs: 64,
  /**
   * Files of a bundle compared with its seal (CodeResources files2 entries, and files in the .app): bounded by
   * zipEntries too; this caps the entries of a crafted CodeResources that lists more files than any archive holds.
   */
  sealedFiles: 65_535,
  /**
   * Nested bundles inside nested bundles (an app holds extensions and frameworks, an extension frameworks): real
   * apps nest three deep; each level is checked as a whole bundle.
   */
  sealNesting: 8,
  /**
   * Characters of a bundle path compared with the seal: iOS's PATH_MAX is 1024, so no installed file has a longer
   * one, and each path's directories are walked (a 64 KB zip name of single-letter directories has 32,000).
   */
  sealPathLength: 1024,
  /** Rules of CodeResources rules2: Apple writes about ten; each costs a pass over every path. */
  sealRules: 64,
  /** Characters of one rules2 regular expression: Apple's longest is about 100. */
  sealRulePattern: 1024,
  /**
   * Work of matching every path against every rule, counted as matcher-state steps on paths not seen before
   * (a linear-time matcher, so a hostile pattern cannot backtrack; this bounds the product of paths, rules and
   * pattern size). Apple's rules over 60,000 paths take under 20 million.
   */
  sealRuleSteps: 200_000_000,
  /**
   * Bytes hashed per bundle file (every file is hashed while it streams, never held): the largest files in real
   * apps (ML models, video, game assets) are a few hundred MB, under the 4 GiB of a non-Zip64 entry anyway.
   */
  sealFileBytes: 4 * 1024 * 1024 * 1024,

  // Native libraries (lib/<abi>/*.so, ELF). Each library is streamed once (its SHA-256 and the few ranges the parse
  // needs); none is held whole.
  /** Libraries analysed per package: large apps ship 50 to 100 per ABI, in up to four ABIs. */
  nativeLibraries: 2048,
  /** Bytes of one library, hashed as they stream: the largest real ones (game engines, browsers) are 100-200 MB. */
  nativeLibraryBytes: 1024 * 1024 * 1024,
  /**
   * Bytes of all libraries of a package together, as their entries declare them (a deflated entry inflates no further
   * than it declares): a 300 MB APK with four ABIs holds under 1 GB; a bomb of highly compressible libraries stops here.
   */
  nativeLibraryTotalBytes: 4 * 1024 * 1024 * 1024,
  /** Program headers read per library (e_phnum): linkers write 8 to 15; PN_XNUM (65,535) and beyond are refused. */
  elfProgramHeaders: 256,
  /** Dynamic entries walked before DT_NULL: real libraries have 30 to 80 (one per DT_NEEDED plus ~30). */
  elfDynamicEntries: 4096,
  /**
   * Dynamic symbols walked per library (only the imported ones' names are kept): libraries built with default
   * visibility (game engines) export up to ~150,000; each entry is 16 or 24 bytes, read in small chunks.
   */
  elfDynamicSymbols: 1_000_000,
  /** Bytes of the dynamic string table (DT_STRSZ) held while names are read: real ones are under a few MB. */
  elfDynstrBytes: 16 * 1024 * 1024,
  /** Section headers walked (only when no hash table gives the dynamic symbol count): real libraries have ~30. */
  elfSectionHeaders: 4096,

  // Secrets in package contents (src/scan/static/dex, src/scan/static/secrets): what is read, and how much.
  /**
   * Bytes of one DEX file, read whole (string_ids point anywhere in it). d8 splits an app into classes.dex,
   * classes2.dex, ... long before 64K methods, so real files are 1 to 12 MB; one file is held at a time.
   */
  dexFileBytes: 64 * 1024 * 1024,
  /** DEX files read per package: large multidex apps ship 10 to 30 (classes.dex to classes30.dex). */
  dexFiles: 128,
  /** string_ids of one DEX file: a full 12 MB file has about 200,000; each costs 4 bytes of the file. */
  dexStrings: 4_000_000,
  /**
   * Bytes of MUTF-8 decoded from one DEX file: the string data is at most the file, but crafted string_ids can
   * point many times at one long string; twice the largest file bounds the work of such a file.
   */
  dexDecodedBytes: 128 * 1024 * 1024,
  /** Java packages listed from DEX type descriptors: apps with many SDKs have a few thousand. */
  dexTypePackages: 20_000,
  /**
   * Text files (assets/**, res/raw/**, iOS plists, JSON and .strings) searched per package: games and React Native
   * apps ship thousands of asset files; binary ones (images, audio, fonts) are skipped by name before this count.
   */
  secretTextFiles: 10_000,
  /**
   * Bytes searched in one text file, streamed with an overlap (never held whole): a React Native bundle is 1 to
   * 20 MB; a larger file is searched up to here only.
   */
  secretTextFileBytes: 64 * 1024 * 1024,
  /** Bytes searched across every text file of a package: inflating and matching 512 MB takes a few seconds. */
  secretTextBytes: 512 * 1024 * 1024,
  /** Files named per secret finding: the first ones are enough to find and rotate the key. */
  secretFilesNamed: 10,

  /** Characters of a finding's detail: a finding quotes package text, and 1 KB is enough to act on. */
  findingDetail: 1024,
  /** Characters of a finding's title (titles may name a domain or component from the package). */
  findingTitle: 200,
  /** Findings kept per scan, most severe first: a package listing 100,000 insecure domains says nothing more after 100. */
  findings: 100,
} as const;

export type LimitName = keyof typeof LIMITS;
