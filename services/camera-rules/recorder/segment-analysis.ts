/** One recording segment of the directory recorder: `<root>/YYYY-MM-DD/HH/<camera>/MM.SS.mp4`, times UTC. */
export interface Segment {
  camera: string;
  /** The segment's file. */
  file: string;
  /** Its start, Unix seconds. */
  start: number;
}

/** One object class seen in a segment: when (seconds into the segment) and, when known, where (source pixels). */
export interface SegmentDetection {
  label: string;
  /** Seconds into the segment of the sampled frames that show the class, ascending. */
  seen: number[];
  /** `[x1, y1, x2, y2]` of one crop of the class, when the search service embedded one. */
  box?: number[];
}

/** What the search service made of one segment: where it stored it and the classes its detector saw. */
export interface SegmentAnalysis {
  videoId: string;
  bucketName: string;
  /** One entry per class, in order of first appearance. */
  detections: SegmentDetection[];
  /** Why the search service refused the segment for good (not a video it reads): no video, no event. */
  refused?: string;
}

/** The search service refused the segment itself (a torn or foreign file): analysing it again would not help. */
export class SegmentRefusedError extends Error {}

/** Sends a new segment to search and reads back its detections (the directory recorder's source of events). */
export interface SegmentAnalyser {
  /** SegmentRefusedError when the segment's content is refused; any other error may pass with another try. */
  analyse(segment: Segment, signal?: AbortSignal): Promise<SegmentAnalysis>;
}
