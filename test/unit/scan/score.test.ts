// Protects: score = 100 minus documented penalties floored at 0; grades match ^[A-F][+-]?$;
// adding a finding never raises the score (checked over many seeded random finding sets, some holding a finding that
// says the package was not analysed); a scan that could not analyse its package scores 0 and grades F.
import { GRADE_BANDS, SEVERITY_PENALTIES, UNANALYSED_FINDING_IDS, gradeForScore, scoreAndGrade, scoreFindings } from '../../../src/scan/score';
import { SEVERITIES, type Severity } from '../../../src/scan/model/types';
import { mulberry32 } from '../../support/prng';

const finding = (severity: Severity, id = 'android.example') => ({ severity, id });
// Rule ids the random sets draw from: mostly ordinary findings, now and then one that says nothing was analysed.
const IDS = ['android.debuggable', 'ios.file-sharing', 'android.exported-component', 'ios.ats-arbitrary-loads', 'android.debug-certificate', 'package.unreadable', 'scan.incomplete'];

describe('scoreFindings', () => {
  it('is 100 with no findings and subtracts the documented penalty per finding', () => {
    expect(scoreFindings([])).toBe(100);
    for (const s of SEVERITIES) expect(scoreFindings([finding(s)])).toBe(100 - SEVERITY_PENALTIES[s]);
    expect(scoreFindings([finding('high'), finding('low')])).toBe(100 - 20 - 3);
  });

  it('never goes below 0', () => {
    expect(scoreFindings(Array.from({ length: 10 }, () => finding('critical')))).toBe(0);
  });

  it('orders penalties by severity', () => {
    expect(SEVERITY_PENALTIES.low).toBeLessThan(SEVERITY_PENALTIES.medium);
    expect(SEVERITY_PENALTIES.medium).toBeLessThan(SEVERITY_PENALTIES.high);
    expect(SEVERITY_PENALTIES.high).toBeLessThan(SEVERITY_PENALTIES.critical);
  });

  it('never rises when a finding is added (5000 random sets)', () => {
    const rand = mulberry32(20240611);
    for (let i = 0; i < 5000; i++) {
      const pick = () => finding(SEVERITIES[Math.floor(rand() * 4)], IDS[Math.floor(rand() * rand() * IDS.length)]);
      const set = Array.from({ length: Math.floor(rand() * 15) }, pick);
      const added = pick();
      const position = Math.floor(rand() * (set.length + 1));
      const bigger = [...set.slice(0, position), added, ...set.slice(position)];
      const before = scoreAndGrade(set);
      const after = scoreAndGrade(bigger);
      expect(after.score).toBeLessThanOrEqual(before.score);
      expect(bandIndex(after.grade)).toBeGreaterThanOrEqual(bandIndex(before.grade));
      if (before.score > 0) expect(after.score).toBeLessThan(before.score);
    }
  });
});

describe('unanalysed packages', () => {
  it('score 0 and grade F whatever their severity, alone or among other findings', () => {
    expect([...UNANALYSED_FINDING_IDS].sort()).toEqual(['package.unreadable', 'package.wrong-platform', 'scan.incomplete']);
    for (const id of UNANALYSED_FINDING_IDS) {
      for (const s of SEVERITIES) {
        expect(scoreAndGrade([finding(s, id)])).toEqual({ score: 0, grade: 'F' });
        expect(scoreAndGrade([finding('low'), finding(s, id)])).toEqual({ score: 0, grade: 'F' });
      }
    }
    // An ordinary high finding alone leaves a passing-looking score: only the unanalysed ids floor it.
    expect(scoreAndGrade([finding('high', 'android.debug-certificate')]).score).toBe(80);
  });
});

describe('gradeForScore', () => {
  it('gives every score 0..100 a grade of the API pattern, A+ only for 100', () => {
    for (let s = 0; s <= 100; s++) expect(gradeForScore(s)).toMatch(/^[A-F][+-]?$/);
    expect(gradeForScore(100)).toBe('A+');
    expect(gradeForScore(99)).toBe('A');
    expect(gradeForScore(0)).toBe('F');
  });

  it('is monotonic in the score', () => {
    for (let s = 1; s <= 100; s++) expect(bandIndex(gradeForScore(s))).toBeLessThanOrEqual(bandIndex(gradeForScore(s - 1)));
  });

  it('clamps out-of-range scores', () => {
    expect(gradeForScore(150)).toBe('A+');
    expect(gradeForScore(-5)).toBe('F');
  });
});

function bandIndex(grade: string): number {
  return GRADE_BANDS.findIndex((b) => b.grade === grade);
}
