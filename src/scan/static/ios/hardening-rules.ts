import type { Finding } from '../../model/types';
import { MH_EXECUTE, type SliceFacts } from '../macho/hardening';
import type { BundleBinary } from './bundle-binaries';

/** Imports that show the stack protector: clang's -fstack-protector(-strong/-all) check calls these. */
const STACK_CHK = ['___stack_chk_fail', '___stack_chk_guard'];
/**
 * Imports that show automatic reference counting. ARC code calls objc_storeStrong and the autoreleased-return-value
 * pair (manual retain/release code never does; clang's ARC emits them for every strong assignment and returned
 * object), objc_release/objc_retain for the rest; Swift's ARC calls swift_release/swift_retain.
 */
const ARC = ['_objc_release', '_objc_retain', '_objc_storeStrong', '_objc_autoreleaseReturnValue', '_objc_retainAutoreleasedReturnValue',
  '_objc_retainAutoreleaseReturnValue', '_objc_claimAutoreleasedReturnValue', '_objc_unsafeClaimAutoreleasedReturnValue', '_swift_release', '_swift_retain'];
/** The Objective-C message dispatcher: a binary that imports it runs Objective-C (or Swift calling Objective-C). */
const OBJC_MSGSEND = '_objc_msgSend';
/**
 * Below one page of machine code, a program may hold no function with a local array or an address-taken local, and
 * clang then emits no stack protector even with -fstack-protector-strong: absence proves nothing. Real apps and
 * frameworks have megabytes of code.
 */
export const MIN_CODE_FOR_STACK_PROTECTOR = 4096;
/** Files quoted in a finding; the rest are counted. */
const QUOTED = 8;

/** The imported names the hardening rules look at. */
export const HARDENING_SYMBOLS: readonly string[] = [...STACK_CHK, ...ARC, OBJC_MSGSEND];

/** ios.binary-no-pie, ios.binary-no-stack-protector and ios.binary-no-arc, each one finding naming every file and architecture. */
export function hardeningFindings(binaries: BundleBinary[]): Finding[] {
  const pick = (test: (s: SliceFacts) => boolean) => binaries.flatMap((b) => b.slices.filter(test).map((s) => `${b.path} (${s.arch})`));
  const findings: Finding[] = [];
  const noPie = pick((s) => s.filetype === MH_EXECUTE && !s.pie);
  if (noPie.length) findings.push({
    id: 'ios.binary-no-pie',
    severity: 'high',
    title: 'Executable is not position-independent (no PIE)',
    detail: `${list(noPie)}: MH_PIE is not set in the Mach-O header, so the executable loads at the same address every launch and address space layout randomisation does not protect it; a memory-corruption bug becomes a reliable exploit.`,
    fix: 'Build position-independent executables: remove -no_pie / -Wl,-no_pie from Other Linker Flags (OTHER_LDFLAGS) and keep Generate Position-Dependent Code (GCC_DYNAMIC_NO_PIC) set to No.',
  });
  const noSsp = pick((s) => s.codeBytes >= MIN_CODE_FOR_STACK_PROTECTOR && !STACK_CHK.some((n) => s.imports.includes(n)));
  if (noSsp.length) findings.push({
    id: 'ios.binary-no-stack-protector',
    severity: 'medium',
    title: 'Binary built without stack protector',
    detail: `${list(noSsp)}: the code imports neither ___stack_chk_fail nor ___stack_chk_guard, so no function checks a stack canary and a stack buffer overflow can overwrite return addresses undetected.`,
    fix: 'Compile with the stack protector: remove -fno-stack-protector from Other C Flags (OTHER_CFLAGS) and add -fstack-protector-strong; for a third-party framework, ask its vendor for a build with it.',
  });
  const noArc = pick((s) => (s.objcClasses || s.imports.includes(OBJC_MSGSEND)) && !ARC.some((n) => s.imports.includes(n)));
  if (noArc.length) findings.push({
    id: 'ios.binary-no-arc',
    severity: 'low',
    title: 'Objective-C code built without ARC',
    detail: `${list(noArc)}: the binary runs Objective-C but imports none of the runtime calls ARC emits (objc_release, objc_retain, objc_storeStrong, objc_retainAutoreleasedReturnValue) nor Swift's swift_release: memory is managed by hand, where a missed retain is a use-after-free.`,
    fix: 'Turn on ARC: set Objective-C Automatic Reference Counting (CLANG_ENABLE_OBJC_ARC) to Yes, or compile with -fobjc-arc; files that must stay manual take -fno-objc-arc individually in Build Phases › Compile Sources.',
  });
  return findings;
}

function list(items: string[]): string {
  const more = items.length - QUOTED;
  return items.slice(0, QUOTED).join(', ') + (more > 0 ? ` and ${more} more` : '');
}
