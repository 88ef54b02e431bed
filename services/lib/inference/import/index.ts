/** Offline model import: TFJS graph models shipped in npm packages → ONNX model directories with manifests. */
export { importDefaultModels, type ImportOptions } from './import-models.js';
export { defaultModels, type DefaultModelDefinition } from './default-models.js';
export { multiPoseModel } from './multipose-model.js';
export { PackageIntegrityError, type PackedPackage } from './packed-package.js';
export { convertTfjsGraph, type ConvertOptions, type InputMapping, type OutputMapping } from './convert.js';
export { readTfjsModel } from './read-tfjs-model.js';
export { decodeWeights } from './weights.js';
export { UnsupportedOpError } from './conversion-context.js';
export type { TfjsModel, TfjsModelJson, TfNode, WeightSpec, ConstTensor } from './tfjs-model.js';
