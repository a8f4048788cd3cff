export { analyzePackage, type AnalyzeOptions, type StaticAnalysis } from './analyze-package';
