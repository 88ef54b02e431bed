import type { FakeChatBehaviour } from '../../../test/support/fake-chat-completions.js';
import type { VlmVerdict } from '../vlm/vlm-confirmer.js';

/** The fake model's answer carrying `verdict` as the confirmer asks for it: bare JSON, or JSON in a ```json fence. */
export function verdictAnswer(verdict: VlmVerdict, options: { fenced?: boolean } = {}): FakeChatBehaviour {
  const json = JSON.stringify({
    confirmed: verdict.confirmed,
    confidence: verdict.confidence,
    reasoning: verdict.reasoning,
  });
  return { kind: 'content', content: options.fenced ? `\`\`\`json\n${json}\n\`\`\`` : json };
}
