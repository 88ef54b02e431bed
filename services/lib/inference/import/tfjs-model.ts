/** Attribute value as the TFJS converter writes it into model.json (strings are base64 or byte arrays). */
export interface TfAttr {
  s?: string | number[];
  i?: string | number;
  f?: number;
  b?: boolean;
  type?: string | number;
  shape?: { dim?: { size: string | number }[]; unknownRank?: boolean };
  list?: {
    s?: (string | number[])[];
    i?: (string | number)[];
    f?: number[];
    b?: boolean[];
    type?: (string | number)[];
  };
  tensor?: unknown;
}

/** One node of a TFJS graph model's GraphDef. */
export interface TfNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, TfAttr>;
}

/** One entry of a weights manifest group. */
export interface WeightSpec {
  name: string;
  shape: number[];
  dtype: 'float32' | 'int32' | 'bool' | string;
  quantization?: { dtype: 'uint8' | 'uint16' | 'float16'; min?: number; scale?: number; original_dtype?: string };
}

/** The parts of a TFJS `model.json` the converter reads. */
export interface TfjsModelJson {
  format?: string;
  modelTopology: { node: TfNode[]; library?: { function?: unknown[] } };
  weightsManifest: { paths: string[]; weights: WeightSpec[] }[];
  signature?: unknown;
  userDefinedMetadata?: unknown;
}

/** A TFJS graph model read into memory: topology, weight specs and all weight bytes concatenated in manifest order. */
export interface TfjsModel {
  json: TfjsModelJson;
  weightSpecs: WeightSpec[];
  weightData: Uint8Array;
}

/** Element types the converter tracks; TF int64 is narrowed to int32, as TFJS does. */
export type DType = 'float32' | 'int32' | 'bool';

/** A constant tensor decoded from the weights. */
export interface ConstTensor {
  dtype: DType;
  shape: number[];
  data: Float32Array | Int32Array | Uint8Array;
}
