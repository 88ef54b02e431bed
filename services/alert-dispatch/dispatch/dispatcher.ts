import { roundMs } from '../../lib/http/index.js';
import type { Logger } from '../../lib/log/index.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { DispatchTool } from '../tools/tool.js';
import { AgentUnavailable, type ToolAgent } from './agent.js';
import { isoWithOffset, systemClock, type Clock } from './clock.js';
import type { DedupGate } from './dedup.js';
import type { EscalationCounter } from './escalation-counter.js';
import { resolvePlan, type SubscriptionDefaults } from './resolve-tools.js';
import { DEFAULT_RETRY_POLICY, runTool, type RetryPolicy } from './run-tool.js';
import type { ActionRequest, DispatchResult, ToolOutcome, ToolRunResult } from './types.js';

/** Where dispatch results are announced (the SSE/WebSocket event hub). */
export interface EventPublisher {
  publish(event: string, data: unknown): void;
}

/** Looks up the subscription entry of an alert name. */
export interface SubscriptionLookup {
  find(alertName: string): SubscriptionDefaults | undefined;
}

/** Collaborators of the dispatcher. */
export interface DispatcherDeps {
  registry: ToolRegistry;
  subscriptions: SubscriptionLookup;
  dedup: DedupGate;
  /** Counts consecutive alerts for escalations with `count_window_seconds` (shared by every replica when on Redis). */
  escalationCounter?: EscalationCounter;
  events: EventPublisher;
  logger: Logger;
  /** Present in agent mode (LLM_BASE_URL configured). */
  agent?: ToolAgent;
  policy?: RetryPolicy;
  clock?: Clock;
}

const SNAPSHOT_TOOL = 'capture_snapshot';

/** Adds a tool run to the result: its name to actions_taken, or its error to failed_tools; and its outcome. */
function record(result: DispatchResult, run: ToolRunResult): void {
  if (run.success) {
    result.actions_taken.push(run.name);
    result.tool_outcomes.push({ name: run.name, outcome: 'succeeded' });
  } else {
    const error = run.error ?? 'failed';
    result.failed_tools.push({ name: run.name, error });
    result.tool_outcomes.push({ name: run.name, outcome: 'failed', reason: error });
  }
}

/** Every requested tool without an outcome yet is `skipped` for `reason`; outcomes are put in requested order. */
function settleOutcomes(result: DispatchResult, reason: string): void {
  const known = result.tool_outcomes;
  // One tool that ran (the common case) is in order already.
  if (known.length === 1 && result.tools_requested.length === 1) return;
  result.tool_outcomes = result.tools_requested.map(
    (name): ToolOutcome => known.find((o) => o.name === name) ?? { name, outcome: 'skipped', reason },
  );
}

/** Stamps the dispatch duration (0.1 ms resolution) and returns the result. */
function finish(result: DispatchResult, started: number): DispatchResult {
  result.duration_ms = roundMs(performance.now() - started);
  return result;
}

/**
 * The dispatch pipeline: answer NO and dedup hits stop at once; otherwise the tool list is resolved (request,
 * subscription, fallback; plus escalation), `capture_snapshot` runs first, then the agent (or the rules) picks the
 * rest, which run concurrently. Every processed alert except a dedup hit is published as `alert_action`.
 */
export class Dispatcher {
  private readonly policy: RetryPolicy;
  private readonly clock: Clock;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly shutdown = new AbortController();

  constructor(private readonly deps: DispatcherDeps) {
    this.policy = deps.policy ?? DEFAULT_RETRY_POLICY;
    this.clock = deps.clock ?? systemClock;
  }

  /** Dispatches one request and resolves with its result once every tool has finished. */
  dispatch(request: ActionRequest): Promise<DispatchResult> {
    const running = this.run(request);
    this.inFlight.add(running);
    // Inline callbacks, not named local functions: tsx/esbuild wraps each named closure in a `__name` call.
    running.then(
      () => this.inFlight.delete(running),
      () => this.inFlight.delete(running),
    );
    return running;
  }

  /** Fires when a drain's grace has run out: tool attempts, back-offs and model calls end, no tool starts. */
  get signal(): AbortSignal {
    return this.shutdown.signal;
  }

  /**
   * Waits for the running dispatches (and those the intake queue starts meanwhile); after `graceMs` the shutdown
   * signal aborts what still runs, which then settles promptly.
   */
  async drain(graceMs = 5000): Promise<void> {
    const timer = setTimeout(() => this.shutdown.abort(new Error('service shutting down')), graceMs);
    timer.unref();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    clearTimeout(timer);
  }

