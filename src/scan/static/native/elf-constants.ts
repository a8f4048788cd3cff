// The numbers of the ELF specification (System V gABI, and the GNU extensions every Android linker writes) that the
// reader looks at. Names follow <elf.h>, so a value can be checked against readelf's output.

export const PT_LOAD = 1;
export const PT_DYNAMIC = 2;
export const PT_GNU_STACK = 0x6474e551;
export const PT_GNU_RELRO = 0x6474e552;
export const PF_X = 1;

export const DT_NULL = 0;
export const DT_NEEDED = 1;
export const DT_HASH = 4;
export const DT_STRTAB = 5;
export const DT_SYMTAB = 6;
export const DT_STRSZ = 10;
export const DT_SYMENT = 11;
export const DT_RPATH = 15;
export const DT_TEXTREL = 22;
export const DT_BIND_NOW = 24;
export const DT_RUNPATH = 29;
export const DT_FLAGS = 30;
export const DT_GNU_HASH = 0x6ffffef5;
export const DT_FLAGS_1 = 0x6ffffffb;
export const DF_TEXTREL = 0x4;
export const DF_BIND_NOW = 0x8;
export const DF_1_NOW = 0x1;

export const SHT_DYNSYM = 11;
export const SHN_UNDEF = 0;
export const STT_FUNC = 2;

/** e_machine values with the name readelf prints for them; the ABIs Android ships come first. */
export const MACHINES: Readonly<Record<number, string>> = {
  183: 'AArch64', // EM_AARCH64: arm64-v8a
  40: 'ARM', // EM_ARM: armeabi-v7a (and the retired armeabi)
  3: 'Intel 80386', // EM_386: x86
  62: 'Advanced Micro Devices X86-64', // EM_X86_64: x86_64
  243: 'RISC-V', // EM_RISCV: riscv64
  8: 'MIPS R3000', // EM_MIPS: mips, mips64 (dropped by NDK r17)
  2: 'Sparc',
  20: 'PowerPC',
  21: 'PowerPC64',
  22: 'IBM S/390',
  43: 'Sparc v9',
  258: 'LoongArch',
};

/** The e_machine each Android ABI's libraries carry (lib/<abi>/ in an APK). */
export const ABI_MACHINE: Readonly<Record<string, number>> = {
  'arm64-v8a': 183,
  'armeabi-v7a': 40,
  armeabi: 40,
  x86: 3,
  x86_64: 62,
  riscv64: 243,
  mips: 8,
  mips64: 8,
};

export function machineName(machine: number): string {
  return MACHINES[machine] ?? `machine ${machine}`;
}
