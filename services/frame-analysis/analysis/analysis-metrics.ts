import client from 'prom-client';

/** What the analyses count: answers by status and pattern, frames by validity, VLM calls by outcome. */
export class AnalysisMetrics {
  private readonly results = new client.Counter({
    name: 'frame_analysis_results_total',
    help: 'Answered analyses by status and reported pattern ("none" without one)',
    labelNames: ['status', 'pattern'],
    registers: [],
  });
  private readonly frames = new client.Counter({
    name: 'frame_analysis_frames_total',
    help: 'Submitted frames by outcome: analysed or rejected',
    labelNames: ['outcome'],
    registers: [],
  });
  private readonly vlmCalls = new client.Counter({
    name: 'frame_analysis_vlm_total',
    help: 'VLM confirmations by outcome: confirmed, rejected, unavailable (error, time-out or open circuit)',
    labelNames: ['outcome'],
    registers: [],
  });

  /** Adds the counters to a service's registry (the one `/metrics` serves). */
  register(registry: client.Registry): void {
    registry.registerMetric(this.results);
    registry.registerMetric(this.frames);
    registry.registerMetric(this.vlmCalls);
  }

  /** Counts one answered analysis. */
  result(status: string, pattern: string | undefined): void {
    this.results.inc({ status, pattern: pattern ?? 'none' });
  }

  /** Counts the frames of one request. */
  framesSeen(analysed: number, rejected: number): void {
    if (analysed > 0) this.frames.inc({ outcome: 'analysed' }, analysed);
    if (rejected > 0) this.frames.inc({ outcome: 'rejected' }, rejected);
  }

  /** Counts one VLM confirmation. */
  vlm(outcome: 'confirmed' | 'rejected' | 'unavailable'): void {
    this.vlmCalls.inc({ outcome });
  }
}