  private async run(arrived: ActionRequest): Promise<DispatchResult> {
    const started = performance.now();
    const { logger } = this.deps;
    const subscription = this.deps.subscriptions.find(arrived.alert_name);
    const countWindow = (arrived.escalation ?? subscription?.escalation)?.count_window_seconds;
    // Only escalations that ask for the service's count wait for it; every other alert takes no extra turn.
    const received = countWindow === undefined ? arrived : await this.counted(arrived, countWindow);
    const plan = resolvePlan(received, subscription);
    // Tools, the agent and the event see the effective escalation, threshold included.
    const request: ActionRequest =
      received.escalated === plan.escalated ? received : { ...received, escalated: plan.escalated };
    const result: DispatchResult = {
      event_id: request.event_id,
      source_id: request.source_id,
      alert_name: request.alert_name,
      actions_taken: [],
      snapshot_path: null,
      duration_ms: 0,
      timestamp: isoWithOffset(this.clock()),
      suppressed: null,
      mode: 'none',
      tools_requested: plan.tools,
      failed_tools: [],
      tool_outcomes: [],
    };

    if (request.answer === 'NO') {
      result.suppressed = 'answer_no';
      settleOutcomes(result, 'answer is NO');
      this.publish(request, plan.escalated, finish(result, started));
      return result;
    }
    const checked = this.deps.dedup.check(request, plan.dedup);
    // The in-memory store answers at once: no extra turn for the common case.
    let verdict = checked instanceof Promise ? await checked : checked;
    // A duplicate of an alert still being dispatched waits for that outcome: only a delivered alert suppresses.
    while (verdict.pending) {
      await verdict.pending;
      verdict = await this.deps.dedup.check(request, plan.dedup);
    }
    if (verdict.duplicate) {
      logger.info('duplicate alert suppressed', { event_id: request.event_id, alert_name: request.alert_name });
      result.suppressed = 'duplicate';
      settleOutcomes(result, 'duplicate inside the dedup window');
      return finish(result, started);
    }
    try {
      let snapshotTool: DispatchTool | undefined;
      const rest: DispatchTool[] = [];
      for (const name of plan.tools) {
        const tool = this.deps.registry.get(name);
        if (!tool) {
          logger.warn('unknown tool skipped', { tool: name, event_id: request.event_id });
          result.tool_outcomes.push({ name, outcome: 'unavailable', reason: 'unknown tool' });
        } else if (!tool.runnable(plan.toolArguments[name] ?? {})) {
          logger.warn('disabled tool skipped', {
            tool: name,
            event_id: request.event_id,
            requires_env: tool.requiresEnv,
          });
          result.tool_outcomes.push({
            name,
            outcome: 'unavailable',
            reason: `disabled: set ${tool.requiresEnv.join(', ')}`,
          });
        } else if (tool.name === SNAPSHOT_TOOL) {
          snapshotTool = tool;
        } else {
          rest.push(tool);
        }
      }
      if (snapshotTool) {
        const r = await this.runOne(snapshotTool, plan.toolArguments[SNAPSHOT_TOOL] ?? {}, request, result);
        record(result, r);
        if (r.success && typeof r.output?.snapshot_path === 'string') result.snapshot_path = r.output.snapshot_path;
      }

      let selected = rest.map((tool) => ({ tool, args: plan.toolArguments[tool.name] ?? {} }));
      result.mode = 'rules';
      if (this.deps.agent && rest.length > 0) {
        try {
          const chosen = await this.deps.agent.choose(request, rest, result.snapshot_path, this.shutdown.signal);
          selected = chosen.map((c) => {
            const tool = rest.find((t) => t.name === c.name)!;
            const configured = plan.toolArguments[tool.name] ?? {};
            // Built-in arguments are operator configuration (a webhook URL): the model may only fill MCP arguments.
            const args = tool.source === 'mcp' ? { ...c.arguments, ...configured } : configured;
            return { tool, args };
          });
          result.mode = 'agent';
          logger.info('agent chose tools', { event_id: request.event_id, tools: chosen.map((c) => c.name) });
        } catch (err) {
          const why = err instanceof AgentUnavailable ? err.message : String(err);
          logger.warn('agent unavailable, using rule-based dispatch', { event_id: request.event_id, reason: why });
        }
      }
      // One tool (the common case) needs no Promise.all around it.
      const outcomes =
        selected.length === 1
          ? [await this.runOne(selected[0].tool, selected[0].args, request, result)]
          : await Promise.all(selected.map(({ tool, args }) => this.runOne(tool, args, request, result)));
      // Keep the resolved order in actions_taken, not completion order.
      for (const outcome of outcomes) record(result, outcome);
      settleOutcomes(result, 'not chosen by the agent');
      finish(result, started);
      this.publish(request, plan.escalated, result);
      return result;
    } finally {
      // Delivered = at least one tool succeeded; anything less leaves the sender's retry free to run.
      const settled =
        verdict.key === null ? undefined : this.deps.dedup.settle(verdict.key, result.actions_taken.length > 0);
      if (settled) await settled;
    }
  }

  /**
   * `request` with the service's count of consecutive alerts when that is larger than the sender's; an alert
   * answered NO starts the count again. The shared count unknown (an outage): the sender's count stands.
   */
  private async counted(request: ActionRequest, windowSeconds: number): Promise<ActionRequest> {
    const counter = this.deps.escalationCounter;
    if (!counter) return request;
    if (request.answer === 'NO') {
      await counter.reset(request);
      return request;
    }
    const count = await counter.count(request, windowSeconds);
    return count !== undefined && count > request.consecutive_count
      ? { ...request, consecutive_count: count }
      : request;
  }

  private runOne(
    tool: DispatchTool,
    args: Record<string, unknown>,
    request: ActionRequest,
    result: DispatchResult,
  ): Promise<ToolRunResult> {
    return runTool(tool, {
      request,
      args,
      snapshotPath: result.snapshot_path,
      logger: this.deps.logger,
      policy: this.policy,
      signal: this.shutdown.signal,
    });
  }

  private publish(request: ActionRequest, escalated: boolean, result: DispatchResult): void {
    try {
      this.deps.events.publish('alert_action', {
        event_id: result.event_id,
        source_id: result.source_id,
        alert_name: result.alert_name,
        answer: request.answer,
        reason: request.reason,
        actions_taken: result.actions_taken,
        tools_requested: result.tools_requested,
        // Beyond the contract's fields: what became of each requested tool, so none vanishes from the stream.
        tool_outcomes: result.tool_outcomes,
        consecutive_count: request.consecutive_count,
        escalated,
        snapshot_path: result.snapshot_path,
        payload_kinds: request.payloads.map((p) => p.kind),
        duration_ms: result.duration_ms,
        timestamp: result.timestamp,
      });
    } catch (err) {
      this.deps.logger.error('publishing alert_action failed', { event_id: result.event_id, error: String(err) });
    }
  }
}
