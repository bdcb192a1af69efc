/** Public surface of the privacy module. */
export {
  DETECTORS,
  DETECTOR_NAMES,
  KINDS,
  RulesFileError,
  findAll,
  findAllInField,
  loadRulesFile,
  parseRules,
  type CustomRule,
  type Finding,
  type Kind,
  type PrivacyOptions,
} from './detectors.js';
export {
  redactJsonString,
  redactText,
  redactValue,
  redactionMarker,
  scanValue,
  type PathFinding,
  type RedactedText,
  type RedactedValue,
  type RedactionCounts,
} from './redact.js';
export { maskPreview } from './mask.js';
