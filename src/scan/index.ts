export type { Finding, Platform, Severity } from './model/types';
export { SEVERITIES } from './model/types';
export { GRADE_BANDS, SEVERITY_PENALTIES, UNANALYSED_FINDING_IDS, gradeForScore, scoreAndGrade, scoreFindings } from './score';
export { previewFindings, type PreviewMeta } from './preview';
export { analyzePackage, type AnalyzeOptions, type StaticAnalysis } from './static';
