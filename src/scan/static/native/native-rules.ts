import type { Finding, Severity } from '../../model/types';
import { PLAY_16KB_PAGES, inForce } from '../catalog/store-requirements';
import { PF_X, PT_GNU_RELRO, PT_GNU_STACK, PT_LOAD } from './elf-constants';
import type { ElfFacts } from './elf';

/** A library of the package as the rules see it: facts null when it is not an ELF file a loader would accept. */
export type AnalyzedLibrary = {
  path: string;
  abi: string;
  /** Where a stored (uncompressed) library's bytes start in the package; null when deflated. */
  storedOffset: number | null;
  facts: ElfFacts | null;
};

export type NativeRuleContext = { targetSdk: number; now: Date };

/** Libraries named in one finding's detail; the rest are counted. */
const LISTED = 8;
/** Page size Android 15+ devices may run with; Play requires libraries to support it. */
export const PAGE_16KB = 16384;
/** ABIs that run on 16 KB-page devices (Play's requirement names these two). */
const PAGE_16KB_ABIS = new Set(['arm64-v8a', 'x86_64']);

const STACK_PROTECTOR = ['__stack_chk_fail', '__stack_chk_guard'];
/**
 * FORTIFY heuristic. A library that copies or formats strings into buffers with these libc functions, built with
 * _FORTIFY_SOURCE, calls the `__*_chk` variant wherever the compiler knows the destination's size, which any real
 * user of them has somewhere; so one of these imported with no `__*_chk` import at all means the build did not
 * fortify. memcpy, memmove and memset are left out on purpose: compilers emit calls to them for struct copies and
 * zeroing in any language (C++, Rust), where no FORTIFY variant would appear, and counting them would flag
 * libraries that have nothing to fortify.
 */
export const FORTIFIABLE = new Set([
  'strcpy', 'strcat', 'strncpy', 'strncat', 'stpcpy', 'stpncpy',
  'sprintf', 'vsprintf', 'snprintf', 'vsnprintf', 'gets', 'fgets',
]);
const CHK = /^__[A-Za-z0-9_]+_chk$/;

type Check = (lib: AnalyzedLibrary & { facts: ElfFacts }) => string | null;

/** What each rule says about one library: a short reason when it fires, null when it does not (or cannot tell). */
export const NATIVE_CHECKS: Record<string, Check> = {
  'android.native-executable-stack': ({ facts }) => {
    const stack = facts.segments.find((s) => s.type === PT_GNU_STACK);
    return !stack ? 'no PT_GNU_STACK' : stack.flags & PF_X ? 'PT_GNU_STACK is RWX' : null;
  },
  'android.native-text-relocations': ({ facts }) => (facts.dynamic?.textrel ? 'DT_TEXTREL' : null),
  'android.native-no-stack-protector': ({ facts }) => {
    if (!facts.symbols || !hasCode(facts)) return null;
    return facts.symbols.imports.some((n) => STACK_PROTECTOR.includes(n)) ? null : 'no __stack_chk_fail';
  },
  'android.native-no-relro': ({ facts }) => (facts.dynamic && !facts.segments.some((s) => s.type === PT_GNU_RELRO) ? 'no PT_GNU_RELRO' : null),
  'android.native-partial-relro': ({ facts }) =>
    facts.dynamic && facts.segments.some((s) => s.type === PT_GNU_RELRO) && !facts.dynamic.bindNow ? 'RELRO without BIND_NOW' : null,
  'android.native-no-fortify': ({ facts }) => {
    const imports = facts.symbols?.imports ?? [];
    const plain = imports.filter((n) => FORTIFIABLE.has(n));
    return plain.length > 0 && !imports.some((n) => CHK.test(n)) ? `imports ${plain.slice(0, 3).join(', ')}, no __*_chk` : null;
  },
  'android.native-rpath': ({ facts }) => {
    const d = facts.dynamic;
    if (!d || (d.rpath === null && d.runpath === null)) return null;
    return [d.rpath !== null ? `RPATH ${d.rpath}` : '', d.runpath !== null ? `RUNPATH ${d.runpath}` : ''].filter(Boolean).join(', ');
  },
  'android.native-16kb-alignment': ({ abi, facts, storedOffset }) => {
    if (!PAGE_16KB_ABIS.has(abi)) return null;
    const aligns = facts.segments.filter((s) => s.type === PT_LOAD && s.align < PAGE_16KB).map((s) => s.align);
    const reasons = [
      aligns.length > 0 ? `PT_LOAD aligned to ${Math.min(...aligns)} bytes` : '',
      storedOffset !== null && storedOffset % PAGE_16KB !== 0 ? `stored at zip offset ${storedOffset}, not a multiple of 16384` : '',
    ].filter(Boolean);
    return reasons.length > 0 ? reasons.join('; ') : null;
  },
};

/** A library with code of its own: an executable segment with bytes, and functions it defines. */
function hasCode(facts: ElfFacts): boolean {
  return facts.segments.some((s) => s.type === PT_LOAD && (s.flags & PF_X) !== 0 && s.filesz > 0) && (facts.symbols?.definedFunctions ?? 0) > 0;
}

type RuleText = { title: string; fix: string; severity: (ctx: NativeRuleContext) => Severity };

