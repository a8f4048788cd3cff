export type { Finding, FindingRef, FindingStatus, FindingSuppression, Platform, ScanFinding, Severity } from './model/types';
export { SEVERITIES } from './model/types';
export { GRADE_BANDS, SEVERITY_PENALTIES, UNANALYSED_FINDING_IDS, gradeForScore, scoreAndGrade, scoreFindings } from './score';
export { previewFindings, type PreviewMeta } from './preview';
export { analyzePackage, type AnalyzeOptions, type StaticAnalysis } from './static/analyze-package';
export { incompleteFinding, type IncompleteCause } from './static/package/incomplete';
export { fingerprintOf, previewPackage } from './fingerprint';
export { compareWithBaseline, MAX_LISTED_REFS, type Comparison } from './baseline';
export { SuppressionIndex, UNSUPPRESSIBLE_FINDING_IDS, type ActiveSuppression } from './suppress';