const TEXT: Record<string, RuleText> = {
  'android.native-executable-stack': {
    severity: () => 'high',
    title: 'Native library with an executable stack',
    fix: 'Link with `-Wl,-z,noexecstack` (CMake: `target_link_options(<lib> PRIVATE -Wl,-z,noexecstack)`; ndk-build: `LOCAL_LDFLAGS += -Wl,-z,noexecstack`), and give assembly files `.section .note.GNU-stack,"",%progbits` so they do not ask for one. For a prebuilt library, ask its vendor for a rebuilt one.',
  },
  'android.native-text-relocations': {
    severity: () => 'high',
    title: 'Native library with text relocations',
    fix: 'Compile every object as position-independent code (`-fPIC`, the NDK default; remove `-fno-pic`/`-mno-pic` and fix assembly that uses absolute addresses) and link with `-Wl,-z,text` so the linker refuses text relocations. Android 6.0+ refuses to load such a library in apps targeting API 23 or later.',
  },
  'android.native-no-stack-protector': {
    severity: () => 'medium',
    title: 'Native library built without a stack protector',
    fix: 'Compile with `-fstack-protector-strong` (the NDK default): remove `-fno-stack-protector` from CMAKE_C_FLAGS/CMAKE_CXX_FLAGS, `APP_CFLAGS` or `LOCAL_CFLAGS`.',
  },
  'android.native-no-relro': {
    severity: () => 'medium',
    title: 'Native library without RELRO',
    fix: 'Link with `-Wl,-z,relro,-z,now` (the NDK default): remove `-Wl,-z,norelro` from the linker flags (CMAKE_SHARED_LINKER_FLAGS, `LOCAL_LDFLAGS`).',
  },
  'android.native-partial-relro': {
    severity: () => 'low',
    title: 'Native library with partial RELRO (no BIND_NOW)',
    fix: 'Link with `-Wl,-z,now` as well as `-Wl,-z,relro` (the NDK default): remove `-Wl,-z,lazy` from the linker flags.',
  },
  'android.native-no-fortify': {
    severity: () => 'low',
    title: 'Native library built without FORTIFY',
    fix: 'Compile with optimisation and `-D_FORTIFY_SOURCE=2` (the NDK toolchain sets it; remove `-U_FORTIFY_SOURCE` or `-D_FORTIFY_SOURCE=0` from CMAKE_C_FLAGS, `APP_CFLAGS` or `LOCAL_CFLAGS`), so string and format calls are checked against the buffer size at run time.',
  },
  'android.native-rpath': {
    severity: () => 'low',
    title: 'Native library with RPATH/RUNPATH',
    fix: 'Link without `-Wl,-rpath`/`-Wl,--enable-new-dtags` (CMake: `set(CMAKE_SKIP_RPATH TRUE)` or `SKIP_BUILD_RPATH`): Android loads an app\'s libraries from its own library directory, and a search path can point the loader at a directory another app or user can write.',
  },
  'android.native-16kb-alignment': {
    severity: ({ targetSdk, now }) => {
      const req = inForce(PLAY_16KB_PAGES, now);
      return req && targetSdk >= req.minTargetSdk ? 'high' : 'medium';
    },
    title: 'Native library not aligned for 16 KB pages',
    fix: 'Rebuild with NDK r28 or later (16 KB by default) or link with `-Wl,-z,max-page-size=16384`; package with AGP 8.5.1 or later, which 16 KB-aligns stored libraries, keeping `packaging { jniLibs { useLegacyPackaging = false } }`; check with `zipalign -c -P 16 -v 4 app.apk`. Prebuilt libraries need a rebuilt version from their vendor.',
  },
};

/** One finding per rule that fires, naming each library (path, ABI and why), the first LISTED of them. */
export function nativeFindings(libraries: readonly AnalyzedLibrary[], ctx: NativeRuleContext): Finding[] {
  const findings: Finding[] = [];
  for (const [id, check] of Object.entries(NATIVE_CHECKS)) {
    const hits: string[] = [];
    for (const lib of libraries) {
      if (!lib.facts) continue;
      const reason = check({ ...lib, facts: lib.facts });
      if (reason) hits.push(`${lib.path} (${lib.abi}: ${reason})`);
    }
    if (hits.length === 0) continue;
    const text = TEXT[id];
    const more = hits.length > LISTED ? `, and ${hits.length - LISTED} more` : '';
    const pages = id === 'android.native-16kb-alignment' ? pagesNote(ctx) : '';
    findings.push({
      id,
      severity: text.severity(ctx),
      title: text.title,
      detail: `${hits.length} ${hits.length === 1 ? 'library' : 'libraries'}: ${hits.slice(0, LISTED).join('; ')}${more}.${pages}`,
      fix: text.fix,
    });
  }
  return findings;
}

function pagesNote({ targetSdk, now }: NativeRuleContext): string {
  const req = inForce(PLAY_16KB_PAGES, now);
  const first = PLAY_16KB_PAGES[0];
  if (req && targetSdk >= req.minTargetSdk) return ` Google Play refuses uploads targeting API ${req.minTargetSdk}+ with such libraries since ${req.effective}; they fail to load on 16 KB-page devices.`;
  return ` They fail to load on 16 KB-page devices (Android 15+); Google Play requires 16 KB support for apps targeting API ${first.minTargetSdk}+ from ${first.effective}.`;
}
